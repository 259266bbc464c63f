//===- OpPtx.cpp - the PTX of any nvwgmma op ------------------------------===//

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
      .Case<MmaAsyncOp, MmaAsyncSpOp>(
          [](auto mma) { return buildMmaAsyncPtx(mma.getConfig()); })
      .Default([](Operation *) { return std::nullopt; });
}
