//===- PtxEmitter.h - inline PTX text and operands, built together -*- C++ -*-//
//
// The PTX text of an instruction and its inline-asm operand list are produced
// by one object: `addInput` records an operand and returns the `$N` that the
// text must use, so text and operand order cannot drift apart. The result is
// value-free (a `PtxInstruction`), so the same text serves the lowerings, the
// Python `ptx` property and `nvwgmma-opt --nvwgmma-print-ptx`.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_PTX_PTXEMITTER_H
#define NVWGMMA_PTX_PTXEMITTER_H

#include "nvwgmma/IR/Constraints.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include <string>
#include <vector>

namespace mlir {
namespace nvwgmma {

/// Where the lowering takes an inline-asm operand's value from.
struct PtxOperandSource {
  enum Kind {
    Accumulator, ///< member `index` of the accumulator struct
    AFragment,   ///< member `index` of the A register fragment
    ADescriptor, ///< the A descriptor (i64)
    BDescriptor, ///< the B descriptor (i64)
    ScaleDValue, ///< the runtime i1 scale-d, widened to i32
    SparseMeta,  ///< the 32-bit sparsity metadata
    Immediate,   ///< the constant `index`
  };
  Kind kind;
  int64_t index = 0;
};

/// One inline-asm operand, in inline-asm order (outputs, then inputs).
struct PtxOperand {
  bool isOutput;
  std::string constraint;
  /// How the readable PTX names it: "%d0", "%descB", "1", ...
  std::string display;
  PtxOperandSource source;
};

/// A complete inline-PTX instruction with no SSA values attached.
struct PtxInstruction {
  std::string asmText;
  std::vector<PtxOperand> operands;

  /// The LLVM inline-asm constraint string: "=f,=f,0,1,l,l,n".
  std::string getConstraints() const;
  /// The text with each `$N` replaced by its operand's display name.
  std::string getReadable() const;
  unsigned getNumOutputs() const;
};

class PtxEmitter {
public:
  /// Adds an output register. All outputs must precede all inputs, as LLVM
  /// numbers them; returns the output's `$N`.
  std::string addOutput(llvm::StringRef constraint, llvm::StringRef display,
                        PtxOperandSource source);
  /// Adds an input tied to output `outputIndex` (a read-write register).
  void addTiedInput(unsigned outputIndex, PtxOperandSource source);
  /// Adds an input and returns the `$N` the text must use for it.
  std::string addInput(llvm::StringRef constraint, llvm::StringRef display,
                       PtxOperandSource source);
  /// Adds an immediate input ("n") and returns its `$N`.
  std::string addImmediate(int64_t value);

  llvm::raw_ostream &text() { return os; }
  PtxInstruction finish() &&;

private:
  std::string placeholder(size_t index) const;

  PtxInstruction inst;
  llvm::raw_string_ostream os{inst.asmText};
  bool sawInput = false;
};

/// Builds the inline PTX of a legal mma_async (dense or sparse) configuration.
/// For every variant upstream nvvm.wgmma.mma_async covers, the text and
/// constraints are byte-identical to upstream's `--convert-nvvm-to-llvm`.
PtxInstruction buildMmaAsyncPtx(const MmaAsyncConfig &config);

/// The PTX of any verified nvwgmma op (fence, commit_group, wait_group have
/// no operands); nullopt for other ops.
std::optional<PtxInstruction> buildPtx(Operation *op);

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_PTX_PTXEMITTER_H
