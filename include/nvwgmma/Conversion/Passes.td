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

def LegalizeMathForNVPTX : Pass<"nvwgmma-legalize-math"> {
  let summary = "Rewrite the math ops llc's NVPTX backend cannot select";
  let description = [{
    The NVPTX backend selects sqrt, fma, rounding and (f16/f32) exp2 and
    has no library for the rest: `math.exp`, `math.log`, `math.sin`,
    `math.tanh`, `math.erf`, ... would abort llc or stop mlir-translate.
    Under `fastmath<afn>`, exp, exp2, log, log2, sin, cos and tanh on f32
    (f16/bf16 through f32, vectors lane by lane) become the SFU's approximate
    instructions
    (`ex2.approx.ftz`, `lg2.approx.ftz`, `sin/cos.approx.ftz`,
    `tanh.approx`); otherwise the transcendental functions become upstream
    MLIR's f32 expansions and polynomial approximations (f16/bf16 computed in
    f32; vectors lane by lane), and ipowi, log10, sincos, isinf, isnormal and clampf are expanded. A
    transcendental op on f64, which neither PTX nor the approximations
    cover, is reported (math_c1). Run before `--convert-math-to-llvm`
    (`nvwgmma-to-llvm-pipeline` does).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

#endif // NVWGMMA_CONVERSION_PASSES_TD
