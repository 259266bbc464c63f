"""IR helpers the kernel-layer modules share: i32 constants, i32 operands,
pointer offsets, a relaxed device-wide counter increment, the element type
of a dtype name, the by-value tensor-map parameter, and an empty kernel."""

from __future__ import annotations

from .. import _checks

# A kernel parameter holding a CUtensorMap by value (CUDA's
# `const __grid_constant__ CUtensorMap`): PTX `.param .align 64 .b8 p[128]`,
# its Value the generic address (cvta.param) that TMA reads the map from.
# The launch carries the map (runtime "map" arguments), so no device memory
# holds it: nothing to write before a launch, in any context or graph.
TENSOR_MAP_PARAM = (
    "!llvm.ptr {llvm.byval = !llvm.array<128 x i8>, llvm.align = 64 : i64, nvvm.grid_constant}"
)


def i32_constant(value: int, loc=None, ip=None):
    """An `llvm.mlir.constant` of type i32."""
    from ..dialects import llvm
    from ..ir import IntegerAttr, IntegerType

    i32 = IntegerType.get_signless(32)
    return llvm.ConstantOp(i32, IntegerAttr.get(i32, value), loc=loc, ip=ip).result


# GEPOp's marker for "this index is the next dynamic operand".
_DYNAMIC_INDEX = -(2**31)


def gep(base, offset, elem=None, *, loc=None, ip=None):
    """`base` advanced by `offset` elements of `elem` (default i8: bytes): a
    constant index for an int, a dynamic one for a Value."""
    from ..dialects import llvm
    from ..ir import IntegerType

    elem = IntegerType.get_signless(8) if elem is None else elem
    dynamic, static = ([], [offset]) if isinstance(offset, int) else ([offset], [_DYNAMIC_INDEX])
    return llvm.getelementptr(
        base.type, base, dynamic, static, elem, llvm.GEPNoWrapFlags.none, loc=loc, ip=ip
    )


def as_i32(value, what: str, *, wide: bool = False, loc=None, ip=None):
    """An i32 Value from an int or an i32 Value; with `wide`, i64 (truncated)
    and index (cast) Values are taken too."""
    from ..dialects import arith, llvm
    from ..ir import IndexType, IntegerType

    if isinstance(value, int) and not isinstance(value, bool):
        return i32_constant(_checks.integer(value, what, -(2**31), 2**31 - 1), loc, ip)
    value = _checks.value(value, what)
    i32 = IntegerType.get_signless(32)
    if isinstance(value.type, IntegerType) and value.type.width == 32:
        return value
    if wide and isinstance(value.type, IndexType):
        return arith.index_cast(i32, value, loc=loc, ip=ip)
    if wide and isinstance(value.type, IntegerType) and value.type.width == 64:
        return llvm.trunc(i32, value, llvm.IntegerOverflowFlags.none, loc=loc, ip=ip)
    expected = "an int or an i32/i64/index Value" if wide else "an int or an i32 Value"
    raise TypeError(f"{what} must be {expected}, but got {value.type}")


def atomic_increment(pointer):
    """Add 1 to the i32 at `pointer` (global), relaxed, device scope; the
    old value. Orderings the caller needs come from its own fences: LLVM's
    NVPTX backend drops a release on the atomicrmw itself."""
    from ..dialects import llvm

    return llvm.atomicrmw(llvm.AtomicBinOp.add, pointer, i32_constant(1),
                          llvm.AtomicOrdering.monotonic, syncscope="device",
                          alignment=4)  # fmt: skip


def spin_while(pointer, keep_waiting):
    """Load the i32 at `pointer` (global) with acquire ordering, device
    scope, until `keep_waiting(value)` (an i1 Value) is false; the last value
    One thread spins; its block synchronises the rest."""
    from ..dialects import llvm, scf
    from ..ir import InsertionPoint, IntegerType

    i32 = IntegerType.get_signless(32)
    spin = scf.WhileOp([], [])
    with InsertionPoint(spin.before.blocks.append()):
        value = llvm.load(i32, pointer, alignment=4, ordering=llvm.AtomicOrdering.acquire,
                          syncscope="device")  # fmt: skip
        scf.ConditionOp(keep_waiting(value), [])
    with InsertionPoint(spin.after.blocks.append()):
        scf.YieldOp([])


def element_type(dtype: str):
    """The MLIR type a `dtype` element is stored as: bf16, f16, f32, s32
    (i32), and fp8 as its raw byte (i8)."""
    from ..ir import BF16Type, F16Type, F32Type, IntegerType

    if dtype in ("e4m3", "e5m2"):
        return IntegerType.get_signless(8)
    if dtype == "s32":
        return IntegerType.get_signless(32)
    return {"bf16": BF16Type, "f16": F16Type, "f32": F32Type}[dtype].get()


