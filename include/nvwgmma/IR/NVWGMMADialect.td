//===- NVWGMMADialect.td - nvwgmma dialect definition ------*- tablegen -*-===//
//
// The dialect and the op base class every nvwgmma op derives from.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_DIALECT_TD
#define NVWGMMA_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def NVWGMMA_Dialect : Dialect {
  let name = "nvwgmma";
  let cppNamespace = "::mlir::nvwgmma";
  let summary = "Hopper warpgroup matrix-multiply-accumulate (wgmma) operations";
  let description = [{
    The `nvwgmma` dialect models the PTX `wgmma` instruction family of NVIDIA
    Hopper (`sm_90a`): `wgmma.fence`, `wgmma.mma_async` (dense and sparse),
    `wgmma.commit_group` and `wgmma.wait_group`.

    Every op accepts exactly the variants that `ptxas -arch=sm_90a` accepts and
    refuses every other one with a labelled diagnostic (see
    `docs/Constraints.md`). Ops lower to upstream `nvvm` where upstream can
    express them and to LLVM dialect (intrinsics and inline PTX) always.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

// Every wgmma instruction executes in a function body (rule placement_c1):
// outside one there is nothing to lower it into.
def NVWGMMA_InsideFunction : NativeOpTrait<"InsideFunction"> {
  let cppNamespace = "::mlir::nvwgmma";
}

class NVWGMMA_Op<string mnemonic, list<Trait> traits = []>
    : Op<NVWGMMA_Dialect, mnemonic, !listconcat([NVWGMMA_InsideFunction], traits)>;

#endif // NVWGMMA_DIALECT_TD
