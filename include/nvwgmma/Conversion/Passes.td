//===- Passes.td - nvwgmma conversions ---------------------*- tablegen -*-===//
//
// The two lowerings of nvwgmma ops. Passes that check or repair IR without
// changing its dialect live in nvwgmma/Transforms/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_CONVERSION_PASSES_TD
#define NVWGMMA_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertNVWGMMAToNVVM : Pass<"convert-nvwgmma-to-nvvm"> {
  let summary = "Lower nvwgmma ops to upstream nvvm.wgmma.* ops";
  let description = [{
    fence, commit_group and wait_group become their `nvvm.wgmma.*` twins.
    An `mma_async` that upstream `nvvm.wgmma.mma_async` can express (A from a
    descriptor, constant scale-d, not b1) becomes that op with the same
    attributes. Every other `mma_async` (A in registers, runtime scale-d,
    b1, sparse) is lowered to the same inline PTX that
    `--convert-nvwgmma-to-llvm` emits, so the pass always succeeds.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def ConvertNVWGMMAToLLVM : Pass<"convert-nvwgmma-to-llvm"> {
  let summary = "Lower nvwgmma ops to LLVM dialect (intrinsics + inline PTX)";
  let description = [{
    fence, commit_group and wait_group become `llvm.call_intrinsic` of
    `llvm.nvvm.wgmma.{fence,commit_group,wait_group}.sync.aligned`;
    `mma_async` becomes `llvm.inline_asm` built by the PTX emitter. For the
    variants upstream covers, the asm and constraint strings are
    byte-identical to upstream `--convert-nvvm-to-llvm`.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def RaiseNVVMToNVWGMMA : Pass<"nvwgmma-raise-nvvm"> {
  let summary = "Raise upstream nvvm.wgmma.* ops to nvwgmma ops";
  let description = [{
    `nvvm.wgmma.fence.aligned`, `nvvm.wgmma.commit.group.sync.aligned`,
    `nvvm.wgmma.wait.group.sync.aligned` and `nvvm.wgmma.mma_async` become
    their nvwgmma twins, so nvwgmma's verifier (equal to ptxas), protocol
    checker and lowerings apply to IR produced by upstream's NVGPU lowering
    or any other pipeline. The inverse of `--convert-nvwgmma-to-nvvm`: raising
    and lowering again gives the input back. An upstream op whose PTX ptxas
    rejects (a b1 multiply, which upstream emits without `.and.popc`; types
    or shapes outside the lattice) is left in place and reported with the
    rule's label; the pass then fails.
  }];
  let dependentDialects = ["::mlir::nvwgmma::NVWGMMADialect"];
}

#endif // NVWGMMA_CONVERSION_PASSES_TD
