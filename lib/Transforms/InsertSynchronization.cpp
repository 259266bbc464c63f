//===- InsertSynchronization.cpp - repair the wgmma protocol --------------===//
//
// Applies, one at a time, the repair each protocol violation asks for, and
// re-analyses after each: a commit or wait inserted for one use often
// satisfies the next, which keeps the inserted set small.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/Analysis/ProtocolAnalysis.h"
#include "nvwgmma/IR/NVWGMMADialect.h"
#include "nvwgmma/IR/NVWGMMAOps.h"
#include "nvwgmma/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace nvwgmma {
#define GEN_PASS_DEF_NVWGMMAINSERTSYNCHRONIZATION
#include "nvwgmma/Transforms/Passes.h.inc"
} // namespace nvwgmma
} // namespace mlir

using namespace mlir;
using namespace mlir::nvwgmma;

namespace {

/// Whether the function around `op` already speaks nvwgmma: repairs keep
/// IR from other front ends in upstream's NVVM ops.
bool usesNvwgmma(Operation *op) {
  Operation *fn = op->getParentWithTrait<OpTrait::IsIsolatedFromAbove>();
  if (!fn)
    return false;
  bool found = false;
  fn->walk([&](Operation *inner) {
    if (isa<NVWGMMADialect>(inner->getDialect())) {
      found = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

/// Inserts, before the offending op, what the violation asks for.
void repair(const ProtocolViolation &v) {
  OpBuilder b(v.at);
  Location loc = v.at->getLoc();
  bool own = usesNvwgmma(v.at);
  switch (v.kind) {
  case ProtocolViolation::MissingFence:
    if (own)
      FenceOp::create(b, loc);
    else
      NVVM::WgmmaFenceAlignedOp::create(b, loc);
    return;
  case ProtocolViolation::MissingProxyFence:
    NVVM::FenceProxyOp::create(
        b, loc,
        NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    return;
  case ProtocolViolation::NotCommitted:
  case ProtocolViolation::NotWaited:
  case ProtocolViolation::EarlyUse:
    int64_t depth = v.kind == ProtocolViolation::EarlyUse ? v.waitDepth : 0;
    bool commit = v.uncommitted || v.kind == ProtocolViolation::NotCommitted;
    if (own) {
      if (commit)
        CommitGroupOp::create(b, loc);
      WaitGroupOp::create(b, loc, depth);
    } else {
      if (commit)
        NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, depth);
    }
    return;
  }
}

struct InsertSynchronizationPass
    : nvwgmma::impl::NVWGMMAInsertSynchronizationBase<
          InsertSynchronizationPass> {
  void runOnOperation() override {
    constexpr int kMaxRepairs = 1000;
    auto repairable = [](const ProtocolViolation &v) { return v.repairable(); };
    for (int i = 0; i < kMaxRepairs; ++i) {
      SmallVector<ProtocolViolation> violations =
          analyzeProtocol(getOperation());
      auto first = llvm::find_if(violations, repairable);
      if (first != violations.end()) {
        repair(*first);
        continue;
      }
      // What is left is a pipeline race: reported, never serialised away.
      for (const ProtocolViolation &v : violations)
        reportProtocolViolation(v);
      if (llvm::any_of(violations, [](const ProtocolViolation &v) {
            return !v.isWarning();
          }))
        signalPassFailure();
      return;
    }
    // Each repair removes its violation, so only pathological IR gets here.
    SmallVector<ProtocolViolation> left = analyzeProtocol(getOperation());
    llvm::erase_if(left,
                   [](const ProtocolViolation &v) { return v.isWarning(); });
    if (left.empty())
      return;
    left.front().at->emitError()
        << "the repairs must reach a correct function within " << kMaxRepairs
        << " insertions, but got this violation still open: "
        << left.front().message();
    signalPassFailure();
  }
};

} // namespace
