//===- InsertSynchronization.cpp - repair the wgmma protocol --------------===//
//
// Applies, one at a time, the repair each protocol violation asks for, and
// re-analyses after each: a commit or wait inserted for one use often
// satisfies the next, which keeps the inserted set small.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/Analysis/ProtocolAnalysis.h"
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

/// Inserts, before the offending op, what the violation asks for.
void repair(const ProtocolViolation &v) {
  OpBuilder b(v.at);
  Location loc = v.at->getLoc();
  switch (v.kind) {
  case ProtocolViolation::MissingFence:
    FenceOp::create(b, loc);
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
    if (v.uncommitted || v.kind == ProtocolViolation::NotCommitted)
      CommitGroupOp::create(b, loc);
    WaitGroupOp::create(
        b, loc, v.kind == ProtocolViolation::EarlyUse ? v.waitDepth : 0);
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
      if (!violations.empty())
        signalPassFailure();
      return;
    }
    // Each repair removes its violation, so only pathological IR gets here.
    SmallVector<ProtocolViolation> left = analyzeProtocol(getOperation());
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
