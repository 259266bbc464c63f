//===- ParsePtx.h - wgmma.mma_async read back from inline PTX --*- C++ -*-===//
//
// The inverse of the PTX emitter for one instruction: the configuration of a
// `wgmma.mma_async[.sp]` written as inline asm (by upstream's
// convert-nvvm-to-llvm, by Triton, by hand), so the rule table — equal to
// ptxas — judges it like an nvwgmma op.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_PTX_PARSEPTX_H
#define NVWGMMA_PTX_PARSEPTX_H

#include "nvwgmma/IR/Constraints.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include <optional>
#include <variant>

namespace mlir {
namespace nvwgmma {

/// One PTX instruction of an asm string: its mnemonic and operand tokens
/// (`[..]` and `{..}` groups whole); declarations, labels, `setp`, `mov`
/// and branches are skipped and a predicate guard (`@p`) dropped.
struct PtxStatement {
  llvm::StringRef mnemonic;
  llvm::SmallVector<llvm::StringRef, 8> operands;
};
llvm::SmallVector<PtxStatement> splitPtxStatements(llvm::StringRef text);

/// What an inline-asm wgmma.mma_async says: its configuration and the
/// types its operands have as nvwgmma op operands would (the accumulator
/// as a struct of its D registers, A as an i64 descriptor or a struct of
/// its fragment registers).
struct AsmMmaAsync {
  MmaAsyncConfig config;
  Type accType;
  Type aType;
};

/// Reads the first wgmma.mma_async of `op`; nullopt when it has none, a
/// RuleViolation (asm_c1) when it is not one of PTX's forms.
std::optional<std::variant<AsmMmaAsync, RuleViolation>>
parseMmaAsyncAsm(LLVM::InlineAsmOp op);

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_PTX_PARSEPTX_H
