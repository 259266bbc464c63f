//===- nvwgmma-opt.cpp - the nvwgmma optimizer driver ---------------------===//
//
// mlir-opt plus nvwgmma: every upstream dialect, extension and pass (from the
// MLIR wheel's libMLIR.so, the library mlir-opt itself is), then nvwgmma's
// dialect and passes. Whatever mlir-opt parses and runs, this does too.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/Registration/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllPasses();
  mlir::nvwgmma::registerDialect(registry);
  mlir::nvwgmma::registerPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "nvwgmma optimizer driver\n", registry));
}
