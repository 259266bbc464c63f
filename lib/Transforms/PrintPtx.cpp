//===- PrintPtx.cpp - show the PTX each nvwgmma op becomes ----------------===//
//
// Prints, per nvwgmma op, the PTX the lowerings will emit, so a user can
// read what an op means without running llc.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/IR/NVWGMMAOps.h"
#include "nvwgmma/PTX/PtxEmitter.h"
#include "nvwgmma/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"

namespace mlir {
namespace nvwgmma {
#define GEN_PASS_DEF_NVWGMMAPRINTPTX
#include "nvwgmma/Transforms/Passes.h.inc"
} // namespace nvwgmma
} // namespace mlir

using namespace mlir;
using namespace mlir::nvwgmma;

namespace {
struct PrintPtxPass : nvwgmma::impl::NVWGMMAPrintPtxBase<PrintPtxPass> {
  using Base::Base;
  void runOnOperation() override {
    llvm::raw_ostream &os = llvm::outs();
    getOperation()->walk([&](Operation *op) {
      std::optional<PtxInstruction> ptx = buildPtx(op);
      if (!ptx)
        return;
      os << "// " << op->getName() << " at " << op->getLoc() << "\n";
      if (inlineAsm) {
        // Escaped as llvm.inline_asm prints it, so the two can be compared.
        os << "asm \"";
        llvm::printEscapedString(ptx->asmText, os);
        os << "\", \"" << ptx->getConstraints() << "\"\n";
        return;
      }
      std::string text = ptx->getReadable();
      os << text;
      if (!llvm::StringRef(text).ends_with("\n"))
        os << "\n";
    });
    markAllAnalysesPreserved();
  }
};
} // namespace
