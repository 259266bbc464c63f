//===- Constraints.h - the wgmma rule table ---------------------*- C++ -*-===//
//
// The single source of truth for which wgmma variants exist on sm_90a. The op
// verifiers, the PTX emitter, the lowerings and (through the C API) the
// Python helpers, tests and benchmarks all ask these functions; nothing else
// re-derives the lattice. Every rule has the label used in
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
class Operation;
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
/// Whether d is a legal accumulator type for the family.
bool isLegalD(InputFamily family, ElemType typeD);
/// Transposes (imm-trans-a/b) exist: f16 and bf16.
bool canTranspose(InputFamily family);
/// The float families: they take imm-scale-a/b (negation); int8 and b1 do not.
bool canNegate(InputFamily family);
/// `.satfinite` exists: int8.
bool canSaturate(InputFamily family);
/// How many sparsity selectors a sparse op of the family accepts (0 .. n-1);
/// 0 when the family has no sparse form (b1).
int64_t getNumSparsitySelectors(InputFamily family);
/// Number of 32-bit accumulator registers for (typeD, n) of a legal config.
int64_t getAccumulatorRegisterCount(ElemType typeD, int64_t n);
/// The member type of the accumulator struct: f32 for f32, i32 for s32 and
/// for f16 (two packed halves).
Type getAccumulatorMemberType(MLIRContext *context, ElemType typeD);

/// Attribute-level rules (shape, types, modifiers).
std::optional<RuleViolation> checkMmaAsyncConfig(const MmaAsyncConfig &config);
/// Operand and result type rules, for a config that passed the above.
std::optional<RuleViolation> checkMmaAsyncTypes(const MmaAsyncConfig &config,
                                                Type a, Type acc, Type result);
/// Both of the above.
std::optional<RuleViolation> checkMmaAsync(const MmaAsyncConfig &config, Type a,
                                           Type acc, Type result);

/// scale-d is given exactly once, as an attribute or as an i1 value.
std::optional<RuleViolation> checkScaleDGiven(bool hasValue, bool hasAttr);
/// The diagnostic of a scale-d keyword that is neither `zero` nor `one`.
RuleViolation unknownScaleDKeyword(llvm::StringRef keyword);
/// The diagnostic of an enum group keyword (`type`, `scale_in`, `layout`)
/// that names no case; `choices` lists the cases.
RuleViolation unknownEnumKeyword(llvm::StringRef group, llvm::StringRef keyword,
                                 llvm::StringRef choices);

/// The PTX ISA version a legal variant needs, as major*10+minor (80, 82, 84).
unsigned getRequiredPtxVersion(const MmaAsyncConfig &config);
/// The PTX ISA version one op needs: 0 for an op of another dialect.
unsigned getRequiredPtxVersionOfOp(Operation *op);
/// The PTX ISA version every nvwgmma op under `root` (included) needs; 0
/// when there is none.
unsigned getRequiredPtxVersion(Operation *root);
/// The only target with wgmma.
inline llvm::StringRef getRequiredTarget() { return "sm_90a"; }
/// A PTX version (major*10+minor) as PTX spells it: "8.4".
std::string getPtxVersionText(unsigned version);
/// Whether `op` assembles for `chip` at `ptxVersion` (0: the lowest that
/// satisfies it, always accepted): rules target_c1 and target_c2.
std::optional<RuleViolation> checkTarget(Operation *op, llvm::StringRef chip,
                                         unsigned ptxVersion);

/// Every nvwgmma op sits (at any depth) in a function body; a detached op
/// (no parent yet) passes.
std::optional<RuleViolation> checkPlacement(Operation *op);

/// wait_group N: N is a non-negative 64-bit immediate.
std::optional<RuleViolation> checkWaitGroup(int64_t group);
/// wait_group's values: each an LLVM struct of 32-bit registers or one
/// such register (rule wait_group_c2).
std::optional<RuleViolation> checkWaitedValues(mlir::TypeRange types);
/// A 32-bit register type an inline asm can tie: f32, i32, vector<2xf16>,
/// vector<2xbf16>, vector<4xi8>.
bool isRegister32(mlir::Type type);

/// The operand-type rules ODS also enforces (mma_async_c16, c17, sp_c4),
/// read by operand position so that they hold for any op, however built.
std::optional<RuleViolation> checkOperandTypes(Operation *op);

/// The rule an nvwgmma op breaks, from the rule table alone, for an op that
/// passed its generic ODS checks: what Python reports as
/// WgmmaRuleError.label.
std::optional<RuleViolation> checkOpRules(Operation *op);
/// checkOpRules without placement_c1.
std::optional<RuleViolation> checkOwnRules(Operation *op);

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_IR_CONSTRAINTS_H
