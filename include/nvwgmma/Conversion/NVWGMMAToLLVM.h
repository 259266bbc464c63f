//===- NVWGMMAToLLVM.h - nvwgmma to LLVM dialect ----------------*- C++ -*-===//
//
// Patterns of --convert-nvwgmma-to-llvm, for users who assemble their own
// conversion.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_CONVERSION_NVWGMMATOLLVM_H
#define NVWGMMA_CONVERSION_NVWGMMATOLLVM_H

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace nvwgmma {

/// Adds patterns lowering every nvwgmma op to LLVM dialect: intrinsic calls
/// for fence/commit/wait and inline PTX for mma_async.
void populateNVWGMMAToLLVMConversionPatterns(RewritePatternSet &patterns);

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_CONVERSION_NVWGMMATOLLVM_H
