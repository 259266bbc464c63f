"""Working on a warpgroup's accumulator in registers: its elements, their
(row, column), row reductions and scaling, masking, and the accumulator
turned into wgmma A fragments (what attention's P·V needs).

    from nvwgmma.kernel import fragment
    s = fragment.unpack(acc)                       # n/2 f32 Values
    at = fragment.Coordinates(n=128, row=q0, col=k0)
    s = fragment.mask_causal(s, at)                # col > row -> -inf
    m = fragment.row_max(s)                        # [row g, row g+8], quad-reduced
    p = [fastmath.exp2(...) for ...]
    a = fragment.to_a_fragments(p, "bf16")         # one A fragment per k step
    acc = fragment.pack(fragment.scale_rows(o, factors))

Thread t = 32w + 4g + q of the warpgroup holds accumulator element e at
row 16w + g + 8·((e/2) mod 2), column 8·(e/4) + 2q + (e mod 2)
(`nvwgmma.layouts.accumulator_map`, measured on an H100): two rows per
thread, "row half" h = (e/2) mod 2, each row spread over the four threads of
a quad. A 16-bit A fragment of k step s holds exactly the accumulator's
elements 8s .. 8s+7, paired in order (`nvwgmma.layouts.a_fragment_map`):
the two layouts coincide, so P goes from accumulator to A operand with one
conversion per pair and no data movement. An 8-bit fragment's thread holds
four consecutive columns, the accumulator's two: fp8 needs two quad
shuffles per register.
"""

from __future__ import annotations

from .. import _checks
from ._ir import as_i32, i32_constant

__all__ = [
    "Coordinates",
    "mask",
    "mask_causal",
    "mask_columns",
    "pack",
    "quad_reduce",
    "row_max",
    "row_reduce",
    "row_sum",
    "scale_rows",
    "to_a_fragments",
    "unpack",
]


def unpack(acc, *, loc=None, ip=None) -> list:
    """The members of an accumulator struct (f32 or s32 elements; f16
    accumulators hold packed pairs), in register order."""
    from ..dialects import llvm

    acc = _checks.value(acc, "acc")
    members = getattr(acc.type, "body", None)
    if not members:
        raise TypeError(f"acc must be an accumulator !llvm.struct, but got {acc.type}")
    return [llvm.extractvalue(member, acc, [i], loc=loc, ip=ip) for i, member in enumerate(members)]


def pack(values, *, loc=None, ip=None):
    """The accumulator struct holding `values` (e.g. after scale_rows): what
    mma_async takes as its accumulator."""
    from ..dialects import llvm

    values = _elements(values)
    struct = llvm.StructType.get_literal([v.type for v in values])
    acc = llvm.mlir_undef(struct, loc=loc, ip=ip)
    for i, v in enumerate(values):
        acc = llvm.insertvalue(acc, v, [i], loc=loc, ip=ip)
    return acc


def _elements(values) -> list:
    values = list(values)
    if not values or len(values) % 4:
        raise ValueError(
            f"values must be an m64nN accumulator's elements (a multiple of 4), "
            f"but got {len(values)}"
        )
    return [_checks.value(v, f"values[{i}]") for i, v in enumerate(values)]


