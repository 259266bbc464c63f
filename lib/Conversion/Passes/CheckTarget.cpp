//===- CheckTarget.cpp - PTX version and target against nvwgmma ops -------===//

#include "nvwgmma/Conversion/Passes.h"
#include "nvwgmma/IR/NVWGMMAOps.h"

namespace mlir {
namespace nvwgmma {
#define GEN_PASS_DEF_NVWGMMACHECKTARGET
#include "nvwgmma/Conversion/Passes.h.inc"
} // namespace nvwgmma
} // namespace mlir

using namespace mlir;
using namespace mlir::nvwgmma;

static std::string versionText(unsigned v) {
  return std::to_string(v / 10) + "." + std::to_string(v % 10);
}

static unsigned requiredVersion(Operation *op) {
  if (auto mma = dyn_cast<MmaAsyncOp>(op))
    return nvwgmma::getRequiredPtxVersion(mma.getConfig());
  if (auto mma = dyn_cast<MmaAsyncSpOp>(op))
    return nvwgmma::getRequiredPtxVersion(mma.getConfig());
  return isa<NVWGMMADialect>(op->getDialect()) ? 80 : 0;
}

unsigned nvwgmma::getRequiredPtxVersion(Operation *root) {
  unsigned v = 0;
  root->walk([&](Operation *op) { v = std::max(v, requiredVersion(op)); });
  return v;
}

namespace {
struct CheckTargetPass
    : nvwgmma::impl::NVWGMMACheckTargetBase<CheckTargetPass> {
  using Base::Base;
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([&](Operation *op) {
      unsigned need = requiredVersion(op);
      if (need == 0)
        return WalkResult::advance();
      if (chip != getRequiredTarget().str()) {
        op->emitError() << "'" << op->getName() << "' requires target "
                        << getRequiredTarget() << ", but the target is "
                        << chip << " (target_c1)";
        return WalkResult::interrupt();
      }
      if (ptxVersion != 0 && ptxVersion < need) {
        op->emitError() << "'" << op->getName() << "' requires PTX ISA "
                        << versionText(need) << " or later, but the PTX "
                        << "version is " << versionText(ptxVersion)
                        << " (target_c2)";
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
