"""Shared-memory addressing in IR: the swizzle, and descriptors stepped
along K and across the stages of a ring buffer.

    from nvwgmma.kernel import smem, tile_geometry
    g = tile_geometry("bf16", 128, 64, "K", "128B")
    off = smem.swizzle_offset(byte_offset, "128B")      # arith ops on i32/i64/index
    desc = smem.tile_descriptor(base_ptr, g)             # k step 0 of stage 0
    d_k = smem.step_descriptor(desc, g, k_step=kk)       # kk: int or Value
    d_s = smem.step_descriptor(desc, g, stage=s)         # s: int or Value

The swizzle is the one of `nvwgmma.layouts.swizzle_address` (tested equal
by folding constants); descriptor steps add to the start-address field,
which is exact while the tile lies in the 256 KiB shared window.
"""

from __future__ import annotations

from .. import _checks
from ..descriptors import Swizzle, swizzle_width
from ._ir import gep

__all__ = ["aligned_base", "swizzle_offset", "tile_descriptor", "step_descriptor"]


def _int_type_width(value) -> int | None:
    from ..ir import IndexType, IntegerType

    if isinstance(value.type, IntegerType):
        return value.type.width
    if isinstance(value.type, IndexType):
        return 64
    return None


def swizzle_offset(offset, swizzle, *, loc=None, ip=None):
    """`offset ^ (((offset >> 7) & (W/16 - 1)) << 4)` in arith ops: the byte
    offset, from a pattern-aligned base, at which a swizzled tile stores the
    byte the unswizzled layout keeps at `offset`. `offset` is an i32, i64 or
    index Value; "none" returns it unchanged."""
    from ..dialects import arith

    offset = _checks.value(offset, "offset")
    if _int_type_width(offset) not in (32, 64):
        raise TypeError(f"offset must be an i32, i64 or index Value, but got {offset.type}")
    swizzle = Swizzle.parse(swizzle)
    if swizzle == Swizzle.NONE:
        return offset

    def const(v):
        return arith.constant(offset.type, v, loc=loc, ip=ip)

    row = arith.shrui(offset, const(7), loc=loc, ip=ip)
    phase = arith.andi(row, const(swizzle_width(swizzle) // 16 - 1), loc=loc, ip=ip)
    mask = arith.shli(phase, const(4), loc=loc, ip=ip)
    return arith.xori(offset, mask, loc=loc, ip=ip)


def tile_descriptor(address, geometry, *, loc=None, ip=None):
    """The i64 descriptor of k step 0 of a tile at `address` (an
    `!llvm.ptr<3>` or an i32/i64 shared address aligned to
    `geometry.alignment`)."""
    from ..dialects import nvwgmma as wg

    return wg.descriptor(
        address,
        leading_byte_offset=geometry.leading_byte_offset,
        stride_byte_offset=geometry.stride_byte_offset,
        swizzle=geometry.swizzle,
        loc=loc,
        ip=ip,
    )


def _scaled(step, bytes_per_step: int, what: str, loc, ip):
    """step * bytes_per_step as an i64 Value, for an int or a Value step."""
    from ..dialects import llvm
    from ..ir import IntegerAttr, IntegerType

    i64 = IntegerType.get_signless(64)
    if not hasattr(step, "type"):
        step = _checks.integer(step, what, 0, 1 << 14)
        return llvm.ConstantOp(
            i64, IntegerAttr.get(i64, step * bytes_per_step), loc=loc, ip=ip
        ).result
    step = _checks.value(step, what)
    width = _int_type_width(step)
    if width is None:
        raise TypeError(f"{what} must be an int or an integer Value, but got {step.type}")
    if str(step.type) == "index":
        from ..dialects import arith

        step = arith.index_cast(i64, step, loc=loc, ip=ip)
    elif width < 64:
        step = llvm.zext(i64, step, loc=loc, ip=ip)
    elif width > 64:
        raise TypeError(f"{what} must be at most 64 bits wide, but got {step.type}")
    scale = llvm.ConstantOp(i64, IntegerAttr.get(i64, bytes_per_step), loc=loc, ip=ip).result
    return llvm.mul(step, scale, llvm.IntegerOverflowFlags.none, loc=loc, ip=ip)


def step_descriptor(desc, geometry, *, k_step=0, stage=0, stage_bytes=None, loc=None, ip=None):
    """The descriptor of instruction `k_step` of stage `stage` of a ring of
    tiles laid `stage_bytes` apart (default: `geometry.tile_bytes`), from the
    descriptor of k step 0 of stage 0. `k_step` and `stage` are ints or
    integer Values (a loop's induction variable, a stage index)."""
    from ..dialects import llvm

    desc = _checks.integer_value(desc, "desc", (64,))
    stage_bytes = geometry.tile_bytes if stage_bytes is None else stage_bytes
    stage_bytes = _checks.integer(stage_bytes, "stage_bytes", 0, 1 << 18)
    if stage_bytes % geometry.alignment:
        raise ValueError(
            f"stage_bytes must be a multiple of the tile alignment {geometry.alignment}, "
            f"but got {stage_bytes}"
        )
    if isinstance(k_step, int) and not isinstance(k_step, bool):
        _checks.integer(k_step, "k_step", 0, geometry.k_steps - 1)
        if geometry.k_atom_bytes:  # a wide tile: the step may cross into the next atom
            desc = _add_offset(desc, geometry.k_offset(k_step) // 16, loc, ip)
            k_step = 0
    elif geometry.k_atom_bytes:
        raise TypeError(
            "k_step must be an int for a tile wider than one swizzle atom (steps jump "
            f"between atoms), but got a {k_step.type} Value"
        )
    # The start-address field counts 16-byte units.
    for step, units, what in (
        (k_step, geometry.k_step_bytes // 16, "k_step"),
        (stage, stage_bytes // 16, "stage"),
    ):
        if isinstance(step, int) and not isinstance(step, bool) and step == 0:
            continue
        offset = _scaled(step, units, what, loc, ip)
        desc = llvm.add(desc, offset, llvm.IntegerOverflowFlags.none, loc=loc, ip=ip)
    return desc


def _add_offset(desc, units: int, loc, ip):
    from ..dialects import llvm

    if not units:
        return desc
    return llvm.add(desc, _scaled(1, units, "k_step", loc, ip), llvm.IntegerOverflowFlags.none,
                    loc=loc, ip=ip)  # fmt: skip


def aligned_base(base, alignment: int, *, loc=None, ip=None):
    """`base` (an `!llvm.ptr<3>`, e.g. the address of the dynamic shared
    memory) rounded up to `alignment` bytes at run time.

    Dynamic shared memory is only guaranteed 16-byte aligned. Declare its
    global with alignment 16, ask the launch for `alignment - 16` bytes more,
    and take stage buffers from here: a global declared 1024-aligned lets
    LLVM assume the round-up is a no-op and delete it, which is wrong
    whenever static shared memory (or the driver) shifts the start.
    """
    from ..dialects import llvm
    from ..ir import IntegerAttr, IntegerType

    base = _checks.value(base, "base")
    if not (isinstance(base.type, llvm.PointerType) and base.type.address_space == 3):
        raise TypeError(f"base must be an !llvm.ptr<3>, but got {base.type}")
    alignment = _checks.integer(alignment, "alignment", 1, 1 << 16)
    if alignment & (alignment - 1):
        raise ValueError(f"alignment must be a power of two, but got {alignment}")
    i32 = IntegerType.get_signless(32)

    def const(v):
        return llvm.ConstantOp(i32, IntegerAttr.get(i32, v), loc=loc, ip=ip).result

    address = llvm.ptrtoint(i32, base, loc=loc, ip=ip)
    rounded = llvm.and_(
        llvm.add(address, const(alignment - 1), llvm.IntegerOverflowFlags.none, loc=loc, ip=ip),
        const(-alignment),
        loc=loc,
        ip=ip,
    )
    pad = llvm.sub(rounded, address, llvm.IntegerOverflowFlags.none, loc=loc, ip=ip)
    return gep(base, pad, loc=loc, ip=ip)
