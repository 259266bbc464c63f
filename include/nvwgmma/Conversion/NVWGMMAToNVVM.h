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

/// A unit attribute --nvwgmma-raise-nvvm puts on an mma_async raised from an
/// upstream op that spelled the default overflow mode out (`wrapped`, as
/// upstream's NVGPU lowering does); lowering to nvvm spells it again, so a
/// raise and a lowering give the input back byte for byte.
inline constexpr llvm::StringLiteral kExplicitWrappedAttrName =
    "nvwgmma.nvvm_wrapped";

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_CONVERSION_NVWGMMATONVVM_H
