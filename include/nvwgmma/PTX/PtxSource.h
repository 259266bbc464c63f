//===- PtxSource.h - PTX text as functions of instructions ------*- C++ -*-===//
//
// The syntax layer of the PTX checker and of the inline-asm readers: a PTX
// file (or an inline asm string) split into functions, brace scopes, labels
// and instructions, each with its line. Lenient by design: it must read any
// compiler's PTX (ptxas has already judged legality) and never fail on text
// that is not PTX; what it cannot read it skips.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_PTX_PTXSOURCE_H
#define NVWGMMA_PTX_PTXSOURCE_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include <memory>
#include <string>
#include <vector>

namespace mlir {
namespace nvwgmma {
namespace ptx {

/// One instruction: `@!%p1 mnemonic op0, {op1, ...}, [op2];`. Operands are
/// the top-level comma-separated pieces, `[..]` and `{..}` groups whole.
struct Instruction {
  llvm::StringRef guard; // "%p1" without '@' and '!'; empty if unguarded
  bool guardNegated = false;
  llvm::StringRef mnemonic;
  llvm::SmallVector<llvm::StringRef, 4> operands;
  unsigned line = 0;
  unsigned scope = 0; // index into Function::scopes
};

/// A `{ ... }` block of a function body (scope 0 is the body itself): the
/// registers and labels it declares shadow those of its parents, as in
/// inline asm blocks that each declare `.reg .pred p;` and a `waitLoop:`.
struct Scope {
  int parent = -1;
  llvm::StringMap<unsigned> registers; // `.reg .pred p, q;` (value unused)
  llvm::StringMap<unsigned> ranges;    // `.reg .b32 %r<10>;`: "%r" -> 10
  llvm::StringMap<unsigned> labels;    // label -> index of the instruction
  bool declares(llvm::StringRef name) const;
};

struct Function {
  /// The text (comments blanked) the StringRefs point into.
  std::shared_ptr<const std::string> storage;
  std::string name;
  bool entry = false; // .entry (a kernel), not .func
  /// The x extent `.maxntid` or `.reqntid` bounds %tid.x by; 0 if none.
  unsigned threadsX = 0;
  unsigned line = 0;
  std::vector<Instruction> body;
  std::vector<Scope> scopes;
};

/// Reads a PTX module: its `.entry`/`.func` definitions with their bodies.
std::vector<Function> parseModule(llvm::StringRef text);

/// Reads `text` as one function body (an inline asm string); its
/// instructions and scopes. Line numbers count from 1 in `text`.
Function parseBody(llvm::StringRef text);

} // namespace ptx
} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_PTX_PTXSOURCE_H
