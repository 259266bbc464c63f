//===- Pipelines.cpp - nvwgmma-to-llvm-pipeline ---------------------------===//
//
// The order matters: nvwgmma is lowered first, while its operands still have
// the LLVM types the later conversions leave alone.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/Pipelines/Pipelines.h"
#include "nvwgmma/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<unsigned> indexBitwidth{*this, "index-bitwidth",
                                 llvm::cl::desc("bitwidth of index"),
                                 llvm::cl::init(64)};
};

void buildPipeline(OpPassManager &pm, const PipelineOptions &options) {
  pm.addPass(nvwgmma::createConvertNVWGMMAToLLVM());
  pm.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions gpuOptions;
  gpuOptions.indexBitwidth = options.indexBitwidth;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(gpuOptions));
  pm.addPass(createConvertNVVMToLLVMPass());
  // math ops (exp2, log, ...) become llvm intrinsics llc selects natively:
  // left alone they reach mlir-translate, which has no math dialect.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}
} // namespace

void nvwgmma::registerNVWGMMAPipelines() {
  PassPipelineRegistration<PipelineOptions>(
      "nvwgmma-to-llvm-pipeline",
      "Lower nvwgmma and the upstream dialects of a kernel (func, arith, math, "
      "scf, cf, memref, gpu, nvvm) to LLVM dialect",
      buildPipeline);
}
