"""Fast float math for kernels: the SFU's approximate instructions, as
LLVM's NVVM intrinsics (ptxas schedules them like any instruction).

    from nvwgmma.kernel import fastmath
    p = fastmath.exp2(x)          # ex2.approx.ftz.f32: 2^x, ~2 ulp, denormals flushed
    l = fastmath.log2(x)          # lg2.approx.ftz.f32
    r = fastmath.reciprocal(x)    # rcp.approx.ftz.f32

`math` dialect ops work too: compile_to_ptx's nvwgmma-legalize-math turns
them into the same instructions under `fastmath<afn>` (math.exp: a multiply
by log2(e) and ex2.approx.ftz) and into f32 approximations within 2 ulp
otherwise (docs/validation.md, "Math ops"). Online softmax computes
exp2(x * log2(e) - m) with one FMA and one ex2 per element: what
FlashAttention does.
"""

from __future__ import annotations

from .. import _checks

__all__ = ["LOG2E", "exp2", "fma", "log2", "reciprocal"]

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
