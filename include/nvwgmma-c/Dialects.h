/*===- nvwgmma-c/Dialects.h - C API of nvwgmma -------------------*- C -*-===*/

#ifndef NVWGMMA_C_DIALECTS_H
#define NVWGMMA_C_DIALECTS_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(NVWGMMA, nvwgmma);

/// Inserts nvwgmma and the upstream dialects it is used with.
MLIR_CAPI_EXPORTED void nvwgmmaRegisterAllDialects(MlirDialectRegistry registry);

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

#ifdef __cplusplus
}
#endif

#endif /* NVWGMMA_C_DIALECTS_H */
