//===- NVWGMMAPlugin.cpp - nvwgmma as an mlir-opt plugin ------------------===//
//
// One shared object that is both a dialect plugin and a pass plugin:
//   mlir-opt --load-dialect-plugin=libNVWGMMAPlugin.so \
//            --load-pass-plugin=libNVWGMMAPlugin.so ...
// It links the same libMLIR.so as the wheel's mlir-opt, so the host and the
// plugin share one MLIR (one context, one set of TypeIDs).
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/Registration/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "NVWGMMA", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            mlir::nvwgmma::registerDialect(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "NVWGMMAPasses", LLVM_VERSION_STRING,
          []() { mlir::nvwgmma::registerPasses(); }};
}