def _half(e: int) -> int:
    return (e // 2) % 2


class Coordinates:
    """(row, column) of each accumulator element of this thread, for an
    m64nN accumulator whose element (0, 0) sits at (`row`, `col`) of a
    larger matrix (ints or i32 Values). Rows and columns are i32 Values:
    the thread-dependent part is computed once, each element adds a
    constant."""

    def __init__(self, n: int, *, row=0, col=0, thread=None, loc=None, ip=None):
        from ..dialects import llvm
        from .epilogue import warpgroup_thread

        self.n = _checks.integer(n, "n", 8, 256)
        if n % 8:
            raise ValueError(f"n must be a multiple of 8, but got {n}")
        self._loc, self._ip = loc, ip
        t = warpgroup_thread(loc=loc, ip=ip) if thread is None else as_i32(thread, "thread")

        def c(v):
            return i32_constant(v, loc, ip)

        def add(a, b):
            return llvm.add(a, b, llvm.IntegerOverflowFlags.none, loc=loc, ip=ip)

        w = llvm.lshr(t, c(5), loc=loc, ip=ip)
        g = llvm.and_(llvm.lshr(t, c(2), loc=loc, ip=ip), c(7), loc=loc, ip=ip)
        q = llvm.and_(t, c(3), loc=loc, ip=ip)
        row0 = add(llvm.shl(w, c(4), llvm.IntegerOverflowFlags.none, loc=loc, ip=ip), g)
        col0 = llvm.shl(q, c(1), llvm.IntegerOverflowFlags.none, loc=loc, ip=ip)
        self.row_base = add(as_i32(row, "row", wide=True), row0)
        self.col_base = add(as_i32(col, "col", wide=True), col0)
        self._add = add
        self._rows: dict[int, object] = {}
        self._cols: dict[int, object] = {}

    @staticmethod
    def offsets(e: int) -> tuple[int, int]:
        """(row, column) of element `e` relative to (row_base, col_base)."""
        return 8 * _half(e), 8 * (e // 4) + e % 2

    @property
    def elements(self) -> int:
        return self.n // 2

    def row(self, e: int):
        dr = self.offsets(e)[0]
        if dr not in self._rows:
            self._rows[dr] = self._add(self.row_base, i32_constant(dr, self._loc, self._ip))
        return self._rows[dr]

    def col(self, e: int):
        dc = self.offsets(e)[1]
        if dc not in self._cols:
            self._cols[dc] = self._add(self.col_base, i32_constant(dc, self._loc, self._ip))
        return self._cols[dc]

    def rows(self) -> tuple:
        """The thread's two rows (row half 0 and 1)."""
        return self.row(0), self.row(2)


_REDUCE = {"max": "intr_maxnum", "sum": "fadd"}


def row_reduce(values, kind: str, *, quad: bool = True, loc=None, ip=None) -> list:
    """[row half 0, row half 1] reductions (`kind`: "max" or "sum") of the
    thread's elements; with `quad`, combined over the four threads holding
    each row (two butterfly shuffles) so every thread has the whole row's.
    Without, each thread keeps its partial (sum them once at the end: what
    an online softmax does with its denominators)."""
    from ..dialects import llvm

    values = _elements(values)
    if kind not in _REDUCE:
        raise ValueError(f"kind must be max or sum, but got {kind!r}")
    combine = getattr(llvm, _REDUCE[kind])
    quad = _checks.boolean(quad, "quad")
    out = []
    for half in (0, 1):
        mine = [v for e, v in enumerate(values) if _half(e) == half]
        # A balanced tree: log depth instead of a serial chain.
        while len(mine) > 1:
            pairs = [combine(a, b, loc=loc, ip=ip) for a, b in zip(mine[::2], mine[1::2])]
            mine = pairs + ([mine[-1]] if len(mine) % 2 else [])
        out.append(quad_reduce(mine[0], kind, loc=loc, ip=ip) if quad else mine[0])
    return out


def quad_reduce(value, kind: str, *, loc=None, ip=None):
    """`value` (f32) combined (`kind`: "max" or "sum") over the four
    threads of this thread's quad -- the threads holding one accumulator
    row: two butterfly shuffles. E.g. an online softmax's per-thread
    denominators, summed once at the end."""
    from ..dialects import llvm, nvvm

    if kind not in _REDUCE:
        raise ValueError(f"kind must be max or sum, but got {kind!r}")
    combine = getattr(llvm, _REDUCE[kind])
    total = _checks.value(value, "value")
    for lane_xor in (1, 2):
        other = nvvm.shfl_sync(total.type, i32_constant(-1, loc, ip), total,
                               i32_constant(lane_xor, loc, ip), i32_constant(0x1F, loc, ip),
                               nvvm.ShflKind.bfly, loc=loc, ip=ip)  # fmt: skip
        total = combine(total, other, loc=loc, ip=ip)
    return total


def row_max(values, *, quad: bool = True, loc=None, ip=None) -> list:
    """row_reduce(values, "max")."""
    return row_reduce(values, "max", quad=quad, loc=loc, ip=ip)


def row_sum(values, *, quad: bool = True, loc=None, ip=None) -> list:
    """row_reduce(values, "sum")."""
    return row_reduce(values, "sum", quad=quad, loc=loc, ip=ip)


def scale_rows(values, factors, *, loc=None, ip=None) -> list:
    """Each element times its row's factor (`factors`: [row half 0, row
    half 1] f32 Values, e.g. from row_max)."""
    from ..dialects import llvm

    values = _elements(values)
    if len(factors) != 2:
        raise ValueError(f"factors must be two Values (one per row half), but got {len(factors)}")
    factors = [_checks.value(f, "factors[i]") for f in factors]
    return [llvm.fmul(v, factors[_half(e)], loc=loc, ip=ip) for e, v in enumerate(values)]


def _negative_infinity(value, loc, ip):
    from ..dialects import llvm
    from ..ir import FloatAttr

    return llvm.mlir_constant(FloatAttr.get(value.type, float("-inf")), loc=loc, ip=ip)


def mask(values, keep, *, fill=None, loc=None, ip=None) -> list:
    """Elements where `keep(e)` (an i1 Value, or True to keep outright) is
    false replaced by `fill` (default -inf: what softmax masks with)."""
    from ..dialects import llvm

    values = _elements(values)
    out = []
    for e, v in enumerate(values):
        k = keep(e)
        if k is True:
            out.append(v)
            continue
        f = _negative_infinity(v, loc, ip) if fill is None else fill
        out.append(llvm.select(k, v, f, loc=loc, ip=ip))
    return out


def mask_columns(values, at: Coordinates, limit, *, loc=None, ip=None) -> list:
    """Elements in columns ≥ `limit` (an int or i32 Value: a ragged key
    tail) set to -inf."""
    from ..dialects import llvm

    # col_base + dc < limit  <=>  dc < limit - col_base: one subtraction per
    # thread, one compare against a constant per element.
    room = llvm.sub(as_i32(limit, "limit", wide=True), at.col_base,
                    llvm.IntegerOverflowFlags.none, loc=loc, ip=ip)  # fmt: skip
    return mask(
        values,
        lambda e: llvm.icmp(
            llvm.ICmpPredicate.sgt, room, i32_constant(at.offsets(e)[1], loc, ip), loc=loc, ip=ip
        ),  # fmt: skip
        loc=loc,
        ip=ip,
    )


def mask_causal(values, at: Coordinates, *, diagonal=0, loc=None, ip=None) -> list:
    """Elements with column > row + `diagonal` set to -inf (causal
    attention; `diagonal` = keys - queries aligns the mask bottom-right, as
    FlashAttention does for unequal lengths)."""
    from ..dialects import llvm

    # col_base + dc <= row_base + dr + diagonal  <=>  dc - dr <= slack
    slack = llvm.sub(
        llvm.add(
            at.row_base,
            as_i32(diagonal, "diagonal", wide=True),
            llvm.IntegerOverflowFlags.none,
            loc=loc,
            ip=ip,
        ),  # fmt: skip
        at.col_base,
        llvm.IntegerOverflowFlags.none,
        loc=loc,
        ip=ip,
    )

    def keep(e):
        dr, dc = at.offsets(e)
        return llvm.icmp(llvm.ICmpPredicate.sge, slack, i32_constant(dc - dr, loc, ip),
                         loc=loc, ip=ip)  # fmt: skip

    return mask(values, keep, loc=loc, ip=ip)


_A16 = {"bf16", "f16"}
_A8 = {"e4m3": "f8E4M3FN", "e5m2": "f8E5M2"}


def fp8_key_order(n: int) -> list[int]:
    """Which accumulator column each K position of `to_a_fragments(...,
    permuted=True)` holds, for n columns: in every 32, position 16h + 4q + i
    holds column 16h + 2q + i % 2 + 8 (i // 2) -- the thread's own two pairs.
    The B operand multiplied by such fragments must have its K rows in this
    order (e.g. attention's Vᵀ, keys permuted in memory)."""
    if n % 32:
        raise ValueError(f"n must be a multiple of 32 (whole fp8 k steps), but got {n}")
    return [32 * (k // 32) + 16 * (k % 32 // 16) + 2 * (k % 16 // 4) + k % 2 + 8 * (k % 4 // 2)
            for k in range(n)]  # fmt: skip


def to_a_fragments(values, a_type: str, *, permuted: bool = False, loc=None, ip=None) -> list:
    """The f32 accumulator elements `values` (64 x n) as the A fragments of
    the wgmma steps that multiply them (n / K of them, K = 16 for bf16/f16,
    32 for fp8): fragment s holds columns sK .. sK+K-1, rounded to nearest
    (fp8: saturated to the finite range).

    16-bit: fragment s is elements 8s .. 8s+7 converted in pairs. fp8: each
    thread packs its pairs, and takes four consecutive columns from two
    threads of its quad (shfl.idx) per register; with `permuted` (fp8
    only) it keeps its own -- no shuffles -- and fragment s holds columns
    sK + fp8_key_order(K), which B's rows must follow."""
    from ..dialects import llvm
    from ..dialects import nvwgmma as wg
    from ..ir import BF16Type, F16Type, IntegerType, VectorType

    values = _elements(values)
    if a_type not in _A16 and a_type not in _A8:
        raise ValueError(f"a_type must be one of bf16, f16, e4m3, e5m2, but got {a_type!r}")
    if _checks.boolean(permuted, "permuted") and a_type in _A16:
        raise ValueError(f"permuted applies to fp8 fragments (16-bit ones need no movement), "
                         f"but got a_type {a_type!r}")  # fmt: skip
    k = 16 if a_type in _A16 else 32
    if len(values) % (k // 2):
        raise ValueError(
            f"values must cover whole k steps of {k} columns ({k // 2} elements per thread), "
            f"but got {len(values)} elements"
        )
    i32 = IntegerType.get_signless(32)
    if a_type in _A16:
        elem = BF16Type.get() if a_type == "bf16" else F16Type.get()
        words = []
        for j in range(len(values) // 2):
            pair = llvm.mlir_undef(VectorType.get([2], values[0].type), loc=loc, ip=ip)
            for lane in (0, 1):
                pair = llvm.insertelement(pair, values[2 * j + lane], i32_constant(lane, loc, ip),
                                          loc=loc, ip=ip)  # fmt: skip
            narrow = llvm.fptrunc(VectorType.get([2], elem), pair, loc=loc, ip=ip)
            words.append(llvm.bitcast(i32, narrow, loc=loc, ip=ip))
    else:
        words = _fp8_words(values, _A8[a_type], permuted, loc, ip)
    per_step = 4
    fragment = wg.a_fragment_type()
    out = []
    for s in range(len(words) // per_step):
        frag = llvm.mlir_undef(fragment, loc=loc, ip=ip)
        for r in range(per_step):
            frag = llvm.insertvalue(frag, words[per_step * s + r], [r], loc=loc, ip=ip)
        out.append(frag)
    return out


def _fp8_words(values, fp8_type: str, permuted: bool, loc, ip) -> list:
    """The 32-bit A registers of every 32-column k step, in order.

    Register j of a step holds row half j mod 2, columns 16 (j / 2) + 4q ..
    +3. Thread q' packs, per 16-column chunk and row half, W = its low pair
    (columns 2q', 2q'+1) | its high pair (8+2q', 9+2q') << 16; thread q
    needs the low (q < 2) or high half of W from threads 2q mod 4 and
    2q mod 4 + 1. `permuted`: W itself is the register (fp8_key_order)."""
    from ..dialects import llvm, nvvm
    from ..ir import IntegerType, Type, TypeAttr

    i16, i32 = IntegerType.get_signless(16), IntegerType.get_signless(32)

    def c(v):
        return i32_constant(v, loc, ip)

    def pair16(e):
        lo, hi = values[e], values[e + 1]
        packed = nvvm.convert_f32x2_to_f8x2(i16, hi, lo, TypeAttr.get(Type.parse(fp8_type)),
                                            rnd=nvvm.FPRoundingMode.RN,
                                            sat=nvvm.SaturationMode.SATFINITE,
                                            loc=loc, ip=ip)  # fmt: skip
        return llvm.zext(i32, packed, loc=loc, ip=ip)

    none = llvm.IntegerOverflowFlags.none
    exchange = None if permuted else _quad_exchange(c, none, loc, ip)
    words = []
    for step in range(len(values) // 16):
        for j in range(4):
            half, chunk = j % 2, j // 2
            group = 4 * step + 2 * chunk  # the chunk's first 8-column group
            lo = pair16(4 * group + 2 * half)
            hi = pair16(4 * (group + 1) + 2 * half)
            word = llvm.or_(lo, llvm.shl(hi, c(16), none, loc=loc, ip=ip), loc=loc, ip=ip)
            words.append(word if exchange is None else exchange(word))
    return words


def _quad_exchange(c, none, loc, ip):
    """word -> this thread's register: the low (q < 2) or high half of W
    from threads 2q mod 4 and 2q mod 4 + 1 of its quad (see _fp8_words)."""
    from ..dialects import llvm, nvvm
    from ..ir import IntegerType
    from .epilogue import warpgroup_thread

    i32 = IntegerType.get_signless(32)
    lane = llvm.and_(warpgroup_thread(loc=loc, ip=ip), c(31), loc=loc, ip=ip)
    q = llvm.and_(lane, c(3), loc=loc, ip=ip)
    src_a = llvm.or_(llvm.and_(lane, c(0x1C), loc=loc, ip=ip),
                     llvm.and_(llvm.shl(q, c(1), none, loc=loc, ip=ip), c(3), loc=loc, ip=ip),
                     loc=loc, ip=ip)  # fmt: skip
    src_b = llvm.add(src_a, c(1), none, loc=loc, ip=ip)
    # 16 (q / 2): the half of W to take
    shift = llvm.shl(llvm.lshr(q, c(1), loc=loc, ip=ip), c(4), none, loc=loc, ip=ip)

    def shuffle(word, src):
        return nvvm.shfl_sync(i32, c(-1), word, src, c(0x1F), nvvm.ShflKind.idx, loc=loc, ip=ip)

    def exchange(word):
        a = llvm.and_(llvm.lshr(shuffle(word, src_a), shift, loc=loc, ip=ip), c(0xFFFF),
                      loc=loc, ip=ip)  # fmt: skip
        b = llvm.lshr(shuffle(word, src_b), shift, loc=loc, ip=ip)
        return llvm.or_(a, llvm.shl(b, c(16), none, loc=loc, ip=ip), loc=loc, ip=ip)

    return exchange
