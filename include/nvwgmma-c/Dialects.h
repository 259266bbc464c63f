/*===- nvwgmma-c/Dialects.h - C API of nvwgmma -------------------*- C -*-===*/
/*
 * Registration, the wgmma lattice, nvwgmma attributes, the rule table and
 * PTX queries, for the Python extension and other language bindings. Enum
 * values are the generated C++ enums' integer values (ElemType f16 = 0 ...).
 */

#ifndef NVWGMMA_C_DIALECTS_H
#define NVWGMMA_C_DIALECTS_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(NVWGMMA, nvwgmma);

/// Inserts nvwgmma and the upstream dialects it is used with.
MLIR_CAPI_EXPORTED void
nvwgmmaRegisterAllDialects(MlirDialectRegistry registry);

/// Registers nvwgmma's passes, its pipeline and the upstream passes needed to
/// reach LLVM. Idempotent.
MLIR_CAPI_EXPORTED void nvwgmmaRegisterAllPasses(void);

/// Calls `callback` with the PTX text of an nvwgmma op: readable text when
/// `inlineAsm` is false, else the inline-asm string then (second call) the
/// constraint string. Returns false for ops that are not nvwgmma ops or that
/// do not verify.
MLIR_CAPI_EXPORTED bool nvwgmmaGetPtx(MlirOperation op, bool inlineAsm,
                                      MlirStringCallback callback,
                                      void *userData);

/// The PTX ISA version (major*10+minor) every nvwgmma op under `op` needs;
/// 0 when there is none.
MLIR_CAPI_EXPORTED unsigned nvwgmmaGetRequiredPtxVersion(MlirOperation op);

/// Checks the wgmma protocol on a PTX module: `callback` is called once per
/// finding with its fields joined by '\x1f' (severity, function, line,
/// label, message), then each note as '\x1e' line '\x1f' text.
MLIR_CAPI_EXPORTED void nvwgmmaCheckPtx(MlirStringRef text, bool strict,
                                        MlirStringCallback callback,
                                        void *userData);

/*===----------------------------------------------------------------------===
 * The lattice (lib/IR/Constraints.cpp, the single source of truth)
 *===----------------------------------------------------------------------===*/

/// What the lattice says about one (typeA, typeB) input family.
typedef struct {
  /// Family name as diagnostics spell it: "f16", "e4m3/e5m2", "s8/u8", ...
  const char *name;
  /// K of one dense instruction; of one sparse instruction (0: no sparse form).
  int64_t k, sparseK;
  bool canTranspose, canNegate, canSaturate;
  /// Legal sparsity selectors are 0 .. numSparsitySelectors-1.
  int64_t numSparsitySelectors;
  /// Bit i set: N = 8 * (i + 1) is legal.
  uint32_t legalNMask;
  /// Bit t set: ElemType t is a legal accumulator type.
  uint32_t legalDMask;
} NvwgmmaFamilyInfo;

/// Fills `info` and returns true when (typeA, typeB) is a legal input pair.
MLIR_CAPI_EXPORTED bool nvwgmmaGetFamilyInfo(uint32_t typeA, uint32_t typeB,
                                             NvwgmmaFamilyInfo *info);

/// 32-bit accumulator registers per thread for (typeD, n).
MLIR_CAPI_EXPORTED int64_t nvwgmmaGetAccumulatorRegisterCount(uint32_t typeD,
                                                              int64_t n);

/// The member type of the accumulator struct for typeD (f32 or i32).
MLIR_CAPI_EXPORTED MlirType nvwgmmaGetAccumulatorMemberType(MlirContext ctx,
                                                            uint32_t typeD);

/*===----------------------------------------------------------------------===
 * Attributes
 *===----------------------------------------------------------------------===*/

MLIR_CAPI_EXPORTED bool nvwgmmaAttributeIsAShape(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirTypeID nvwgmmaShapeAttrGetTypeID(void);
MLIR_CAPI_EXPORTED MlirAttribute nvwgmmaShapeAttrGet(MlirContext ctx, int64_t m,
                                                     int64_t n, int64_t k);
MLIR_CAPI_EXPORTED int64_t nvwgmmaShapeAttrGetM(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t nvwgmmaShapeAttrGetN(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t nvwgmmaShapeAttrGetK(MlirAttribute attr);

/// Enum attributes from the enum's integer value; a null attribute when the
/// value names no case.
MLIR_CAPI_EXPORTED MlirAttribute nvwgmmaElemTypeAttrGet(MlirContext ctx,
                                                        uint32_t value);
MLIR_CAPI_EXPORTED MlirAttribute nvwgmmaScaleInAttrGet(MlirContext ctx,
                                                       uint32_t value);
MLIR_CAPI_EXPORTED MlirAttribute nvwgmmaScaleDAttrGet(MlirContext ctx,
                                                      uint32_t value);
MLIR_CAPI_EXPORTED MlirAttribute nvwgmmaLayoutAttrGet(MlirContext ctx,
                                                      uint32_t value);

/*===----------------------------------------------------------------------===
 * Rules
 *===----------------------------------------------------------------------===*/

/// Asks the rule table about an nvwgmma op (not the generic ODS checks).
/// When it breaks a rule, calls `callback` twice, with the rule's label then
/// its message, and returns true.
MLIR_CAPI_EXPORTED bool nvwgmmaCheckOpRules(MlirOperation op,
                                            MlirStringCallback callback,
                                            void *userData);

#ifdef __cplusplus
}
#endif

#endif /* NVWGMMA_C_DIALECTS_H */
