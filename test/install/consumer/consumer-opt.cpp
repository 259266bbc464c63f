//===- consumer-opt.cpp - a compiler team's own optimizer driver ----------===//
//
// A tool of someone else's: it registers the few upstream dialects it needs
// and adds nvwgmma's dialect and passes from the installed package.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/Registration/Registration.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, mlir::LLVM::LLVMDialect,
                  mlir::NVVM::NVVMDialect>();
  mlir::nvwgmma::registerDialect(registry);
  mlir::nvwgmma::registerPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "a consumer of nvwgmma\n", registry));
}
