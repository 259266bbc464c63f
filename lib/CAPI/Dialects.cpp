//===- Dialects.cpp - C API of nvwgmma ------------------------------------===//

#include "nvwgmma-c/Dialects.h"
#include "nvwgmma/Conversion/Passes.h"
#include "nvwgmma/IR/NVWGMMAOps.h"
#include "nvwgmma/PTX/PtxEmitter.h"
#include "nvwgmma/Registration/Registration.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(NVWGMMA, nvwgmma,
                                      mlir::nvwgmma::NVWGMMADialect)

void nvwgmmaRegisterAllDialects(MlirDialectRegistry registry) {
  nvwgmma::registerAllDialects(*unwrap(registry));
}

void nvwgmmaRegisterAllPasses(void) { nvwgmma::registerAllPasses(); }

static void emit(const std::string &s, MlirStringCallback callback,
                 void *userData) {
  callback(mlirStringRefCreate(s.data(), s.size()), userData);
}

bool nvwgmmaGetPtx(MlirOperation op, bool inlineAsm,
                   MlirStringCallback callback, void *userData) {
  Operation *operation = unwrap(op);
  if (!isa<nvwgmma::NVWGMMADialect>(operation->getDialect()))
    return false;
  // The emitter assumes a legal op; never let bad IR reach it.
  if (failed(mlir::verify(operation, /*verifyRecursively=*/false)))
    return false;
  std::optional<nvwgmma::PtxInstruction> ptx = nvwgmma::buildPtx(operation);
  if (!ptx)
    return false;
  if (inlineAsm) {
    emit(ptx->asmText, callback, userData);
    emit(ptx->getConstraints(), callback, userData);
  } else {
    emit(ptx->getReadable(), callback, userData);
  }
  return true;
}

unsigned nvwgmmaGetRequiredPtxVersion(MlirOperation op) {
  return nvwgmma::getRequiredPtxVersion(unwrap(op));
}
