//===- RaiseNVVM.cpp - upstream nvvm.wgmma.* to nvwgmma -------------------===//
//
// The inverse of --convert-nvwgmma-to-nvvm on the ops upstream can express,
// so that nvwgmma's exact verifier, checker and lowerings apply to IR built
// elsewhere. Each raised mma_async is judged by the rule table; an op nvwgmma
// would refuse (one whose PTX ptxas rejects) stays as it is and is reported
// with the rule's label, naming the upstream op.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/Conversion/Passes.h"
#include "nvwgmma/IR/Constraints.h"
#include "nvwgmma/IR/NVWGMMAOps.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace nvwgmma {
#define GEN_PASS_DEF_RAISENVVMTONVWGMMA
#include "nvwgmma/Conversion/Passes.h.inc"
} // namespace nvwgmma
} // namespace mlir

using namespace mlir;
using namespace mlir::nvwgmma;

namespace {

/// The rule of docs/Constraints.md an upstream op breaks when it cannot be
/// raised for a reason of its own (not one of nvwgmma's rules).
constexpr llvm::StringLiteral kRaiseRule = "raise_c1";

/// Upstream's WGMMATypes spell every case as we do; map by name.
std::optional<ElemType> fromNVVM(NVVM::WGMMATypes t) {
  return symbolizeElemType(NVVM::stringifyWGMMATypes(t));
}

/// The nvwgmma op an upstream mma_async is, or the reason it cannot be.
FailureOr<MmaAsyncOp> raiseMma(NVVM::WgmmaMmaAsyncOp op,
                               RewriterBase &rewriter) {
  std::optional<ElemType> typeA = fromNVVM(op.getTypeA()),
                          typeB = fromNVVM(op.getTypeB()),
                          typeD = fromNVVM(op.getTypeD());
  if (!typeA || !typeB || !typeD)
    return op.emitError() << "'nvvm.wgmma.mma_async' types must be ones "
                             "nvwgmma names, but got an unknown one ("
                          << kRaiseRule << ")";
  // nvwgmma's b1 is `.and.popc`, the only b1 operation ptxas accepts;
  // upstream's op has no operation and emits b1 PTX without one.
  if (*typeA == ElemType::b1 || *typeB == ElemType::b1)
    return op.emitError()
           << "'nvvm.wgmma.mma_async' b1 multiply must name its operation "
              "(.and.popc, the only one ptxas accepts), but got upstream's "
              "b1 op, which has none and emits PTX that ptxas rejects ("
           << kRaiseRule << ")";
  MLIRContext *ctx = op.getContext();
  NVVM::MMAShapeAttr shape = op.getShape();
  auto layout = [&](NVVM::MMALayout l) {
    return LayoutAttr::get(ctx, l == NVVM::MMALayout::row ? Layout::row
                                                          : Layout::col);
  };
  auto scaleIn = [&](NVVM::WGMMAScaleIn s) {
    return ScaleInAttr::get(ctx, s == NVVM::WGMMAScaleIn::one ? ScaleIn::one
                                                              : ScaleIn::neg);
  };
  UnitAttr satfinite;
  if (op.getSatfinite() == NVVM::MMAIntOverflow::satfinite)
    satfinite = UnitAttr::get(ctx);
  rewriter.setInsertionPoint(op);
  auto raised = MmaAsyncOp::create(
      rewriter, op.getLoc(), op.getResult().getType(), op.getDescriptorA(),
      op.getDescriptorB(), op.getInouts(), /*scaleDValue=*/Value(),
      ShapeAttr::get(ctx, shape.getM(), shape.getN(), shape.getK()),
      ElemTypeAttr::get(ctx, *typeD),
      ScaleDAttr::get(ctx, op.getScaleD() == NVVM::WGMMAScaleOut::one
                               ? ScaleD::one
                               : ScaleD::zero),
      satfinite, ElemTypeAttr::get(ctx, *typeA), scaleIn(op.getScaleA()),
      layout(op.getLayoutA()), ElemTypeAttr::get(ctx, *typeB),
      scaleIn(op.getScaleB()), layout(op.getLayoutB()));
  // Upstream's NVGPU lowering spells the default (no satfinite) out as
  // `wrapped`; remember it so that lowering again gives the input back.
  if (op.getSatfinite() == NVVM::MMAIntOverflow::wrapped)
    raised->setAttr(kExplicitWrappedAttrName, UnitAttr::get(ctx));
  if (std::optional<RuleViolation> v = checkOpRules(raised)) {
    rewriter.eraseOp(raised);
    return op.emitError() << "'nvvm.wgmma.mma_async' cannot be raised: "
                          << v->message;
  }
  return raised;
}

struct RaiseNVVMToNVWGMMAPass
    : nvwgmma::impl::RaiseNVVMToNVWGMMABase<RaiseNVVMToNVWGMMAPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<NVVM::WgmmaFenceAlignedOp, NVVM::WgmmaGroupSyncAlignedOp,
              NVVM::WgmmaWaitGroupSyncOp, NVVM::WgmmaMmaAsyncOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    bool failedAny = false;
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      if (isa<NVVM::WgmmaFenceAlignedOp>(op)) {
        rewriter.replaceOpWithNewOp<FenceOp>(op);
      } else if (isa<NVVM::WgmmaGroupSyncAlignedOp>(op)) {
        rewriter.replaceOpWithNewOp<CommitGroupOp>(op);
      } else if (auto wait = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op)) {
        rewriter.replaceOpWithNewOp<WaitGroupOp>(
            op, static_cast<int64_t>(wait.getGroup()));
      } else {
        auto mma = cast<NVVM::WgmmaMmaAsyncOp>(op);
        FailureOr<MmaAsyncOp> raised = raiseMma(mma, rewriter);
        if (failed(raised)) {
          failedAny = true;
          continue;
        }
        rewriter.replaceOp(mma, raised->getResult());
      }
    }
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
