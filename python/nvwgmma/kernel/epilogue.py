"""Getting the accumulator out: IR that stores a warpgroup's m64nN
accumulator to global memory, converting on the way.

    from nvwgmma.kernel import epilogue
    epilogue.store_accumulator(d, c_ptr, ldc, d_type="f32", n=256,
                               out_type="bf16", row=tile_m, col=tile_n)

Thread t of the warpgroup holds, in register pair j (elements 2j, 2j+1),
D[16w + g + 8(j % 2), 8(j / 2) + 2q + {0, 1}] with w = t/32, g = (t%32)/4,
q = t%4 (nvwgmma.layouts.accumulator_map, measured on an H100): two
adjacent columns, so each pair is one 8-byte (f32) or 4-byte (f16/bf16)
store.
"""

from __future__ import annotations

import contextlib

from .. import _checks
from ..layouts import ELEMENT_BITS
from ._ir import as_i32, element_type, gep, i32_constant

__all__ = [
    "copy_staged",
    "issue_tma_store",
    "stage_accumulator",
    "stage_transposed",
    "staging_bytes",
    "staging_swizzle",
    "store_accumulator",
    "tma_store",
    "transposed_staging_bytes",
    "wait_store_read",
    "warpgroup_thread",
]

_FP8 = {"e4m3": "f8E4M3FN", "e5m2": "f8E5M2"}


def _accumulator(acc, d_type: str, n: int):
    """(acc, its member types) after checking it is the m64nN accumulator."""
    from ..lattice import accumulator_register_count

    count = accumulator_register_count(d_type, n)
    acc = _checks.value(acc, "acc")
    members = getattr(acc.type, "body", None)
    if members is None or len(members) != count:
        raise TypeError(
            f"acc must be the !llvm.struct of {count} registers of an m64n{n} {d_type} "
            f"accumulator, but got {acc.type}"
        )
    return acc, members


def _f32_pair(acc, j: int, member, loc, ip):
    """Accumulator elements 2j and 2j+1 (adjacent columns) as vector<2xf32>."""
    from ..dialects import llvm
    from ..ir import VectorType

    pair = llvm.mlir_undef(VectorType.get([2], member), loc=loc, ip=ip)
    for lane in range(2):
        element = llvm.extractvalue(member, acc, [2 * j + lane], loc=loc, ip=ip)
        pair = llvm.insertelement(pair, element, i32_constant(lane, loc, ip), loc=loc, ip=ip)
    return pair


def warpgroup_thread(*, loc=None, ip=None):
    """This thread's index in its warpgroup (tid.x mod 128), as i32."""
    from ..dialects import llvm, nvvm
    from ..ir import IntegerType

    tid = nvvm.read_ptx_sreg_tid_x(IntegerType.get_signless(32), loc=loc, ip=ip)
    return llvm.and_(tid, i32_constant(127, loc, ip), loc=loc, ip=ip)