def warpgroup_index(tid):
    """The warpgroup of thread `tid` (an i32 Value): tid / 128, broadcast
    from lane 0 (shfl.sync.idx). The same in every lane, but only the
    broadcast lets ptxas prove it: values derived from it (a consumer's
    wgmma descriptors) then live in uniform registers and feed each wgmma
    directly, where a plain tid / 128 makes ptxas build them in per-thread
    registers and move them over (R2UR) before every wgmma -- 2-5 % more
    cycles in the GEMM mainloops (H100, Nsight Compute, docs/performance.md).
    CUTLASS's canonical_warp_group_idx broadcasts for the same reason.
    (Attention keeps tid / 128: with the broadcast, two of its
    configurations spill.)"""
    from ..dialects import arith, nvvm

    index = arith.divui(tid, i32_constant(128))
    return nvvm.shfl_sync(index.type, i32_constant(-1), index, i32_constant(0),
                          i32_constant(0x1F), nvvm.ShflKind.idx)  # fmt: skip


def launch_registers(threads: int) -> int:
    """Registers per thread a CTA of `threads` threads launches with: its
    share of the 64K register file, rounded down to 8 (168 for 384
    threads). setmaxnreg.inc takes only what the CTA's warpgroups gave back
    with setmaxnreg.dec, so their counts together stay within this share."""
    return 65536 // threads // 8 * 8


def check_registers(consumers: int, consumer_regs: int, producer_regs: int) -> None:
    """ValueError unless the setmaxnreg counts of a kernel of one producer
    and `consumers` consumer warpgroups are multiples of 8 in [24, 256] and
    fit what the CTA launches with (kernel_shell's entry count): a kernel
    whose increases ask for more assembles, then hangs -- 3 consumers at
    232 registers ask 736 of 512."""
    from .. import _checks

    for name, regs in (("consumer_regs", consumer_regs), ("producer_regs", producer_regs)):
        _checks.integer(regs, name, 24, 256)
    share = launch_registers(128 * (1 + consumers))
    launch = consumer_regs if share > 255 else share  # kernel_shell states the increase
    limit = (1 + consumers) * launch
    if consumers * consumer_regs + producer_regs > limit or consumer_regs % 8 or producer_regs % 8:
        raise ValueError(
            f"registers must be multiples of 8 within what the CTA launches with "
            f"({consumers} x consumer + producer <= {1 + consumers} x {launch} = {limit}), "
            f"but got {consumer_regs} and {producer_regs}"
        )


def kernel_shell(name: str, signature, threads: int, cluster: int = 1,
                 setmaxnreg: int | None = None, state_entry: bool = False):  # fmt: skip
    """(module, entry block, {parameter name: Value}) of an empty kernel
    `name` with the parameters `signature` ((name, type) pairs), at most
    `threads` threads per CTA, `cluster` CTAs per cluster along x, and the
    dynamic shared memory `@dsmem` (declared 16-aligned: see
    smem.aligned_base). Build the body before the entry's llvm.return.
    `setmaxnreg`: the most registers a warpgroup of the kernel increases
    to. ptxas needs the entry count to apply setmaxnreg and derives it from
    the thread count only under its 255-register cap; with a larger share
    (256 threads) it ignores setmaxnreg (C7508) unless the kernel states it
    (`.maxnreg`), as the increase's count. `state_entry`: state the share
    (`.maxnreg`) below the cap too -- a kernel whose registers stay under
    its share (the GEMM's narrow tiles) has setmaxnreg ignored otherwise.
    Not stated by default: elsewhere it can change the code (a wide GEMM
    tile's registers epilogue spilled under it, the attention kernels'
    instructions changed)."""
    from ..ir import DenseI32ArrayAttr, IntegerAttr, IntegerType, Location, Module

    params = ", ".join(f"%{n}: {t}" for n, t in signature)
    with Location.unknown():
        module = Module.parse(
            f"""
  llvm.mlir.global external @dsmem() {{addr_space = 3 : i32, alignment = 16 : i64}}
      : !llvm.array<0 x i8>
  llvm.func @{name}({params}) attributes {{nvvm.kernel}} {{
    llvm.return
  }}"""
        )
    func = module.body.operations[1]
    func.attributes["nvvm.maxntid"] = DenseI32ArrayAttr.get([threads, 1, 1])
    share = launch_registers(threads)
    if setmaxnreg is not None and (share > 255 or state_entry):
        entry = setmaxnreg if share > 255 else share
        func.attributes["nvvm.maxnreg"] = IntegerAttr.get(IntegerType.get_signless(32), entry)
    if cluster > 1:
        func.attributes["nvvm.cluster_dim"] = DenseI32ArrayAttr.get([cluster, 1, 1])
    entry = func.regions[0].blocks[0]
    return module, entry, dict(zip((n for n, _ in signature), entry.arguments))
