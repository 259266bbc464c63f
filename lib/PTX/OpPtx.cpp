//===- OpPtx.cpp - the PTX of any nvwgmma op ------------------------------===//
//
// One entry point for the text every nvwgmma op becomes, used by the PTX
// printer pass and by Python's `ptx` / `inline_asm`.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/IR/NVWGMMAOps.h"
#include "nvwgmma/PTX/PtxEmitter.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nvwgmma;

static PtxInstruction plain(std::string text) {
  PtxInstruction inst;
  inst.asmText = std::move(text);
  return inst;
}

std::optional<PtxInstruction> nvwgmma::buildPtx(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<PtxInstruction>>(op)
      .Case([](FenceOp) { return plain("wgmma.fence.sync.aligned;"); })
      .Case([](CommitGroupOp) {
        return plain("wgmma.commit_group.sync.aligned;");
      })
      .Case([](WaitGroupOp w) {
        return plain("wgmma.wait_group.sync.aligned " +
                     std::to_string(w.getGroup()) + ";");
      })
      .Default([](Operation *op) -> std::optional<PtxInstruction> {
        if (std::optional<MmaAsyncConfig> c = getMmaAsyncConfig(op))
          return buildMmaAsyncPtx(*c);
        return std::nullopt;
      });
}
