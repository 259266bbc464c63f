//===- NVWGMMAToLLVM.h - nvwgmma to LLVM dialect ----------------*- C++ -*-===//

#ifndef NVWGMMA_CONVERSION_NVWGMMATOLLVM_H
#define NVWGMMA_CONVERSION_NVWGMMATOLLVM_H

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace nvwgmma {
class MmaAsyncOp;
class MmaAsyncSpOp;

/// Adds patterns lowering every nvwgmma op to LLVM dialect: intrinsic calls
/// for fence/commit/wait and inline PTX for mma_async.
void populateNVWGMMAToLLVMConversionPatterns(RewritePatternSet &patterns);

/// Replaces `op` by its inline PTX (llvm.inline_asm and the extract/insert
/// ops around it). Shared by both conversions.
void lowerMmaAsyncToInlineAsm(RewriterBase &rewriter, MmaAsyncOp op);
void lowerMmaAsyncToInlineAsm(RewriterBase &rewriter, MmaAsyncSpOp op);

/// The pattern applying lowerMmaAsyncToInlineAsm to MmaAsyncOp or
/// MmaAsyncSpOp, used by both conversions.
template <typename OpT>
struct MmaAsyncToInlineAsm : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    lowerMmaAsyncToInlineAsm(rewriter, op);
    return success();
  }
};

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_CONVERSION_NVWGMMATOLLVM_H
