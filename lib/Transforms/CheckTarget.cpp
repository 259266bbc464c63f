//===- CheckTarget.cpp - PTX version and target against nvwgmma ops -------===//
//
// Reports the first op that the chosen target or PTX version cannot
// assemble, with the rule table's target_c1/c2 message, so users see it
// before ptxas does.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/IR/NVWGMMAOps.h"
#include "nvwgmma/Transforms/Passes.h"

namespace mlir {
namespace nvwgmma {
#define GEN_PASS_DEF_NVWGMMACHECKTARGET
#include "nvwgmma/Transforms/Passes.h.inc"
} // namespace nvwgmma
} // namespace mlir

using namespace mlir;
using namespace mlir::nvwgmma;

namespace {
struct CheckTargetPass
    : nvwgmma::impl::NVWGMMACheckTargetBase<CheckTargetPass> {
  using Base::Base;
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([&](Operation *op) {
      if (std::optional<RuleViolation> v = checkTarget(op, chip, ptxVersion)) {
        op->emitError() << v->message;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
