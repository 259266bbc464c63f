//===- Passes.h - nvwgmma passes --------------------------------*- C++ -*-===//

#ifndef NVWGMMA_CONVERSION_PASSES_H
#define NVWGMMA_CONVERSION_PASSES_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include "nvwgmma/Conversion/NVWGMMAToLLVM.h"
#include "nvwgmma/Conversion/NVWGMMAToNVVM.h"

namespace mlir {
namespace nvwgmma {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "nvwgmma/Conversion/Passes.h.inc"

/// Registers `--nvwgmma-to-llvm-pipeline`: nvwgmma plus the upstream dialects
/// a kernel uses (func, arith, scf, cf, memref, gpu, nvvm) down to LLVM.
void registerNVWGMMAPipelines();

/// The PTX version (major*10+minor) every nvwgmma op under `root` needs.
unsigned getRequiredPtxVersion(Operation *root);

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_CONVERSION_PASSES_H
