//===- NVWGMMAToNVVM.cpp - nvwgmma to upstream nvvm -----------------------===//
//
// An mma_async becomes nvvm.wgmma.mma_async exactly when upstreamCanExpress
// says so; for every such op upstream's verifier accepts what ours accepted
// (its lattice contains ours there), which test_nvvm_conversion_grid checks
// over every legal point. The rest becomes inline PTX.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/Conversion/Passes.h"
#include "nvwgmma/IR/NVWGMMAOps.h"

#include "nvwgmma/PTX/InlineAsm.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir {
namespace nvwgmma {
#define GEN_PASS_DEF_CONVERTNVWGMMATONVVM
#include "nvwgmma/Conversion/Passes.h.inc"
} // namespace nvwgmma
} // namespace mlir

using namespace mlir;
using namespace mlir::nvwgmma;

namespace {

/// Upstream's WGMMATypes spell every case as we do; map by name.
NVVM::WGMMATypesAttr toNVVM(MLIRContext *ctx, ElemType t) {
  return NVVM::WGMMATypesAttr::get(
      ctx, *NVVM::symbolizeWGMMATypes(stringifyElemType(t)));
}

/// Upstream cannot express A in registers or a runtime scale-d, and emits b1
/// without `.and.popc` (which ptxas rejects). Sparse ops never get here:
/// upstream has no sparse wgmma.
bool upstreamCanExpress(const MmaAsyncConfig &c) {
  return !c.aFromRegisters && !c.runtimeScaleD && c.typeA != ElemType::b1;
}

struct MmaAsyncToNVVM : OpRewritePattern<MmaAsyncOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MmaAsyncOp op,
                                PatternRewriter &rewriter) const override {
    MmaAsyncConfig c = op.getConfig();
    if (!upstreamCanExpress(c)) {
      lowerMmaAsyncToInlineAsm(rewriter, op);
      return success();
    }
    MLIRContext *ctx = op.getContext();
    auto scaleIn = [&](ScaleIn s) {
      return NVVM::WGMMAScaleInAttr::get(ctx, s == ScaleIn::one
                                                  ? NVVM::WGMMAScaleIn::one
                                                  : NVVM::WGMMAScaleIn::neg);
    };
    auto layout = [&](Layout l) {
      return NVVM::MMALayoutAttr::get(
          ctx, l == Layout::row ? NVVM::MMALayout::row : NVVM::MMALayout::col);
    };
    NVVM::MMAIntOverflowAttr satfinite;
    if (c.satfinite)
      satfinite =
          NVVM::MMAIntOverflowAttr::get(ctx, NVVM::MMAIntOverflow::satfinite);
    else if (op->hasAttr(kExplicitWrappedAttrName))
      satfinite =
          NVVM::MMAIntOverflowAttr::get(ctx, NVVM::MMAIntOverflow::wrapped);
    rewriter.replaceOpWithNewOp<NVVM::WgmmaMmaAsyncOp>(
        op, op.getRes().getType(), op.getAcc(), op.getA(), op.getDescB(),
        NVVM::MMAShapeAttr::get(ctx, c.m, c.n, c.k), toNVVM(ctx, c.typeA),
        toNVVM(ctx, c.typeB), toNVVM(ctx, c.typeD),
        NVVM::WGMMAScaleOutAttr::get(ctx, c.scaleD == ScaleD::one
                                              ? NVVM::WGMMAScaleOut::one
                                              : NVVM::WGMMAScaleOut::zero),
        scaleIn(c.scaleA), scaleIn(c.scaleB), layout(c.layoutA),
        layout(c.layoutB), satfinite);
    return success();
  }
};

template <typename OpT, typename NVVMOpT>
struct OneToOne : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    if constexpr (std::is_same_v<OpT, WaitGroupOp>) {
      // Upstream's wait takes no registers: a wait that orders values is asm.
      if (!op.getValues().empty())
        lowerWaitGroupWithValues(rewriter, op);
      else
        rewriter.replaceOpWithNewOp<NVVMOpT>(op, op.getGroup());
    } else
      rewriter.replaceOpWithNewOp<NVVMOpT>(op);
    return success();
  }
};

struct ConvertNVWGMMAToNVVMPass
    : nvwgmma::impl::ConvertNVWGMMAToNVVMBase<ConvertNVWGMMAToNVVMPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateNVWGMMAToNVVMConversionPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void nvwgmma::populateNVWGMMAToNVVMConversionPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns
      .add<OneToOne<FenceOp, NVVM::WgmmaFenceAlignedOp>,
           OneToOne<CommitGroupOp, NVVM::WgmmaGroupSyncAlignedOp>,
           OneToOne<WaitGroupOp, NVVM::WgmmaWaitGroupSyncOp>, MmaAsyncToNVVM,
           // Upstream has no sparse wgmma at all.
           MmaAsyncToInlineAsm<MmaAsyncSpOp>>(ctx);
}
