//===- Constraints.h - the wgmma rule table ---------------------*- C++ -*-===//
//
// The single source of truth for which wgmma variants exist on sm_90a. The op
// verifiers, the lowerings and the Python helpers all ask these functions;
// nothing else re-derives the lattice. Every rule has the label used in
// docs/Constraints.md and in test/lit/Dialect/NVWGMMA/invalid.mlir.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_IR_CONSTRAINTS_H
#define NVWGMMA_IR_CONSTRAINTS_H

#include "nvwgmma/IR/NVWGMMADialect.h"

#include "mlir/IR/Types.h"
#include <optional>
#include <string>

namespace mlir {
namespace nvwgmma {

/// Everything about an mma_async that decides its legality and its PTX text,
/// independent of SSA values.
struct MmaAsyncConfig {
  int64_t m = 64, n = 8, k = 16;
  ElemType typeA = ElemType::f16, typeB = ElemType::f16;
  ElemType typeD = ElemType::f32;
  bool aFromRegisters = false;
  bool satfinite = false;
  /// Set when scale-d is an SSA value; `scaleD` is then ignored.
  bool runtimeScaleD = false;
  ScaleD scaleD = ScaleD::one;
  ScaleIn scaleA = ScaleIn::one, scaleB = ScaleIn::one;
  Layout layoutA = Layout::row, layoutB = Layout::col;
  /// Structured-sparse A (wgmma.mma_async.sp) and its selector immediate.
  bool sparse = false;
  int64_t sparsitySelector = 0;
};

/// A violated rule: its label (e.g. "mma_async_c5") and the full message,
/// which already ends with "(label)".
struct RuleViolation {
  std::string label;
  std::string message;
};

/// The families PTX groups wgmma input types into.
enum class InputFamily { F16, BF16, TF32, FP8, Int8, B1 };

/// Returns the family of a legal (typeA, typeB) pair, or nullopt.
std::optional<InputFamily> getInputFamily(ElemType typeA, ElemType typeB);
/// Human-readable family name used in diagnostics ("f16", "s8/u8", ...).
llvm::StringRef getFamilyName(InputFamily family);
/// K of one instruction for a family (doubled when sparse).
int64_t getRequiredK(InputFamily family, bool sparse);
/// Whether n is in the family's N lattice.
bool isLegalN(InputFamily family, int64_t n);
/// Number of 32-bit accumulator registers for (typeD, n) of a legal config.
int64_t getAccumulatorRegisterCount(ElemType typeD, int64_t n);

/// Attribute-level rules (shape, types, modifiers).
std::optional<RuleViolation> checkMmaAsyncConfig(const MmaAsyncConfig &config);
/// Operand and result type rules, for a config that passed the above.
std::optional<RuleViolation> checkMmaAsyncTypes(const MmaAsyncConfig &config,
                                                Type a, Type acc, Type result);
/// Both of the above.
std::optional<RuleViolation> checkMmaAsync(const MmaAsyncConfig &config,
                                           Type a, Type acc, Type result);

/// The PTX ISA version a legal variant needs, as major*10+minor (80, 82, 84).
unsigned getRequiredPtxVersion(const MmaAsyncConfig &config);
/// The only target with wgmma.
inline llvm::StringRef getRequiredTarget() { return "sm_90a"; }

/// wait_group N: N is a non-negative 64-bit immediate.
std::optional<RuleViolation> checkWaitGroup(int64_t group);

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_IR_CONSTRAINTS_H
