//===- Registration.cpp - what nvwgmma-opt and Python register ------------===//
//
// Each registered dialect also gets its ConvertToLLVM interface: passes such
// as convert-gpu-to-nvvm look one up on every loaded dialect and abort the
// process when a dialect promises one it does not have.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/Registration/Registration.h"
#include "nvwgmma/Conversion/Passes.h"
#include "nvwgmma/IR/NVWGMMADialect.h"
#include "nvwgmma/Pipelines/Pipelines.h"
#include "nvwgmma/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <mutex>

using namespace mlir;

void nvwgmma::registerDialect(DialectRegistry &registry) {
  registry.insert<nvwgmma::NVWGMMADialect>();
}

void nvwgmma::registerPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    nvwgmma::registerNVWGMMAConversionPasses();
    nvwgmma::registerNVWGMMATransformsPasses();
    nvwgmma::registerNVWGMMAPipelines();
  });
}

void nvwgmma::registerAllDialects(DialectRegistry &registry) {
  registerDialect(registry);
  registry.insert<arith::ArithDialect, cf::ControlFlowDialect,
                  func::FuncDialect, gpu::GPUDialect, index::IndexDialect,
                  LLVM::LLVMDialect, NVVM::NVVMDialect, math::MathDialect,
                  memref::MemRefDialect, scf::SCFDialect, ub::UBDialect>();
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
}

void nvwgmma::registerAllPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerPasses();
    registerArithToLLVMConversionPass();
    registerConvertControlFlowToLLVMPass();
    registerConvertFuncToLLVMPass();
    registerConvertGpuOpsToNVVMOpsPass();
    registerConvertIndexToLLVMPass();
    registerConvertNVVMToLLVMPass();
    registerFinalizeMemRefToLLVMConversionPass();
    registerReconcileUnrealizedCastsPass();
    registerSCFToControlFlowPass();
    registerCanonicalizerPass();
    registerCSEPass();
    registerSymbolDCEPass();
    registerInlinerPass();
  });
}
