//===- NVWGMMAToNVVM.h - nvwgmma to upstream nvvm ---------------*- C++ -*-===//
//
// Patterns of --convert-nvwgmma-to-nvvm, for users who assemble their own
// conversion.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_CONVERSION_NVWGMMATONVVM_H
#define NVWGMMA_CONVERSION_NVWGMMATONVVM_H

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace nvwgmma {

/// Adds patterns lowering nvwgmma ops to upstream nvvm.wgmma.* ops where
/// upstream can express them, and to inline PTX otherwise.
void populateNVWGMMAToNVVMConversionPatterns(RewritePatternSet &patterns);

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_CONVERSION_NVWGMMATONVVM_H
