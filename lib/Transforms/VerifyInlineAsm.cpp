//===- VerifyInlineAsm.cpp - the rule table on inline-asm wgmma -----------===//
//
// ptxas-exact verification for wgmma that never was an nvwgmma op: the
// configuration read back from the asm (lib/PTX/ParsePtx.cpp) goes through
// the same checkMmaAsync as the op verifier.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/PTX/ParsePtx.h"
#include "nvwgmma/Transforms/Passes.h"

namespace mlir {
namespace nvwgmma {
#define GEN_PASS_DEF_NVWGMMAVERIFYINLINEASM
#include "nvwgmma/Transforms/Passes.h.inc"
} // namespace nvwgmma
} // namespace mlir

using namespace mlir;
using namespace mlir::nvwgmma;

namespace {
struct VerifyInlineAsmPass
    : nvwgmma::impl::NVWGMMAVerifyInlineAsmBase<VerifyInlineAsmPass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation()->walk([&](LLVM::InlineAsmOp op) {
      auto parsed = parseMmaAsyncAsm(op);
      if (!parsed)
        return;
      std::optional<RuleViolation> v;
      if (auto *error = std::get_if<RuleViolation>(&*parsed))
        v = *error;
      else {
        const AsmMmaAsync &mma = std::get<AsmMmaAsync>(*parsed);
        v = checkMmaAsync(mma.config, mma.aType, mma.accType, mma.accType);
      }
      if (!v)
        return;
      // On the location: the op's asm string is long and says nothing more.
      emitError(op.getLoc())
          << "'llvm.inline_asm' wgmma.mma_async: " << v->message;
      failedAny = true;
    });
    if (failedAny)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
