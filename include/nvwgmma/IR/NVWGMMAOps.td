//===- NVWGMMAOps.td - nvwgmma operations ------------------*- tablegen -*-===//
//
// One op per PTX wgmma instruction. Mnemonics follow PTX without `wgmma.`.
// Verifiers are thin: they call the rule table in lib/IR/Constraints.cpp,
// whose rules carry the labels of docs/Constraints.md.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_OPS_TD
#define NVWGMMA_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "nvwgmma/IR/NVWGMMADialect.td"
include "nvwgmma/IR/NVWGMMAEnums.td"
include "nvwgmma/IR/NVWGMMAAttrs.td"

def NVWGMMA_FenceOp : NVWGMMA_Op<"fence"> {
  let summary = "wgmma.fence.sync.aligned: order register accesses before wgmma";
  let description = [{
    Establishes an ordering between prior accesses to any warpgroup registers
    and the register accesses (accumulator and A fragment) of subsequent
    `nvwgmma.mma_async` ops. Required before the first `mma_async` and
    whenever the warpgroup touched those registers in between, except for
    accumulator chaining between `mma_async` ops of the same shape.

    ```mlir
    nvwgmma.fence
    ```

    Lowers to `nvvm.wgmma.fence.aligned` or to the LLVM intrinsic
    `llvm.nvvm.wgmma.fence.sync.aligned`. Requires `sm_90a`, PTX ISA 8.0.

    [PTX ISA 9.7.15.7.1](https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#asynchronous-warpgroup-level-matrix-instructions-wgmma-fence)
  }];
  let assemblyFormat = "attr-dict";
}

def NVWGMMA_CommitGroupOp : NVWGMMA_Op<"commit_group"> {
  let summary = "wgmma.commit_group.sync.aligned: close the current wgmma-group";
  let description = [{
    Commits all prior uncommitted `nvwgmma.mma_async` ops of the executing
    warpgroup into one wgmma-group. With no uncommitted op it creates an
    empty group. PTX gives the instruction no type or layout suffix, and
    neither does this op.

    ```mlir
    nvwgmma.commit_group
    ```

    Lowers to `nvvm.wgmma.commit.group.sync.aligned` or to the LLVM intrinsic
    `llvm.nvvm.wgmma.commit_group.sync.aligned`. Requires `sm_90a`, PTX 8.0.

    [PTX ISA 9.7.15.7.2](https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#asynchronous-warpgroup-level-matrix-instructions-wgmma-commit-group)
  }];
  let assemblyFormat = "attr-dict";
}

def NVWGMMA_WaitGroupOp : NVWGMMA_Op<"wait_group",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "wgmma.wait_group.sync.aligned N: wait for all but N groups";
  let description = [{
    Waits until at most `N` of the most recent wgmma-groups are pending and
    all prior ones have completed. `N` is an immediate: any non-negative
    64-bit integer is accepted, as by ptxas (rule wait_group_c1).

    ```mlir
    nvwgmma.wait_group 0
    nvwgmma.wait_group 1
    %d2, %a2 = nvwgmma.wait_group 0 (%d, %a
        : !llvm.struct<(f32, f32, f32, f32)>, !llvm.struct<(i32, i32, i32, i32)>)
    ```

    Optionally it takes the accumulators and A fragments it guards and
    returns them as new values: every later use takes the result, so
    nothing that reads them can be scheduled above the wait (LLVM moves
    arithmetic across an operand-less wait: loop-invariant code motion
    hoists a use of the accumulator out of a loop whose body waits). Each
    value is an LLVM struct of 32-bit registers (f32, i32, vector<2xf16>,
    vector<2xbf16>) or one such register (rule wait_group_c2).

    Without values it lowers to `nvvm.wgmma.wait.group.sync.aligned N` or to
    the LLVM intrinsic `llvm.nvvm.wgmma.wait_group.sync.aligned(i64 N)`;
    with values, to an `llvm.inline_asm` with side effects whose outputs are
    tied to the registers it takes (as Triton's wait). Requires `sm_90a`,
    PTX ISA 8.0.

    [PTX ISA 9.7.15.7.3](https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#asynchronous-warpgroup-level-matrix-instructions-wgmma-wait-group)
  }];
  let arguments = (ins I64Attr:$group, Variadic<AnyType>:$values);
  let results = (outs Variadic<AnyType>:$results);
  // The values in parentheses: a bare `%x` after N would swallow the next
  // line's result name.
  let assemblyFormat =
      "$group (` ` `(` $values^ `:` type($values) `)`)? attr-dict";
  let builders = [OpBuilder<(ins "uint64_t":$group), [{
    build($_builder, $_state, group, ::mlir::ValueRange());
  }]>];
  let hasVerifier = 1;
}

// Operand types carry their rule label, so the ODS diagnostic names the rule
// like the rule table's do.
def NVWGMMA_DescriptorType : Type<CPred<"$_self.isSignlessInteger(64)">,
    "i64 shared-memory descriptor (mma_async_c17)", "::mlir::IntegerType">,
    BuildableType<"$_builder.getIntegerType(64)">;
def NVWGMMA_ScaleDValueType : Type<CPred<"$_self.isSignlessInteger(1)">,
    "i1 scale-d (mma_async_c16)", "::mlir::IntegerType">,
    BuildableType<"$_builder.getIntegerType(1)">;
def NVWGMMA_SparseMetaType : Type<CPred<"$_self.isSignlessInteger(32)">,
    "i32 sparsity metadata (mma_async_sp_c4)", "::mlir::IntegerType">,
    BuildableType<"$_builder.getIntegerType(32)">;

// The mma_async family: the dense and the sparse op share every operand,
// attribute, group of the syntax and rule; the sparse one adds its metadata
// operand, selector attribute and `sparsity [...]` group after C.
class NVWGMMA_MmaAsyncBase<string mnemonic, dag sparseOperands,
                           dag sparseAttrs, string sparseFormat>
    : NVWGMMA_Op<mnemonic> {
  let arguments = !con(
    (ins AnyType:$a, NVWGMMA_DescriptorType:$descB, AnyType:$acc),
    sparseOperands,
    (ins Optional<NVWGMMA_ScaleDValueType>:$scaleDValue),
    sparseAttrs,
    (ins
      NVWGMMA_ShapeAttr:$shape,
      NVWGMMA_ElemTypeAttr:$typeD,
      OptionalAttr<NVWGMMA_ScaleDAttr>:$scaleD,
      UnitAttr:$satfinite,
      NVWGMMA_ElemTypeAttr:$typeA,
      NVWGMMA_ScaleInAttr:$scaleA,
      NVWGMMA_LayoutAttr:$layoutA,
      NVWGMMA_ElemTypeAttr:$typeB,
      NVWGMMA_ScaleInAttr:$scaleB,
      NVWGMMA_LayoutAttr:$layoutB));
  let results = (outs AnyType:$res);
  let assemblyFormat = "$a `,` $descB `,` $acc `,` " # sparseFormat # [{
    qualified($shape) `,`
    `D` ` ` `[` custom<EnumKeyword>($typeD) `,`
        custom<ScaleD>($scaleDValue, $scaleD)
        (`,` `satfinite` $satfinite^)? `]` `,`
    `A` ` ` `[` custom<EnumKeyword>($typeA) `,` custom<EnumKeyword>($scaleA)
        `,` custom<EnumKeyword>($layoutA) `]` `,`
    `B` ` ` `[` custom<EnumKeyword>($typeB) `,` custom<EnumKeyword>($scaleB)
        `,` custom<EnumKeyword>($layoutB) `]`
    attr-dict `:` type($a) `,` type($acc) `->` type($res)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The op's configuration as the rule table and the PTX emitter see it.
    MmaAsyncConfig getConfig();
    /// True when A is a register fragment rather than a descriptor.
    bool isAFromRegisters() { return !getA().getType().isInteger(64); }
  }];
}

def NVWGMMA_MmaAsyncOp : NVWGMMA_MmaAsyncBase<"mma_async", (ins), (ins), ""> {
  let summary = "wgmma.mma_async.sync.aligned: D = A * B (+ D) on a warpgroup";
  let description = [{
    Issues one asynchronous warpgroup matrix multiply-accumulate of shape
    m64nNkK. A is a 64-bit shared-memory matrix descriptor (`i64`) or a
    register fragment of exactly four 32-bit registers; B is always a
    descriptor; the accumulator is an `!llvm.struct` of N/2 registers (`f32`
    for f32, `i32` for s32) or N/4 registers of packed 2 x f16 (`i32`) for an
    f16 accumulator. The result has the accumulator's type.

    Grammar (groups in the order of the PTX operands):

    ```
    %d = nvwgmma.mma_async A, B-desc, C, #nvwgmma.shape<m = 64, n = N, k = K>,
           D [dtype, scale-d (, satfinite)?],
           A [atype, scale-a, layout-a],
           B [btype, scale-b, layout-b]
           : type(A), type(C) -> type(D)
    ```

    * `scale-d` is `zero` (D = A*B), `one` (D = A*B + D) or an `i1` SSA value
      decided at run time (e.g. `k > 0` in a K loop).
    * `scale-a`/`scale-b` are `one` or `neg` (imm-scale -1; f16, bf16, tf32
      and fp8 only).
    * Layouts follow upstream nvvm: A `row` and B `col` are the untransposed
      defaults; A `col` sets imm-trans-a (descriptor A only), B `row` sets
      imm-trans-b. Transposes exist for f16 and bf16 only.
    * `satfinite` exists for s8/u8 only. b1 is emitted as `.and.popc`, the
      only b1 operation PTX has for wgmma.

    Example:

    ```mlir
    %d = nvwgmma.mma_async %descA, %descB, %acc,
           #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, one], A [f16, one, row], B [f16, one, col]
           : i64, !llvm.struct<(f32, f32, f32, f32)>
           -> !llvm.struct<(f32, f32, f32, f32)>
    ```

    Requires `sm_90a`; PTX ISA 8.0, or 8.4 for mixed s8/u8.

    [PTX ISA 9.7.15.5.2](https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#asynchronous-warpgroup-level-matrix-instructions-wgmma-mma)
  }];
}

def NVWGMMA_MmaAsyncSpOp : NVWGMMA_MmaAsyncBase<"mma_async.sp",
    (ins NVWGMMA_SparseMetaType:$spMeta), (ins I64Attr:$spSelector),
    "`sparsity` ` ` `[` $spMeta `,` $spSelector `]` `,`"> {
  let summary = "wgmma.mma_async.sp.sync.aligned: D = A * B (+ D), A structured-sparse";
  let description = [{
    The sparse form of `nvwgmma.mma_async`: A is 2:4 structured-sparse (1:2
    for tf32) and holds only its non-zero half; `sparsity [meta, selector]`
    gives the 32-bit metadata register and the sparsity-selector immediate.
    K is twice the dense K (32 for f16/bf16, 16 for tf32, 64 for fp8 and
    s8/u8); b1 has no sparse form. Every other operand, group and rule is
    that of `nvwgmma.mma_async`.

    ```mlir
    %d = nvwgmma.mma_async.sp %descA, %descB, %acc, sparsity [%meta, 0],
           #nvwgmma.shape<m = 64, n = 8, k = 32>,
           D [f32, one], A [f16, one, row], B [f16, one, col]
           : i64, !llvm.struct<(f32, f32, f32, f32)>
           -> !llvm.struct<(f32, f32, f32, f32)>
    ```

    The selector is 0 or 1 for f16, bf16 and tf32 and only 0 for fp8 and
    s8/u8 (what ptxas accepts; the ISA's general "0..3" does not apply to
    wgmma). Requires `sm_90a`; PTX ISA 8.2, or 8.4 for mixed s8/u8.

    [PTX ISA 9.7.15.6.3](https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-sp)
  }];
}

#endif // NVWGMMA_OPS_TD
