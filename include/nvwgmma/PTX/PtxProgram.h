//===- PtxProgram.h - a PTX function's registers and CFG --------*- C++ -*-===//
//
// What the PTX checker's dataflow runs on: each instruction's registers by
// operand (scoped names made unique), what it writes, and the basic blocks
// with their successors from labels, branches, `ret` and `exit`.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_PTX_PTXPROGRAM_H
#define NVWGMMA_PTX_PTXPROGRAM_H

#include "nvwgmma/PTX/PtxSource.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include <optional>

namespace mlir {
namespace nvwgmma {
namespace ptx {

using Reg = unsigned;

struct Block {
  unsigned begin = 0, end = 0; // instructions [begin, end)
  llvm::SmallVector<unsigned, 2> succs;
};

class Program {
public:
  explicit Program(const Function &fn);

  const Function &function() const { return fn; }
  const Instruction &at(unsigned i) const { return fn.body[i]; }
  unsigned size() const { return fn.body.size(); }

  /// The registers named in operand `k` of instruction `i`, in order.
  llvm::ArrayRef<Reg> registers(unsigned i, unsigned k) const {
    return k < regs[i].size() ? llvm::ArrayRef<Reg>(regs[i][k])
                              : llvm::ArrayRef<Reg>();
  }
  /// Whether instruction `i` writes the registers of its first operand
  /// (`add %r1, ..`, `ld {%f1, %f2}, [..]`, `setp %p1|%p2, ..`), rather than
  /// only reading them (`st [..], ..`, `bra L`, `wgmma.fence`).
  bool writesFirstOperand(unsigned i) const;
  /// The instructions that write `r` (through their first operand).
  llvm::ArrayRef<unsigned> writers(Reg r) const {
    auto it = writerList.find(r);
    return it == writerList.end() ? llvm::ArrayRef<unsigned>()
                                  : llvm::ArrayRef<unsigned>(it->second);
  }
  /// The guard predicate's register, if the instruction has one.
  std::optional<Reg> guard(unsigned i) const { return guards[i]; }
  llvm::StringRef name(Reg r) const { return names[r]; }

  llvm::ArrayRef<Block> blocks() const { return blockList; }
  /// The block instruction `i` is in, and its index.
  const Block &blockOf(unsigned i) const { return blockList[blockIndex[i]]; }
  unsigned blockIndexOf(unsigned i) const { return blockIndex[i]; }
  /// The instruction a label names, as seen from instruction `i` (the
  /// innermost scope declaring it wins).
  std::optional<unsigned> label(unsigned i, llvm::StringRef name) const;
  /// The register a function-level name (`%tid`, `%r1`) has, if any
  /// instruction names it.
  std::optional<Reg> find(llvm::StringRef name) const {
    auto it = ids.find(name);
    return it == ids.end() ? std::nullopt : std::optional<Reg>(it->second);
  }

private:
  std::optional<Reg> resolve(llvm::StringRef token, unsigned scope);
  void buildBlocks();

  const Function &fn;
  std::vector<std::string> names;
  llvm::StringMap<Reg> ids;
  std::vector<llvm::SmallVector<llvm::SmallVector<Reg, 2>, 4>> regs;
  std::vector<std::optional<Reg>> guards;
  std::vector<Block> blockList;
  std::vector<unsigned> blockIndex; // by instruction
  llvm::DenseMap<Reg, llvm::SmallVector<unsigned, 1>> writerList;
};

/// The registers an operand token names (`%r1`, `[%rd2+8]`, `{%f1, %f2}`,
/// `%r3|%p1`), as the identifiers in it; `%tid.x`'s component not counted.
llvm::SmallVector<llvm::StringRef, 4> operandIdentifiers(llvm::StringRef op);

} // namespace ptx
} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_PTX_PTXPROGRAM_H
