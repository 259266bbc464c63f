//===- Passes.td - nvwgmma checks and repairs --------------*- tablegen -*-===//
//
// Passes over IR that holds nvwgmma ops which keep its dialects: the target
// and protocol checks, the synchronization repair and the PTX printer.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_TRANSFORMS_PASSES_TD
#define NVWGMMA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def NVWGMMAPrintPtx : Pass<"nvwgmma-print-ptx"> {
  let summary = "Print the PTX instruction of every nvwgmma op";
  let description = [{
    Writes, for each nvwgmma op, to stdout: its location and the PTX text
    the lowering will emit, with operands named (`%d0`,
    `%descB`) and immediates substituted. The IR is not changed.
  }];
  let options = [
    Option<"inlineAsm", "inline-asm", "bool", /*default=*/"false",
           "print the raw inline-asm text and constraints instead">
  ];
}

def NVWGMMAVerifyInlineAsm : Pass<"nvwgmma-verify-inline-asm"> {
  let summary = "Judge every wgmma.mma_async written as inline asm by the rule table";
  let description = [{
    Reads the configuration of each `wgmma.mma_async[.sp]` in an
    `llvm.inline_asm` (upstream's `convert-nvvm-to-llvm` output, Triton's,
    hand-written) — shape, types, `.satfinite`, `.and.popc`, the A source,
    scale-d, the immediates, the D and A register counts — and reports what
    ptxas would reject with the rule's label and message, as for an
    `nvwgmma.mma_async`: for example upstream's b1 multiply, which it emits
    without `.and.popc` (asm_c1), or an N outside the family's lattice. The
    IR is not changed.
  }];
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

def NVWGMMACheckProtocol : Pass<"nvwgmma-check-protocol"> {
  let summary = "Report wgmma fence/commit/wait/async-proxy protocol violations";
  let description = [{
    A dataflow analysis over every function (structured scf.for/scf.if and
    plain CFGs) that reports, with an error and a note at the op involved:

    * protocol_c1: an mma_async with no nvwgmma.fence since the last
      non-wgmma access to its accumulator or A-fragment registers
      (accumulator chaining between mma_async ops of the same shape is
      allowed);
    * protocol_c2: an mma_async not committed before the function returns;
    * protocol_c3: an mma_async whose group is not waited on before the
      function returns;
    * protocol_c4: a non-wgmma use of an mma_async result before a
      wait_group guarantees its group completed (`wait_group N` completes
      all but the N most recent groups); re-bundling the registers into the
      operands of a later mma_async (llvm.insertvalue/extractvalue/bitcast)
      is not a use;
    * protocol_c5: a generic-proxy store to shared memory (address space 3)
      followed by an mma_async with no fence.proxy.async in between.

    and the pipeline rules, over TMA loads, mbarriers and ring stages
    addressed through a loop counter ((k + c) mod S):

    * protocol_c6: an mma_async reads a stage before a wait on that stage's
      full barrier in the same round, or reads shared memory a generic store
      wrote with no barrier since;
    * protocol_c7: a stage is released (arrive on its empty barrier) or
      overwritten while a wgmma group reading it may be pending;
    * protocol_c8: an expect_tx byte count differs from the bytes of the TMA
      loads completing on that barrier slot;
    * protocol_c9: a try_wait.parity whose parity does not follow the round
      of the stage it waits on, or has the polarity that passes before the
      stage is filled (full barrier) or never passes in the first round
      (empty barrier).

    Upstream nvvm.wgmma.* ops are checked like nvwgmma ops. Where the
    pipeline rules cannot relate an address, a counter or a byte count, the
    function gets one warning (protocol_unchecked) counting those places by
    rule, so that no diagnostic means checked and clean; `strict=true`
    reports each place as an error instead. Loops are analysed to their
    steady state, so a software-pipelined K loop (`wait_group 1` inside,
    `wait_group 0` after) passes. Limits are in docs/Protocol.md.
  }];
  let options = [
    Option<"strict", "strict", "bool", /*default=*/"false",
           "Also report what the pipeline rules could not prove">,
    Option<"unchecked", "unchecked", "bool", /*default=*/"true",
           "Warn once per function where the pipeline rules could not "
           "relate some places (normal mode)">,
  ];
}

def NVWGMMAInsertSynchronization : Pass<"nvwgmma-insert-synchronization"> {
  let summary = "Insert the fences, commits and waits the protocol checker asks for";
  let description = [{
    Repeatedly runs the protocol analysis and repairs each violation at the
    latest correct point: a fence right before an unfenced mma_async
    (protocol_c1), a commit and the weakest `wait_group N` that completes
    the group right before an early use (c4) or the return (c2, c3), and
    `fence.proxy.async` right before an mma_async that follows a shared
    store (c5). Correct functions are left unchanged; the pass is
    idempotent. The pipeline rules (c6-c9) are never repaired: serialising
    a race away would hide a design error, so the pass reports them as the
    checker does and fails.

    Repairs are written in the function's own dialect: nvwgmma ops where it
    already uses nvwgmma, upstream `nvvm.wgmma.*` ops otherwise (IR from
    other front ends stays theirs).
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::nvwgmma::NVWGMMADialect"];
}

#endif // NVWGMMA_TRANSFORMS_PASSES_TD
