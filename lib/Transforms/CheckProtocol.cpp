//===- CheckProtocol.cpp - report wgmma protocol violations ---------------===//
//
// Turns the protocol analysis's findings into diagnostics: an error on the
// offending op, notes on the ops it relates to.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/Analysis/ProtocolAnalysis.h"
#include "nvwgmma/Transforms/Passes.h"

namespace mlir {
namespace nvwgmma {
#define GEN_PASS_DEF_NVWGMMACHECKPROTOCOL
#include "nvwgmma/Transforms/Passes.h.inc"
} // namespace nvwgmma
} // namespace mlir

using namespace mlir;
using namespace mlir::nvwgmma;

void mlir::nvwgmma::reportProtocolViolation(const ProtocolViolation &v) {
  // Emitted on the location, not the op: an op-attached diagnostic prints
  // the op, and an accumulator struct of 128 members is thousands of
  // characters of noise.
  InFlightDiagnostic diag =
      v.isWarning() ? emitWarning(v.at->getLoc()) : emitError(v.at->getLoc());
  diag << "'" << v.at->getName() << "' " << v.message();
  if (v.related)
    diag.attachNote(v.related->getLoc()) << v.note();
  for (const auto &[op, text] : v.notes)
    diag.attachNote(op->getLoc()) << text;
}

namespace {

struct CheckProtocolPass
    : nvwgmma::impl::NVWGMMACheckProtocolBase<CheckProtocolPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<ProtocolViolation> violations =
        analyzeProtocol(getOperation(), strict, unchecked);
    for (const ProtocolViolation &v : violations)
      reportProtocolViolation(v);
    if (llvm::any_of(violations,
                     [](const ProtocolViolation &v) { return !v.isWarning(); }))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
