//===- NVWGMMAToLLVM.cpp - nvwgmma to LLVM dialect ------------------------===//
//
// fence/commit/wait become the three LLVM wgmma intrinsics; mma_async has no
// intrinsic in LLVM 22 and becomes inline PTX (nvwgmma/PTX/InlineAsm.h).
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/Conversion/Passes.h"
#include "nvwgmma/IR/NVWGMMAOps.h"
#include "nvwgmma/PTX/InlineAsm.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir {
namespace nvwgmma {
#define GEN_PASS_DEF_CONVERTNVWGMMATOLLVM
#include "nvwgmma/Conversion/Passes.h.inc"
} // namespace nvwgmma
} // namespace mlir

using namespace mlir;
using namespace mlir::nvwgmma;

namespace {

Value i64Constant(RewriterBase &rewriter, Location loc, int64_t v) {
  return LLVM::ConstantOp::create(rewriter, loc, rewriter.getI64Type(),
                                  rewriter.getI64IntegerAttr(v));
}

template <typename OpT> struct IntrinsicPattern : OpRewritePattern<OpT> {
  IntrinsicPattern(MLIRContext *ctx, StringRef intrinsic)
      : OpRewritePattern<OpT>(ctx), intrinsic(intrinsic) {}

  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> args;
    if constexpr (std::is_same_v<OpT, WaitGroupOp>) {
      // The intrinsic takes no registers: a wait that orders values is asm.
      if (!op.getValues().empty()) {
        lowerWaitGroupWithValues(rewriter, op);
        return success();
      }
      args.push_back(i64Constant(rewriter, op.getLoc(), op.getGroup()));
    }
    LLVM::CallIntrinsicOp::create(rewriter, op.getLoc(),
                                  rewriter.getStringAttr(intrinsic), args);
    rewriter.eraseOp(op);
    return success();
  }
  StringRef intrinsic;
};

struct ConvertNVWGMMAToLLVMPass
    : nvwgmma::impl::ConvertNVWGMMAToLLVMBase<ConvertNVWGMMAToLLVMPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateNVWGMMAToLLVMConversionPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void nvwgmma::populateNVWGMMAToLLVMConversionPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<IntrinsicPattern<FenceOp>>(ctx,
                                          "llvm.nvvm.wgmma.fence.sync.aligned");
  patterns.add<IntrinsicPattern<CommitGroupOp>>(
      ctx, "llvm.nvvm.wgmma.commit_group.sync.aligned");
  patterns.add<IntrinsicPattern<WaitGroupOp>>(
      ctx, "llvm.nvvm.wgmma.wait_group.sync.aligned");
  patterns
      .add<MmaAsyncToInlineAsm<MmaAsyncOp>, MmaAsyncToInlineAsm<MmaAsyncSpOp>>(
          ctx);
}
