//===- Protocol.cpp - check and repair the wgmma protocol -----------------===//

#include "ProtocolAnalysis.h"

#include "nvwgmma/Conversion/Passes.h"
#include "nvwgmma/IR/NVWGMMAOps.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace nvwgmma {
#define GEN_PASS_DEF_NVWGMMACHECKPROTOCOL
#define GEN_PASS_DEF_NVWGMMAINSERTSYNCHRONIZATION
#include "nvwgmma/Conversion/Passes.h.inc"
} // namespace nvwgmma
} // namespace mlir

using namespace mlir;
using namespace mlir::nvwgmma;

namespace {

struct CheckProtocolPass
    : nvwgmma::impl::NVWGMMACheckProtocolBase<CheckProtocolPass> {
  void runOnOperation() override {
    SmallVector<ProtocolViolation> violations = analyzeProtocol(getOperation());
    for (const ProtocolViolation &v : violations) {
      InFlightDiagnostic diag = v.at->emitError() << v.message();
      if (v.related)
        diag.attachNote(v.related->getLoc()) << v.note();
    }
    if (!violations.empty())
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};

/// Repairs one violation; returns false if it cannot.
bool repair(const ProtocolViolation &v) {
  OpBuilder b(v.at);
  Location loc = v.at->getLoc();
  switch (v.kind) {
  case ProtocolViolation::MissingFence:
    FenceOp::create(b, loc);
    return true;
  case ProtocolViolation::MissingProxyFence:
    NVVM::FenceProxyOp::create(
        b, loc,
        NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    return true;
  case ProtocolViolation::NotCommitted:
  case ProtocolViolation::NotWaited:
  case ProtocolViolation::EarlyUse:
    if (v.uncommitted || v.kind == ProtocolViolation::NotCommitted)
      CommitGroupOp::create(b, loc);
    WaitGroupOp::create(b, loc,
                        v.kind == ProtocolViolation::EarlyUse ? v.waitDepth : 0);
    return true;
  }
  return false;
}

struct InsertSynchronizationPass
    : nvwgmma::impl::NVWGMMAInsertSynchronizationBase<
          InsertSynchronizationPass> {
  void runOnOperation() override {
    // One repair at a time, re-analysing after each: a commit or wait
    // inserted for one use often satisfies the next, which keeps the
    // inserted set small.
    for (int i = 0; i < 1000; ++i) {
      SmallVector<ProtocolViolation> violations =
          analyzeProtocol(getOperation());
      if (violations.empty())
        return;
      if (!repair(violations.front())) {
        violations.front().at->emitError()
            << "cannot repair: " << violations.front().message();
        return signalPassFailure();
      }
    }
    getOperation()->emitError()
        << "nvwgmma-insert-synchronization did not converge";
    signalPassFailure();
  }
};

} // namespace
