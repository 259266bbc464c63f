//===- InlineAsm.h - mma_async as llvm.inline_asm ---------------*- C++ -*-===//
//
// The one materialisation of an mma_async's inline PTX as LLVM dialect ops.
// Both conversions depend on it; neither depends on the other.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_PTX_INLINEASM_H
#define NVWGMMA_PTX_INLINEASM_H

#include "nvwgmma/IR/NVWGMMAOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace nvwgmma {

/// Replaces `op` by its inline PTX (llvm.inline_asm and the extract/insert
/// ops around it).
void lowerMmaAsyncToInlineAsm(RewriterBase &rewriter, MmaAsyncOp op);
void lowerMmaAsyncToInlineAsm(RewriterBase &rewriter, MmaAsyncSpOp op);

/// Replaces a wait_group that carries values by its inline PTX: one
/// `wgmma.wait_group.sync.aligned N;` with side effects whose outputs are
/// tied to the values' registers, the values rebuilt from its outputs.
void lowerWaitGroupWithValues(RewriterBase &rewriter, WaitGroupOp op);

/// Applies lowerMmaAsyncToInlineAsm to every MmaAsyncOp or MmaAsyncSpOp.
template <typename OpT> struct MmaAsyncToInlineAsm : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    lowerMmaAsyncToInlineAsm(rewriter, op);
    return success();
  }
};

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_PTX_INLINEASM_H
