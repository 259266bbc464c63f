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
  // First, math ops become what llc selects (instructions, approximations)
  // and then llvm intrinsics: llc has no libm to call, mlir-translate no
  // math dialect, and convert-gpu-to-nvvm would call libdevice's __nv_*
  // functions, which no kernel built here links.
  pm.addPass(nvwgmma::createLegalizeMathForNVPTX());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(nvwgmma::createConvertNVWGMMAToLLVM());
  pm.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions gpuOptions;
  gpuOptions.indexBitwidth = options.indexBitwidth;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(gpuOptions));
  pm.addPass(createConvertNVVMToLLVMPass());
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
