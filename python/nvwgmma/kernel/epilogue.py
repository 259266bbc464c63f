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

from .. import _checks

__all__ = ["store_accumulator", "warpgroup_thread"]

_OUT_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "s32": 4}
# llvm.getelementptr's marker for "this index is a Value".
_DYNAMIC_INDEX = -(2**31)


def _i32(value, loc=None, ip=None):
    from ..dialects import llvm
    from ..ir import IntegerAttr, IntegerType

    i32 = IntegerType.get_signless(32)
    return llvm.ConstantOp(i32, IntegerAttr.get(i32, value), loc=loc, ip=ip).result


def _as_i32(value, what, loc, ip):
    """An i32 Value from an int or an i32/i64/index Value."""
    from ..dialects import arith, llvm
    from ..ir import IndexType, IntegerType

    if isinstance(value, int) and not isinstance(value, bool):
        return _i32(_checks.integer(value, what, -(2**31), 2**31 - 1), loc, ip)
    value = _checks.value(value, what)
    i32 = IntegerType.get_signless(32)
    if isinstance(value.type, IndexType):
        return arith.index_cast(i32, value, loc=loc, ip=ip)
    if isinstance(value.type, IntegerType) and value.type.width == 32:
        return value
    if isinstance(value.type, IntegerType) and value.type.width == 64:
        return llvm.trunc(i32, value, llvm.IntegerOverflowFlags.none, loc=loc, ip=ip)
    raise TypeError(f"{what} must be an int or an i32/i64/index Value, but got {value.type}")


def warpgroup_thread(*, loc=None, ip=None):
    """This thread's index in its warpgroup (tid.x mod 128), as i32."""
    from ..dialects import llvm, nvvm
    from ..ir import IntegerType

    tid = nvvm.read_ptx_sreg_tid_x(IntegerType.get_signless(32), loc=loc, ip=ip)
    return llvm.and_(tid, _i32(127, loc, ip), loc=loc, ip=ip)


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
    loc=None,
    ip=None,
):
    """Store the m64nN accumulator `acc` at rows row..row+63, columns
    col..col+n-1 of the row-major matrix at `ptr` (an `!llvm.ptr<1>`) with
    leading dimension `ld` elements.

    d_type    the accumulator type: f32, f16 (packed pairs in i32) or s32
    out_type  the stored type: f32 or bf16/f16 (converted, round to nearest)
              for an f32 accumulator; f16 or f32 for an f16 one; s32 for
              s32. Default: d_type.
    row, col, ld   ints or i32/i64/index Values (element units)
    thread    the index in the warpgroup (default: tid.x mod 128)
    """
    from ..dialects import llvm
    from ..ir import BF16Type, F16Type, F32Type, IntegerType, VectorType
    from ..lattice import accumulator_register_count

    out_type = d_type if out_type is None else out_type
    allowed = {"f32": ("f32", "bf16", "f16"), "f16": ("f16", "f32"), "s32": ("s32",)}
    if d_type not in allowed:
        raise ValueError(f"d_type must be one of f32, f16, s32, but got {d_type!r}")
    if out_type not in allowed[d_type]:
        raise ValueError(
            f"out_type must be one of {', '.join(allowed[d_type])} for a {d_type} "
            f"accumulator, but got {out_type!r}"
        )
    count = accumulator_register_count(d_type, n)
    acc = _checks.value(acc, "acc")
    members = getattr(acc.type, "body", None)
    if members is None or len(members) != count:
        raise TypeError(
            f"acc must be the !llvm.struct of {count} registers of an m64n{n} {d_type} "
            f"accumulator, but got {acc.type}"
        )
    ptr = _checks.value(ptr, "ptr")
    if not isinstance(ptr.type, llvm.PointerType):
        raise TypeError(f"ptr must be an !llvm.ptr, but got {ptr.type}")
    ld, row, col = (_as_i32(v, w, loc, ip) for v, w in ((ld, "ld"), (row, "row"), (col, "col")))
    t = warpgroup_thread(loc=loc, ip=ip) if thread is None else _as_i32(thread, "thread", loc, ip)

    def op(name, a, b):
        return getattr(llvm, name)(a, b, llvm.IntegerOverflowFlags.none, loc=loc, ip=ip)

    def shr(a, bits):
        return llvm.lshr(a, _i32(bits, loc, ip), loc=loc, ip=ip)

    # Thread-dependent parts of the coordinates, once.
    w = shr(t, 5)
    g = llvm.and_(shr(t, 2), _i32(7, loc, ip), loc=loc, ip=ip)
    q = llvm.and_(t, _i32(3, loc, ip), loc=loc, ip=ip)
    row0 = op("add", row, op("add", op("mul", w, _i32(16, loc, ip)), g))
    col0 = op("add", col, op("mul", q, _i32(2, loc, ip)))

    f32, i32 = F32Type.get(), IntegerType.get_signless(32)
    elem = {"f32": f32, "s32": i32, "f16": F16Type.get(), "bf16": BF16Type.get()}[out_type]
    pair_type = VectorType.get([2], elem)
    for j in range(n // 4):
        r = op("add", row0, _i32(8 * (j % 2), loc, ip))
        c = op("add", col0, _i32(8 * (j // 2), loc, ip))
        index = op("add", op("mul", r, ld), c)
        addr = llvm.getelementptr(
            ptr.type,
            ptr,
            [index],
            [_DYNAMIC_INDEX],
            elem,
            llvm.GEPNoWrapFlags.none,
            loc=loc,
            ip=ip,
        )
        if d_type == "f16":
            word = llvm.extractvalue(i32, acc, [j], loc=loc, ip=ip)
            pair = llvm.bitcast(VectorType.get([2], F16Type.get()), word, loc=loc, ip=ip)
            if out_type == "f32":
                pair = llvm.fpext(pair_type, pair, loc=loc, ip=ip)
        else:
            member = members[0]
            lo = llvm.extractvalue(member, acc, [2 * j], loc=loc, ip=ip)
            hi = llvm.extractvalue(member, acc, [2 * j + 1], loc=loc, ip=ip)
            wide = VectorType.get([2], member)
            pair = llvm.mlir_undef(wide, loc=loc, ip=ip)
            pair = llvm.insertelement(pair, lo, _i32(0, loc, ip), loc=loc, ip=ip)
            pair = llvm.insertelement(pair, hi, _i32(1, loc, ip), loc=loc, ip=ip)
            if out_type in ("bf16", "f16"):
                pair = llvm.fptrunc(pair_type, pair, loc=loc, ip=ip)
        llvm.store(pair, addr, alignment=2 * _OUT_BYTES[out_type], loc=loc, ip=ip)