def store_accumulator(
    acc,
    ptr,
    ld,
    *,
    d_type: str,
    n: int,
    out_type: str | None = None,
    row=0,
    col=0,
    thread=None,
    bounds=None,
    transposed=False,
    loc=None,
    ip=None,
):
    """Store the m64nN accumulator `acc` at rows row..row+63, columns
    col..col+n-1 of the row-major matrix at `ptr` (an `!llvm.ptr<1>`) with
    leading dimension `ld` elements; `transposed`: element (r, c) at
    c * ld + r instead (the matrix's transpose, row-major), one element at
    a time.

    d_type    the accumulator type: f32, f16 (packed pairs in i32) or s32
    out_type  the stored type: f32, bf16/f16 (round to nearest) or
              e4m3/e5m2 (round to nearest, saturated to the finite range)
              for an f32 accumulator; f16 or f32 for an f16 one; s32 for
              s32. Default: d_type.
    row, col, ld   ints or i32/i64/index Values (element units)
    thread    the index in the warpgroup (default: tid.x mod 128)
    bounds    (rows, cols) of the matrix (ints or i32 Values): elements
              outside are not stored, and a pair whose address is not
              aligned to its size (an odd `ld`) is stored element by element
    """
    from ..dialects import llvm
    from ..ir import F16Type, IntegerType, VectorType

    out_type = d_type if out_type is None else out_type
    allowed = {
        "f32": ("f32", "bf16", "f16", "e4m3", "e5m2"),
        "f16": ("f16", "f32"),
        "s32": ("s32",),
    }
    if d_type not in allowed:
        raise ValueError(f"d_type must be one of f32, f16, s32, but got {d_type!r}")
    if out_type not in allowed[d_type]:
        raise ValueError(
            f"out_type must be one of {', '.join(allowed[d_type])} for a {d_type} "
            f"accumulator, but got {out_type!r}"
        )
    acc, members = _accumulator(acc, d_type, n)
    ptr = _checks.value(ptr, "ptr")
    if not isinstance(ptr.type, llvm.PointerType):
        raise TypeError(f"ptr must be an !llvm.ptr, but got {ptr.type}")
    ld, row, col = (
        as_i32(v, w, wide=True, loc=loc, ip=ip) for v, w in ((ld, "ld"), (row, "row"), (col, "col"))
    )
    t = (
        warpgroup_thread(loc=loc, ip=ip)
        if thread is None
        else as_i32(thread, "thread", wide=True, loc=loc, ip=ip)
    )

    def op(name, a, b):
        return getattr(llvm, name)(a, b, llvm.IntegerOverflowFlags.none, loc=loc, ip=ip)

    def shr(a, bits):
        return llvm.lshr(a, i32_constant(bits, loc, ip), loc=loc, ip=ip)

    # Thread-dependent parts of the coordinates, once.
    w = shr(t, 5)
    g = llvm.and_(shr(t, 2), i32_constant(7, loc, ip), loc=loc, ip=ip)
    q = llvm.and_(t, i32_constant(3, loc, ip), loc=loc, ip=ip)
    row0 = op("add", row, op("add", op("mul", w, i32_constant(16, loc, ip)), g))
    col0 = op("add", col, op("mul", q, i32_constant(2, loc, ip)))

    i32 = IntegerType.get_signless(32)
    elem = element_type(out_type)
    pair_type = VectorType.get([2], elem)
    if bounds is not None:
        rows, cols = (as_i32(v, w, wide=True, loc=loc, ip=ip) for v, w in zip(bounds, "mn"))
        ld_even = llvm.icmp(
            llvm.ICmpPredicate.eq,
            llvm.and_(ld, i32_constant(1, loc, ip), loc=loc, ip=ip),
            i32_constant(0, loc, ip),
            loc=loc,
            ip=ip,
        )
    for j in range(n // 4):
        r = op("add", row0, i32_constant(8 * (j % 2), loc, ip))
        c = op("add", col0, i32_constant(8 * (j // 2), loc, ip))
        index = op("add", op("mul", c, ld), r) if transposed else op("add", op("mul", r, ld), c)
        if d_type == "f16":
            word = llvm.extractvalue(i32, acc, [j], loc=loc, ip=ip)
            pair = llvm.bitcast(VectorType.get([2], F16Type.get()), word, loc=loc, ip=ip)
            if out_type == "f32":
                pair = llvm.fpext(pair_type, pair, loc=loc, ip=ip)
        elif out_type in _FP8:
            pair = _fp8_pair(acc, j, members[0], out_type, loc, ip)
        else:
            pair = _f32_pair(acc, j, members[0], loc, ip)
            if out_type in ("bf16", "f16"):
                pair = llvm.fptrunc(pair_type, pair, loc=loc, ip=ip)
        if transposed:
            _store_pair_transposed(pair, ptr, index, ld, elem, out_type, r, c,
                                   None if bounds is None else (rows, cols), loc, ip)  # fmt: skip
        elif bounds is None:
            _store_pair(pair, ptr, index, elem, out_type, loc, ip)
        else:
            _store_pair_masked(pair, ptr, index, elem, out_type, r, c, rows, cols, ld_even, loc, ip)


def _fp8_pair(acc, j, member, out_type, loc, ip):
    """Elements 2j, 2j+1 as two fp8 bytes in an i16 (2j in the low byte:
    cvt's second source lands in the lower half)."""
    from ..dialects import llvm, nvvm
    from ..ir import IntegerType, Type, TypeAttr

    lo, hi = (llvm.extractvalue(member, acc, [2 * j + lane], loc=loc, ip=ip) for lane in (0, 1))
    return nvvm.convert_f32x2_to_f8x2(
        IntegerType.get_signless(16),
        hi,
        lo,
        TypeAttr.get(Type.parse(_FP8[out_type])),
        rnd=nvvm.FPRoundingMode.RN,
        sat=nvvm.SaturationMode.SATFINITE,
        loc=loc,
        ip=ip,
    )


def _store_pair(pair, ptr, index, elem, out_type, loc, ip):
    from ..dialects import llvm

    llvm.store(
        pair,
        gep(ptr, index, elem, loc=loc, ip=ip),
        alignment=ELEMENT_BITS[out_type] // 4,  # the pair
        loc=loc,
        ip=ip,
    )


def _pair_element(pair, lane, elem, out_type, loc, ip):
    from ..dialects import llvm
    from ..ir import IntegerAttr, IntegerType

    if out_type in _FP8:
        i16 = IntegerType.get_signless(16)
        eight = llvm.ConstantOp(i16, IntegerAttr.get(i16, 8), loc=loc, ip=ip).result
        shifted = llvm.lshr(pair, eight, loc=loc, ip=ip) if lane else pair
        return llvm.trunc(elem, shifted, llvm.IntegerOverflowFlags.none, loc=loc, ip=ip)
    return llvm.extractelement(pair, i32_constant(lane, loc, ip), loc=loc, ip=ip)


def _store_pair_transposed(pair, ptr, index, ld, elem, out_type, r, c, bounds, loc, ip):
    """The pair at (r, c), (r, c+1) of a matrix stored transposed: two
    element stores `ld` apart, each where inside `bounds` (rows, cols)."""
    from ..dialects import llvm, scf
    from ..ir import InsertionPoint

    for lane in (0, 1):
        at = index if lane == 0 else llvm.add(index, ld, llvm.IntegerOverflowFlags.none,
                                               loc=loc, ip=ip)  # fmt: skip
        value = _pair_element(pair, lane, elem, out_type, loc, ip)
        if bounds is None:
            llvm.store(value, gep(ptr, at, elem, loc=loc, ip=ip), loc=loc, ip=ip)
            continue
        rows, cols = bounds
        column = llvm.add(c, i32_constant(lane, loc, ip), llvm.IntegerOverflowFlags.none,
                          loc=loc, ip=ip)  # fmt: skip
        inside = llvm.and_(
            llvm.icmp(llvm.ICmpPredicate.ult, r, rows, loc=loc, ip=ip),
            llvm.icmp(llvm.ICmpPredicate.ult, column, cols, loc=loc, ip=ip),
            loc=loc,
            ip=ip,
        )
        branch = scf.IfOp(inside, loc=loc, ip=ip)
        with InsertionPoint(branch.then_block):
            llvm.store(value, gep(ptr, at, elem, loc=loc), loc=loc)
            scf.YieldOp([], loc=loc)


def _store_pair_masked(pair, ptr, index, elem, out_type, r, c, rows, cols, ld_even, loc, ip):
    """The pair at (r, c), (r, c+1) where inside rows x cols: as one store
    when both are and the address is aligned, else element by element."""
    from ..dialects import llvm, scf
    from ..ir import InsertionPoint

    def lt(a, b):
        return llvm.icmp(llvm.ICmpPredicate.ult, a, b, loc=loc, ip=ip)

    def both(a, b):
        return llvm.and_(a, b, loc=loc, ip=ip)

    in_row = lt(r, rows)
    c1 = llvm.add(c, i32_constant(1, loc, ip), llvm.IntegerOverflowFlags.none, loc=loc, ip=ip)
    whole = both(both(in_row, lt(c1, cols)), ld_even)
    branch = scf.IfOp(whole, has_else=True, loc=loc, ip=ip)
    with InsertionPoint(branch.then_block):
        _store_pair(pair, ptr, index, elem, out_type, loc, None)
        scf.YieldOp([], loc=loc)
    with InsertionPoint(branch.else_block):
        for lane, column in ((0, c), (1, c1)):
            inside = scf.IfOp(both(in_row, lt(column, cols)), loc=loc)
            with InsertionPoint(inside.then_block):
                at = llvm.add(
                    index, i32_constant(lane, loc), llvm.IntegerOverflowFlags.none, loc=loc
                )
                value = _pair_element(pair, lane, elem, out_type, loc, None)
                llvm.store(value, gep(ptr, at, elem, loc=loc), loc=loc)
                scf.YieldOp([], loc=loc)
        scf.YieldOp([], loc=loc)


# ----------------------------------------------------------------------------
# Through shared memory: stmatrix into the layout a TMA store reads.

# A staging block is 64 rows of one swizzled row each: 128 bytes (the
# default), 64 for widths that are not a multiple of 128 bytes (a 224-column
# bf16 tile: seven 64-byte blocks), or 32 for those not a multiple of 64 (an
# 80-column tile: five 32-byte blocks). A block is one TMA box.
_SWIZZLES = (128, 64, 32)
_BLOCK_ROWS = 64


def _block_columns(out_type: str, swizzle: int = 128) -> int:
    """Columns of one `swizzle`-byte swizzled row (one TMA box's inner extent)."""
    if out_type not in ("bf16", "f16", "f32"):
        raise ValueError(f"out_type must be bf16, f16 or f32, but got {out_type!r}")
    if swizzle not in _SWIZZLES or isinstance(swizzle, bool):
        raise ValueError(f"swizzle must be 128, 64 or 32 (bytes per row), but got {swizzle!r}")
    return swizzle * 8 // ELEMENT_BITS[out_type]


def staging_swizzle(n: int, out_type: str = "bf16") -> int:
    """The widest swizzle (bytes per row: 128, else 64, else 32) whose
    blocks tile `n` columns of `out_type`."""
    for swizzle in _SWIZZLES:
        if not n % _block_columns(out_type, swizzle):
            return swizzle
    columns = _block_columns(out_type, _SWIZZLES[-1])
    raise ValueError(
        f"n must be a multiple of {columns} for a swizzled {out_type} staging, but got {n}"
    )


def staging_bytes(n: int, out_type: str = "bf16", swizzle: int = 128) -> int:
    """Shared memory stage_accumulator needs for an m64nN tile of `out_type`
    elements: one block of 64 rows x `swizzle` bytes per 64 (16-bit) or 32
    (f32) columns at 128 bytes, half that at 64, a quarter at 32."""
    columns = _block_columns(out_type, swizzle)
    n = _checks.integer(n, "n", columns, 256)
    if n % columns:
        raise ValueError(
            f"n must be a multiple of {columns} for a {swizzle}B-swizzled {out_type} staging, "
            f"but got {n}"
        )
    return (n // columns) * _BLOCK_ROWS * swizzle


def _staging_operands(acc, smem, d_type, n, thread, loc, ip):
    """(acc, its member types, smem, the warpgroup thread) of a staging,
    checked: the m64nN accumulator and an `!llvm.ptr<3>`."""
    from ..dialects import llvm

    acc, members = _accumulator(acc, d_type, n)
    smem = _checks.value(smem, "smem")
    if not (isinstance(smem.type, llvm.PointerType) and smem.type.address_space == 3):
        raise TypeError(f"smem must be an !llvm.ptr<3>, but got {smem.type}")
    t = (
        warpgroup_thread(loc=loc, ip=ip)
        if thread is None
        else as_i32(thread, "thread", wide=True, loc=loc, ip=ip)
    )
    return acc, members, smem, t


def stage_accumulator(
    acc,
    smem,
    *,
    d_type: str,
    n: int,
    out_type: str = "bf16",
    thread=None,
    columns: tuple[int, int] | None = None,
    swizzle: int = 128,
    loc=None,
    ip=None,
):
    """Write the m64nN accumulator, as `out_type`, into shared memory at
    `smem` (an `!llvm.ptr<3>`, 1024-byte aligned): column blocks of 64 rows x
    `swizzle` bytes (128: 64 16-bit or 32 f32 columns; 64: half that; 32:
    a quarter), swizzled -- exactly what a TMA store with SWIZZLE_128B (or
    _64B, _32B) boxes of 64 rows reads (`tma_store`).
    16-bit output goes through `stmatrix`; f32 output (from an f32
    accumulator) through 8-byte shared stores, one per register pair.
    `columns=(first, width)` stages only those columns (multiples of a
    block), in `staging_bytes(width, out_type)`: a smaller staging buffer,
    stored chunk by chunk.

    Lane l of a warp gives stmatrix the row address of matrix l/8, row l%8;
    its registers r0..r3 are accumulator pairs 4i..4i+3 of 16-column group i
    (rows +0/+8, columns +0/+8): the accumulator layout is stmatrix's."""
    from ..dialects import llvm, nvvm
    from ..ir import Attribute, BF16Type, F16Type
    from .smem import swizzle_offset

    if d_type not in ("f32", "f16"):
        raise ValueError(f"d_type must be f32 or f16 for a staging, but got {d_type!r}")
    allowed = ("bf16", "f16", "f32") if d_type == "f32" else ("f16",)
    if out_type not in allowed:
        raise ValueError(
            f"out_type must be one of {', '.join(allowed)} for a {d_type} accumulator, "
            f"but got {out_type!r}"
        )
    block_columns = _block_columns(out_type, swizzle)
    staging_bytes(n, out_type, swizzle)
    first_column, width = (0, n) if columns is None else columns
    _checks.integer(first_column, "columns[0]", 0, n - block_columns)
    staging_bytes(_checks.integer(width, "columns[1]", 1, n - first_column), out_type, swizzle)
    if first_column % block_columns:
        raise ValueError(
            f"columns must start at a multiple of {block_columns}, but got {first_column}"
        )
    acc, members, smem, t = _staging_operands(acc, smem, d_type, n, thread, loc, ip)

    def op(name, a, b):
        return getattr(llvm, name)(a, b, llvm.IntegerOverflowFlags.none, loc=loc, ip=ip)

    if out_type == "f32":
        _stage_f32(acc, members, smem, t, n, first_column, width, swizzle, op, loc, ip)
        return

    lane = llvm.and_(t, i32_constant(31, loc, ip), loc=loc, ip=ip)
    warp = llvm.lshr(t, i32_constant(5, loc, ip), loc=loc, ip=ip)
    matrix = llvm.lshr(lane, i32_constant(3, loc, ip), loc=loc, ip=ip)
    # row = 16 warp + 8 (matrix % 2) + lane % 8; column bytes + 16 (matrix / 2)
    row = op(
        "add",
        op("mul", warp, i32_constant(16, loc, ip)),
        op(
            "add",
            op(
                "mul",
                llvm.and_(matrix, i32_constant(1, loc, ip), loc=loc, ip=ip),
                i32_constant(8, loc, ip),
            ),
            llvm.and_(lane, i32_constant(7, loc, ip), loc=loc, ip=ip),
        ),
    )
    half = op(
        "mul",
        llvm.lshr(matrix, i32_constant(1, loc, ip), loc=loc, ip=ip),
        i32_constant(16, loc, ip),
    )
    lane_offset = op("add", op("mul", row, i32_constant(swizzle, loc, ip)), half)
    elem = BF16Type.get() if out_type == "bf16" else F16Type.get()
    layout = Attribute.parse("#nvvm.mma_layout<row>")
    shape = Attribute.parse("#nvvm.ld_st_matrix_shape<m = 8, n = 8>")
    b16 = Attribute.parse("#nvvm.ld_st_matrix_elt_type<b16>")
    groups_per_block = swizzle // 32  # 16 columns of 2 bytes
    for group in range(first_column // 16, (first_column + width) // 16):
        block, within = divmod(group - first_column // 16, groups_per_block)
        offset = op("add", lane_offset, i32_constant(32 * within, loc, ip))
        address = op(
            "add",
            swizzle_offset(offset, f"{swizzle}B", loc=loc, ip=ip),
            i32_constant(block * _BLOCK_ROWS * swizzle, loc, ip),
        )
        ptr = gep(smem, address, loc=loc, ip=ip)
        regs = _b16_registers(acc, members, d_type, elem, range(4 * group, 4 * group + 4), loc, ip)
        nvvm.stmatrix(ptr, regs, layout, shape, b16, loc=loc, ip=ip)


def _b16_registers(acc, members, d_type, elem, pairs, loc, ip):
    """Register pairs `pairs` of the accumulator as i32 words of two 16-bit
    `elem`s (an f16 accumulator's words as they are): stmatrix's sources."""
    from ..dialects import llvm
    from ..ir import IntegerType, VectorType

    i32 = IntegerType.get_signless(32)
    regs = []
    for pair in pairs:
        if d_type == "f16":
            regs.append(llvm.extractvalue(i32, acc, [pair], loc=loc, ip=ip))
            continue
        wide = _f32_pair(acc, pair, members[0], loc, ip)
        narrow = llvm.fptrunc(VectorType.get([2], elem), wide, loc=loc, ip=ip)
        regs.append(llvm.bitcast(i32, narrow, loc=loc, ip=ip))
    return regs


# A transposed staging row: the 64 rows of one warpgroup's accumulator, one
# column of it, as a 128-byte swizzled row of 16-bit elements.
_TRANSPOSED_ROW_BYTES = 128


def transposed_staging_bytes(n: int) -> int:
    """Shared memory stage_transposed needs for an m64nN tile: n rows of
    128 bytes."""
    n = _checks.integer(n, "n", 8, 256)
    if n % 8:
        raise ValueError(f"n must be a multiple of 8 for a transposed staging, but got {n}")
    return n * _TRANSPOSED_ROW_BYTES


def stage_transposed(acc, smem, *, d_type: str, n: int, out_type: str = "bf16", thread=None,
                     loc=None, ip=None):  # fmt: skip
    """Write the m64nN accumulator's transpose, as 16-bit `out_type`, into
    shared memory at `smem` (an `!llvm.ptr<3>`, 1024-byte aligned): row j
    holds column j of the accumulator, its 64 rows in 128 bytes, 128-byte
    swizzled -- what a TMA store of an (n rows x 64 columns) SWIZZLE_128B box
    reads, for a C stored transposed (C[col + j, row + i] = acc[i, j]: the
    decode path's tokens x weights). n a multiple of 8.

    `stmatrix.trans` writes each 8 x 8 matrix of the registers
    stage_accumulator gives it transposed: lane l addresses stored row l % 8
    of matrix l / 8, which is accumulator column 16 group + 8 (l / 16) +
    l % 8, its 8 elements from row 16 warp + 8 ((l / 8) % 2) on. A last
    8-column group goes through the x2 form (matrices 0 and 1)."""
    from ..dialects import llvm, nvvm
    from ..ir import Attribute, BF16Type, F16Type
    from .smem import swizzle_offset

    if d_type not in ("f32", "f16"):
        raise ValueError(f"d_type must be f32 or f16 for a staging, but got {d_type!r}")
    allowed = ("bf16", "f16") if d_type == "f32" else ("f16",)
    if out_type not in allowed:
        raise ValueError(
            f"out_type must be one of {', '.join(allowed)} for a transposed staging of a "
            f"{d_type} accumulator, but got {out_type!r}"
        )
    transposed_staging_bytes(n)
    acc, members, smem, t = _staging_operands(acc, smem, d_type, n, thread, loc, ip)

    def op(name, a, b):
        return getattr(llvm, name)(a, b, llvm.IntegerOverflowFlags.none, loc=loc, ip=ip)

    def c(value):
        return i32_constant(value, loc, ip)

    lane = llvm.and_(t, c(31), loc=loc, ip=ip)
    warp = llvm.lshr(t, c(5), loc=loc, ip=ip)
    matrix = llvm.lshr(lane, c(3), loc=loc, ip=ip)
    # row (an accumulator column) 8 (matrix / 2) + lane % 8; byte 32 warp + 16 (matrix % 2)
    row = op("add", op("mul", llvm.lshr(matrix, c(1), loc=loc, ip=ip), c(8)),
             llvm.and_(lane, c(7), loc=loc, ip=ip))  # fmt: skip
    byte = op("add", op("mul", warp, c(32)), op("mul", llvm.and_(matrix, c(1), loc=loc, ip=ip),
                                                c(16)))  # fmt: skip
    # A group's 16 rows are 2048 bytes on: whole swizzle periods (1024), so
    # the swizzled offset moves by the same.
    lane_offset = swizzle_offset(op("add", op("mul", row, c(_TRANSPOSED_ROW_BYTES)), byte), "128B",
                                 loc=loc, ip=ip)  # fmt: skip
    elem = BF16Type.get() if out_type == "bf16" else F16Type.get()
    layout = Attribute.parse("#nvvm.mma_layout<col>")
    shape = Attribute.parse("#nvvm.ld_st_matrix_shape<m = 8, n = 8>")
    b16 = Attribute.parse("#nvvm.ld_st_matrix_elt_type<b16>")
    for group in range(-(-n // 16)):
        matrices = 4 if 16 * (group + 1) <= n else 2
        address = op("add", lane_offset, c(16 * _TRANSPOSED_ROW_BYTES * group))
        regs = _b16_registers(acc, members, d_type, elem,
                              range(4 * group, 4 * group + matrices), loc, ip)  # fmt: skip
        nvvm.stmatrix(gep(smem, address, loc=loc, ip=ip), regs, layout, shape, b16, loc=loc,
                      ip=ip)  # fmt: skip


def copy_staged(smem, ptr, ld, *, n: int, out_type: str = "bf16", row=0, col=0, rows=None,
                thread=None, swizzle: int = 128, loc=None, ip=None):  # fmt: skip
    """A staged tile to global memory by threads, 16 coalesced bytes each.

    Copies the 64 x n tile stage_accumulator staged at `smem` to the
    row-major matrix at `ptr` (an `!llvm.ptr<1>`, leading dimension `ld`
    elements) at (row, col), with 16-byte loads and stores: the
    warpgroup's threads take consecutive 16-byte chunks of whole rows, so
    a warp writes 512 contiguous bytes or more, where store_accumulator's
    4- or 8-byte stores each touch 8 rows. Rows at or past `rows` (an int
    or i32 Value) are not written. The caller syncs the warpgroup between
    the staging and the copy, and keeps `ptr` + (row * ld + col) elements
    and ld * element size 16-byte aligned (a TMA store's alignment, without
    a tensor map)."""
    from ..dialects import llvm, scf
    from ..ir import InsertionPoint, IntegerType, VectorType
    from .smem import swizzle_offset

    staging_bytes(n, out_type, swizzle)
    ptr = _checks.value(ptr, "ptr")
    if not (isinstance(ptr.type, llvm.PointerType) and ptr.type.address_space == 1):
        raise TypeError(f"ptr must be an !llvm.ptr<1>, but got {ptr.type}")
    smem = _checks.value(smem, "smem")
    if not (isinstance(smem.type, llvm.PointerType) and smem.type.address_space == 3):
        raise TypeError(f"smem must be an !llvm.ptr<3>, but got {smem.type}")
    ld, row, col = (
        as_i32(v, w, wide=True, loc=loc, ip=ip) for v, w in ((ld, "ld"), (row, "row"), (col, "col"))
    )
    rows = None if rows is None else as_i32(rows, "rows", wide=True, loc=loc, ip=ip)
    t = (
        warpgroup_thread(loc=loc, ip=ip)
        if thread is None
        else as_i32(thread, "thread", wide=True, loc=loc, ip=ip)
    )
    i64 = IntegerType.get_signless(64)
    none = llvm.IntegerOverflowFlags.none
    element = ELEMENT_BITS[out_type] // 8
    per_row = n * element // 16  # 16-byte chunks of a row
    if 128 % per_row:
        raise ValueError(f"n must make a row of a power-of-two count of 16-byte chunks (whole "
                         f"rows per pass of 128 threads), but got {n} {out_type} columns: "
                         f"{per_row} chunks")  # fmt: skip
    step = 128 // per_row  # rows a pass of the warpgroup covers
    chunk = llvm.urem(t, i32_constant(per_row, loc, ip), loc=loc, ip=ip)
    first_row = llvm.udiv(t, i32_constant(per_row, loc, ip), loc=loc, ip=ip)
    chunk_bytes = llvm.mul(chunk, i32_constant(16, loc, ip), none, loc=loc, ip=ip)
    # The chunk's column block and its byte in the block's row.
    block = llvm.udiv(chunk_bytes, i32_constant(swizzle, loc, ip), loc=loc, ip=ip)
    in_row = llvm.urem(chunk_bytes, i32_constant(swizzle, loc, ip), loc=loc, ip=ip)
    block_at = llvm.mul(block, i32_constant(_BLOCK_ROWS * swizzle, loc, ip), none, loc=loc, ip=ip)
    column = llvm.add(col, llvm.mul(chunk, i32_constant(16 // element, loc, ip), none, loc=loc,
                                    ip=ip), none, loc=loc, ip=ip)  # fmt: skip
    wide_ld = llvm.sext(i64, ld, loc=loc, ip=ip)
    wide_col = llvm.sext(i64, column, loc=loc, ip=ip)
    quad = VectorType.get([4], IntegerType.get_signless(32))
    for p in range(_BLOCK_ROWS // step):
        r = llvm.add(first_row, i32_constant(p * step, loc, ip), none, loc=loc, ip=ip)
        linear = llvm.add(llvm.mul(r, i32_constant(swizzle, loc, ip), none, loc=loc, ip=ip),
                          in_row, none, loc=loc, ip=ip)  # fmt: skip
        at = llvm.add(block_at, swizzle_offset(linear, f"{swizzle}B", loc=loc, ip=ip), none,
                      loc=loc, ip=ip)  # fmt: skip
        target = llvm.add(row, r, none, loc=loc, ip=ip)
        guard = None
        if rows is not None:
            inside = llvm.icmp(llvm.ICmpPredicate.slt, target, rows, loc=loc, ip=ip)
            guard = scf.IfOp(inside, loc=loc, ip=ip)
        with InsertionPoint(guard.then_block) if guard else contextlib.nullcontext():
            inner = None if guard else ip  # inside the guard: its block's end
            value = llvm.load(quad, gep(smem, at, loc=loc, ip=inner), alignment=16, loc=loc,
                              ip=inner)  # fmt: skip
            index = llvm.add(llvm.mul(llvm.sext(i64, target, loc=loc, ip=inner), wide_ld, none,
                                      loc=loc, ip=inner), wide_col, none, loc=loc, ip=inner)  # fmt: skip
            llvm.store(value, gep(ptr, index, element_type(out_type), loc=loc, ip=inner),
                       alignment=16, loc=loc, ip=inner)  # fmt: skip
            if guard:
                scf.YieldOp([], loc=loc)


def _stage_f32(acc, members, smem, t, n, first_column, width, swizzle, op, loc, ip):
    """stage_accumulator for f32 output: register pair j of the thread holds
    row 16 warp + lane/4 + 8 (j % 2), columns 2 (lane % 4) + 8 (j / 2) and +1
    (the layout store_accumulator writes); each pair is one 8-byte store at
    its swizzled place in the 32-column (16 at 64 bytes) block that holds it."""
    from ..dialects import llvm
    from .smem import swizzle_offset

    warp = llvm.lshr(t, i32_constant(5, loc, ip), loc=loc, ip=ip)
    g = llvm.and_(
        llvm.lshr(t, i32_constant(2, loc, ip), loc=loc, ip=ip),
        i32_constant(7, loc, ip),
        loc=loc,
        ip=ip,
    )
    q = llvm.and_(t, i32_constant(3, loc, ip), loc=loc, ip=ip)
    row0 = op("add", op("mul", warp, i32_constant(16, loc, ip)), g)
    lane_bytes = op("mul", q, i32_constant(8, loc, ip))
    columns = _block_columns("f32", swizzle)
    for j in range(n // 4):
        col = 8 * (j // 2)  # of the pair's first column, before 2 (lane % 4)
        if not first_column <= col < first_column + width:
            continue
        block, in_block = divmod(col - first_column, columns)
        row = op("add", row0, i32_constant(8 * (j % 2), loc, ip))
        linear = op(
            "add",
            op("mul", row, i32_constant(swizzle, loc, ip)),
            op("add", lane_bytes, i32_constant(4 * in_block, loc, ip)),
        )
        address = op(
            "add",
            swizzle_offset(linear, f"{swizzle}B", loc=loc, ip=ip),
            i32_constant(block * _BLOCK_ROWS * swizzle, loc, ip),
        )
        ptr = gep(smem, address, loc=loc, ip=ip)
        llvm.store(_f32_pair(acc, j, members[0], loc, ip), ptr, alignment=8, loc=loc, ip=ip)


def _named_barrier_id(barrier_id, loc, ip):
    """A named barrier id (1..15; 0 is __syncthreads') as an i32 Value."""
    if isinstance(barrier_id, int) and not isinstance(barrier_id, bool):
        return i32_constant(_checks.integer(barrier_id, "barrier_id", 1, 15), loc, ip)
    return as_i32(barrier_id, "barrier_id", wide=True, loc=loc, ip=ip)


def _warpgroup_barrier(barrier_id, loc, ip):
    from ..dialects import nvvm

    nvvm.BarrierOp(
        None,
        barrierId=barrier_id,
        numberOfThreads=i32_constant(128, loc, ip),
        loc=loc,
        ip=ip,
    )


def wait_store_read(*, barrier_id, thread=None, loc=None, ip=None):
    """Before writing a staging buffer again: the warpgroup's first thread
    waits until the TMA stores it issued have read their shared memory
    (`cp.async.bulk.wait_group.read 0`), then the warpgroup syncs on named
    barrier `barrier_id`. Pairs with `tma_store(..., wait_read=False)`, which
    lets the store's read overlap whatever the warpgroup does next."""
    from ..dialects import llvm, nvvm, scf
    from ..ir import InsertionPoint

    barrier_id = _named_barrier_id(barrier_id, loc, ip)
    t = (
        warpgroup_thread(loc=loc, ip=ip)
        if thread is None
        else as_i32(thread, "thread", wide=True, loc=loc, ip=ip)
    )
    first = llvm.icmp(llvm.ICmpPredicate.eq, t, i32_constant(0, loc, ip), loc=loc, ip=ip)
    issuer = scf.IfOp(first, loc=loc, ip=ip)
    with InsertionPoint(issuer.then_block):
        nvvm.cp_async_bulk_wait_group(0, read=True, loc=loc)
        scf.YieldOp([], loc=loc)
    _warpgroup_barrier(barrier_id, loc, ip)


def tma_store(
    tensor_map,
    smem,
    *,
    row,
    col,
    n: int,
    barrier_id,
    thread=None,
    wait_read: bool = True,
    out_type: str = "bf16",
    batch=None,
    between=(),
    swizzle: int = 128,
    reduce: bool = False,
    loc=None,
    ip=None,
):
    """Store a tile staged by stage_accumulator to global memory with TMA:
    make the warpgroup's stmatrix writes visible to the async proxy, sync
    the warpgroup (named barrier `barrier_id`, 128 threads: an int or an i32
    Value, and a different one for each warpgroup storing at the same time),
    and let its first thread issue one box per block of `swizzle`-byte rows
    (at 128: 64 16-bit or 32 f32 columns of `out_type`; at 64, half) at
    (col + b * columns, row): `tensor_map`'s box and swizzle must match.
    With `wait_read`, it then waits until the shared memory has been
    read; without, call `wait_store_read` before the staging is written
    again (and before the kernel exits). `batch` (an int or i32 Value)
    adds a last coordinate, for a tensor map of a batch of matrices;
    `between` (ints or i32 Values) are coordinates between the column and
    the row (the head of a (head dim, heads, tokens, batch) map).
    `reduce`: add the tile into global memory instead
    (`cp.reduce.async.bulk.tensor .add`, element-wise atomic in L2: CTAs
    may add into the same block, in any order)."""
    from ..dialects import llvm, nvvm, scf
    from ..ir import InsertionPoint

    staging_bytes(n, out_type, swizzle)
    columns = _block_columns(out_type, swizzle)
    tensor_map = _checks.value(tensor_map, "tensor_map")
    smem = _checks.value(smem, "smem")
    barrier_id = _named_barrier_id(barrier_id, loc, ip)
    wait_read = _checks.boolean(wait_read, "wait_read")
    reduce = _checks.boolean(reduce, "reduce")
    row, col = (
        as_i32(row, "row", wide=True, loc=loc, ip=ip),
        as_i32(col, "col", wide=True, loc=loc, ip=ip),
    )
    extra = [] if batch is None else [as_i32(batch, "batch", wide=True, loc=loc, ip=ip)]
    middle = [as_i32(x, "between", wide=True, loc=loc, ip=ip) for x in between]
    t = (
        warpgroup_thread(loc=loc, ip=ip)
        if thread is None
        else as_i32(thread, "thread", wide=True, loc=loc, ip=ip)
    )
    nvvm.fence_proxy(nvvm.ProxyKind.async_shared, space=nvvm.SharedSpace.shared_cta, loc=loc, ip=ip)
    _warpgroup_barrier(barrier_id, loc, ip)
    first = llvm.icmp(llvm.ICmpPredicate.eq, t, i32_constant(0, loc, ip), loc=loc, ip=ip)
    issue = scf.IfOp(first, loc=loc, ip=ip)
    with InsertionPoint(issue.then_block):
        _issue_boxes(tensor_map, smem, row, col, n, columns, swizzle, middle, extra, reduce, loc)
        if wait_read:
            nvvm.cp_async_bulk_wait_group(0, read=True, loc=loc)
        scf.YieldOp([], loc=loc)


def issue_tma_store(tensor_map, smem, *, row, col, n: int, out_type: str = "bf16", batch=None,
                    between=(), swizzle: int = 128, reduce: bool = False, loc=None, ip=None):  # fmt: skip
    """tma_store's boxes, issued and committed by the calling thread alone:
    for a thread that is not of the warpgroup that staged the tile (a
    dedicated store warp), once the stagers' writes are visible to the
    async proxy (their fence.proxy.async, then a barrier it waits on).
    Wait for the reads (`cp.async.bulk.wait_group.read`) before the staging
    is written again."""
    staging_bytes(n, out_type, swizzle)
    row, col = (
        as_i32(row, "row", wide=True, loc=loc, ip=ip),
        as_i32(col, "col", wide=True, loc=loc, ip=ip),
    )
    extra = [] if batch is None else [as_i32(batch, "batch", wide=True, loc=loc, ip=ip)]
    middle = [as_i32(x, "between", wide=True, loc=loc, ip=ip) for x in between]
    _issue_boxes(_checks.value(tensor_map, "tensor_map"), _checks.value(smem, "smem"), row, col,
                 n, _block_columns(out_type, swizzle), swizzle, middle, extra,
                 _checks.boolean(reduce, "reduce"), loc)  # fmt: skip


def _issue_boxes(tensor_map, smem, row, col, n, columns, swizzle, middle, extra, reduce, loc):
    """One TMA store (or reduce-add) per column block, then a commit."""
    from ..dialects import llvm, nvvm

    for block in range(n // columns):
        src = gep(smem, block * _BLOCK_ROWS * swizzle, loc=loc)
        x = llvm.add(col, i32_constant(columns * block, loc), llvm.IntegerOverflowFlags.none,
                     loc=loc)  # fmt: skip
        if reduce:
            nvvm.cp_async_bulk_tensor_reduce(tensor_map, src, nvvm.TMAReduxKind.ADD,
                                             [x, *middle, row, *extra], loc=loc)  # fmt: skip
        else:
            nvvm.cp_async_bulk_tensor_global_shared_cta(tensor_map, src,
                                                        [x, *middle, row, *extra], loc=loc)  # fmt: skip
    nvvm.cp_async_bulk_commit_group(loc=loc)
