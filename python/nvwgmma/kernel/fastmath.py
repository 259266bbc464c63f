"""Fast float math for kernels: the SFU's approximate instructions, as
LLVM's NVVM intrinsics (ptxas schedules them like any instruction).

    from nvwgmma.kernel import fastmath
    p = fastmath.exp2(x)          # ex2.approx.ftz.f32: 2^x, ~2 ulp, denormals flushed
    l = fastmath.log2(x)          # lg2.approx.ftz.f32
    r = fastmath.reciprocal(x)    # rcp.approx.ftz.f32
    p = fastmath.exp2_fma(x)      # 2^x on the FMA pipe: no SFU (FlashAttention-4's trick)

`math` dialect ops work too: compile_to_ptx's nvwgmma-legalize-math turns
them into the same instructions under `fastmath<afn>` (math.exp: a multiply
by log2(e) and ex2.approx.ftz) and into f32 approximations within 2 ulp
otherwise (docs/validation.md, "Math ops"). Online softmax computes
exp2(x * log2(e) - m) with one FMA and one ex2 per element: what
FlashAttention does.
"""

from __future__ import annotations

from .. import _checks

__all__ = ["EXP2_FMA_COEFFICIENTS", "LOG2E", "exp2", "exp2_fma", "fma", "log2", "reciprocal"]

LOG2E = 1.4426950408889634  # log2(e): exp(x) = exp2(x * LOG2E)


def _f32_call(intrinsic: str, x, loc, ip):
    from ..dialects import llvm
    from ..ir import F32Type

    x = _checks.value(x, "x")
    if not isinstance(x.type, F32Type):
        raise TypeError(f"x must be an f32 Value, but got {x.type}")
    return llvm.call_intrinsic(x.type, intrinsic, [x], [], [], loc=loc, ip=ip)


def exp2(x, *, loc=None, ip=None):
    """2^x (`ex2.approx.ftz.f32`)."""
    return _f32_call("llvm.nvvm.ex2.approx.ftz.f", x, loc, ip)


# 2^f on [-1/2, 1/2], highest power first: near-minimax relative error
# 7.5e-5 (degree 3: under bf16's and e4m3's rounding of P) and 2.7e-6
# (degree 4: under f16's), evaluated in f32 Horner (fitted by iteratively
# reweighted least squares; test_fragment checks the bounds on every
# thread of a warpgroup; the attention kernels using it were correct on
# the GPU, errors equal to the SFU's).
EXP2_FMA_COEFFICIENTS = {
    3: (0.055171459913253784, 0.2426108568906784, 0.6932609677314758, 0.9999281167984009),
    4: (0.009570082649588585, 0.05591784417629242, 0.240247443318367, 0.6931217908859253,
        0.9999992847442627),
}  # fmt: skip
# 1.5 x 2^23: x + it rounds x to an integer j held in the low mantissa bits.
_ROUNDER = 12582912.0


def exp2_fma(x, *, degree: int = 3, loc=None, ip=None):
    """2^x without the SFU, for x <= 127: j = round(x) by the 1.5 x 2^23
    trick, a polynomial of f = x - j in [-1/2, 1/2], j added to the
    exponent bits -- three FADDs, `degree` FMAs, a shift, an integer add and
    max, all on the FMA and ALU pipes; exact to the polynomial's bound for
    x >= -126, below 2^-126 for x < -126, +0 from -128 down (-inf
    included: a masked score's P is exactly 0).
    What FlashAttention-4 does with part of the softmax's exponentials
    when the SFU, 16 results a clock per SM against the FMA pipe's 128, is
    the bottleneck. `degree` 3 or 4 (EXP2_FMA_COEFFICIENTS)."""
    from ..dialects import llvm
    from ..ir import F32Type, FloatAttr, IntegerAttr, IntegerType

    x = _checks.value(x, "x")
    if not isinstance(x.type, F32Type):
        raise TypeError(f"x must be an f32 Value, but got {x.type}")
    if degree not in EXP2_FMA_COEFFICIENTS:
        raise ValueError(f"degree must be 3 or 4, but got {degree!r}")
    f32, i32 = x.type, IntegerType.get_signless(32)

    def const(v):
        return llvm.mlir_constant(FloatAttr.get(f32, v), loc=loc, ip=ip)

    x = llvm.intr_maxnum(x, const(-128.0), loc=loc, ip=ip)
    t = llvm.fadd(x, const(_ROUNDER), loc=loc, ip=ip)
    f = llvm.fsub(x, llvm.fsub(t, const(_ROUNDER), loc=loc, ip=ip), loc=loc, ip=ip)
    coefficients = EXP2_FMA_COEFFICIENTS[degree]
    p = const(coefficients[0])
    for c in coefficients[1:]:
        p = llvm.intr_fma(p, f, const(c), loc=loc, ip=ip)
    # The integer j sits in t's low bits: shifted by 23 it is j x 2^23 (t's
    # other bits leave the word), the exponent of 2^j.
    shift = llvm.mlir_constant(IntegerAttr.get(i32, 23), loc=loc, ip=ip)
    none = llvm.IntegerOverflowFlags.none
    j = llvm.shl(llvm.bitcast(i32, t, loc=loc, ip=ip), shift, none, loc=loc, ip=ip)
    bits = llvm.add(llvm.bitcast(i32, p, loc=loc, ip=ip), j, none, loc=loc, ip=ip)
    # Below 2^-126 the exponent field underflows: from j = -128 (x clamped
    # there, -inf included) the word is negative, and +0 replaces it.
    zero = llvm.mlir_constant(IntegerAttr.get(i32, 0), loc=loc, ip=ip)
    bits = llvm.intr_smax(bits, zero, loc=loc, ip=ip)
    return llvm.bitcast(f32, bits, loc=loc, ip=ip)


def log2(x, *, loc=None, ip=None):
    """log2(x) (`lg2.approx.ftz.f32`)."""
    return _f32_call("llvm.nvvm.lg2.approx.ftz.f", x, loc, ip)


def reciprocal(x, *, loc=None, ip=None):
    """1/x (`rcp.approx.ftz.f32`)."""
    return _f32_call("llvm.nvvm.rcp.approx.ftz.f", x, loc, ip)


def fma(a, b, c, *, loc=None, ip=None):
    """a * b + c in one rounding (`fma.rn.f32`)."""
    from ..dialects import llvm

    return llvm.intr_fma(*(_checks.value(v, w) for v, w in ((a, "a"), (b, "b"), (c, "c"))),
                         loc=loc, ip=ip)  # fmt: skip
