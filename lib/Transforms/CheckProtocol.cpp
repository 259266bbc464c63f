//===- CheckProtocol.cpp - report wgmma protocol violations ---------------===//
//
// Turns the protocol analysis's findings into diagnostics: an error on the
// offending op, a note on the op it relates to.
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

} // namespace
