//===- Passes.td - nvwgmma passes --------------------------*- tablegen -*-===//

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

def NVWGMMAPrintPtx : Pass<"nvwgmma-print-ptx"> {
  let summary = "Print the PTX instruction of every nvwgmma op";
  let description = [{
    Writes one line per nvwgmma op to stdout (or to `file`): its location
    and the PTX text the lowering will emit, with operands named (`%d0`,
    `%descB`) and immediates substituted. The IR is not changed.
  }];
  let options = [
    Option<"inlineAsm", "inline-asm", "bool", /*default=*/"false",
           "print the raw inline-asm text and constraints instead">
  ];
}

def NVWGMMACheckTarget : Pass<"nvwgmma-check-target", "ModuleOp"> {
  let summary = "Check that a PTX version and target satisfy every nvwgmma op";
  let description = [{
    Fails with a diagnostic naming the first op that needs more than
    `ptx-version` (e.g. 84 for mixed s8/u8) or a target other than `chip`
    (wgmma exists on sm_90a only). `compile_to_ptx` runs it so users get
    this message instead of ptxas's.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "the target the PTX will be assembled for">,
    Option<"ptxVersion", "ptx-version", "unsigned", /*default=*/"0",
           "PTX ISA version as major*10+minor; 0 means the lowest that "
           "satisfies every op, which is always accepted">
  ];
}

#endif // NVWGMMA_CONVERSION_PASSES_TD
