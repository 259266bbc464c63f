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
#include <array>
#include <optional>
#include <variant>

namespace mlir {
namespace nvwgmma {

/// One PTX instruction of an asm string: its mnemonic and operand tokens
/// (`[..]` and `{..}` groups whole), read by ptx::parseBody; declarations,
/// labels, `setp`, `mov` and branches are skipped and a predicate guard
/// (`@p`) dropped.
struct PtxStatement {
  llvm::StringRef mnemonic;
  llvm::SmallVector<llvm::StringRef, 8> operands;
};
llvm::SmallVector<PtxStatement> splitPtxStatements(llvm::StringRef text);

/// An inline asm's operands by PTX number: LLVM numbers the outputs first
/// ($0 .. $n-1, the members of the op's result), then the op's operands; a
/// constraint that is a number ties an input to that output. Clobbers
/// (`~{...}`) number nothing.
class PtxAsmOperands {
public:
  PtxAsmOperands(llvm::StringRef constraints, ValueRange operands);

  unsigned numOutputs() const { return outputs; }
  /// The constraint of `$n` ("" past the end).
  llvm::StringRef constraint(unsigned n) const {
    return n < constraints.size() ? constraints[n] : "";
  }
  /// The op operand `$n` (or the token `$n`, `[$n]`) names; null for an
  /// output or anything else.
  Value operand(unsigned n) const;
  Value operand(llvm::StringRef token) const;
  /// A literal, or the constant an "n" (immediate) operand is given.
  std::optional<int64_t> immediate(llvm::StringRef token) const;
  /// The input tied to each output, by output number (null if none).
  llvm::SmallVector<Value, 4> tiedByOutput() const;
  /// The inputs tied to some output, in operand order.
  llvm::SmallVector<Value, 4> tiedInputs() const;

  /// `$7`, `[$7]`, `{$7` -> 7.
  static std::optional<unsigned> index(llvm::StringRef token);
  /// An integer literal.
  static std::optional<int64_t> literal(llvm::StringRef token);

private:
  llvm::SmallVector<llvm::StringRef> constraints;
  unsigned outputs = 0;
  ValueRange operands;
};

/// m, n and k of a wgmma shape token, "m64n128k16".
std::optional<std::array<int64_t, 3>> parseWgmmaShape(llvm::StringRef token);

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
