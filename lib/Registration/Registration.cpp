//===- Registration.cpp - what nvwgmma-opt and Python register ------------===//

#include "nvwgmma/Registration/Registration.h"
#include "nvwgmma/Conversion/Passes.h"
#include "nvwgmma/IR/NVWGMMADialect.h"

#include "mlir/Conversion/Passes.h"
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
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <mutex>

using namespace mlir;

void nvwgmma::registerAllDialects(DialectRegistry &registry) {
  registry.insert<nvwgmma::NVWGMMADialect, arith::ArithDialect,
                  cf::ControlFlowDialect, func::FuncDialect, gpu::GPUDialect,
                  index::IndexDialect, LLVM::LLVMDialect, NVVM::NVVMDialect,
                  math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                  ub::UBDialect, vector::VectorDialect>();
}

void nvwgmma::registerAllPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    nvwgmma::registerNVWGMMAPasses();
    nvwgmma::registerNVWGMMAPipelines();
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
