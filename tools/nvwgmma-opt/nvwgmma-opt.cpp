//===- nvwgmma-opt.cpp - the nvwgmma optimizer driver ---------------------===//
//
// MlirOptMain with nvwgmma, the upstream dialects it is used with, its passes
// and the upstream passes needed to reach LLVM dialect.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/Registration/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::nvwgmma::registerAllDialects(registry);
  mlir::nvwgmma::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "nvwgmma optimizer driver\n", registry));
}
