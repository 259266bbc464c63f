"""The GEMM epilogue chain: element-wise operations applied to the f32
accumulator in registers, before either store path (stmatrix + TMA, or
masked stores from registers) converts and writes it.

    from nvwgmma.kernel.gemm.fusion import Activation, Alpha, Bias, Residual, Scale
    chain = (Bias(), Activation("gelu"))      # C = gelu(A·B + bias[col])

Each operation is a frozen dataclass (hashable: part of the GemmConfig and
of the kernel's name) that emits IR on the accumulator's values. The kernel
receives one set of operands for every chain (bias and residual pointers,
alpha, beta, scale); an operation reads only its own. Loads of bias and
residual clamp their indices to the problem, so a tile hanging over the
edge of C reads valid memory; the stores drop those elements.

    Alpha()               acc *= alpha
    Bias(axis, dtype)     acc += bias[col] (axis "col": one per output column,
                          a Linear layer's bias) or bias[row] (axis "row")
    Activation(name)      relu, gelu (erf, torch's default), gelu_tanh, silu
    Residual(dtype, beta) acc += R[row, col], or beta * R[row, col] with beta
                          (alpha·A·B + beta·C is Alpha(), Residual(beta=True))
    Scale()               acc *= scale (the quantisation scale before an fp8 cast)
    ScaleVector(axis, param)  acc *= param[row] or param[col] (f32 vectors passed
                          as the kernel's extra parameter `param`: fp8 row-wise
                          scales, torch._scaled_mm's scale_a and scale_b)

In a grouped GEMM (`grouped=True` on Bias and ScaleVector) a column vector
holds one row of N per group, `bias[group, col]`: per-expert biases and
weight scales.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = [
    "ACTIVATIONS",
    "Activation",
    "Alpha",
    "Bias",
    "EpilogueOp",
    "Operands",
    "Residual",
    "Scale",
    "ScaleVector",
    "apply",
    "chain_tag",
    "check_chain",
    "gate_pairs",
]

ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu")
_LOADABLE = ("bf16", "f16", "f32")


@dataclass(frozen=True)
class Alpha:
    tag = "alpha"

    def emit(self, x, at):
        return at.mul(x, at.operands.alpha)


@dataclass(frozen=True)
class Scale:
    tag = "scale"

    def emit(self, x, at):
        return at.mul(x, at.operands.scale)


@dataclass(frozen=True)
class Bias:
    axis: str = "col"
    dtype: str = "bf16"
    grouped: bool = False  # a grouped GEMM's bias[group, col]

    @property
    def tag(self):
        return f"bias{self.axis}{self.dtype}" + ("g" if self.grouped else "")

    def emit(self, x, at):
        return at.add(x, at.vector(at.operands.bias, self.axis, self.dtype, self.grouped))


@dataclass(frozen=True)
class ScaleVector:
    axis: str
    param: str  # the name of an f32 pointer among the kernel's extra parameters
    grouped: bool = False

    @property
    def tag(self):
        return f"scale{self.axis}{self.param}" + ("g" if self.grouped else "")

    def emit(self, x, at):
        pointer = at.operands.extra.get(self.param)
        if pointer is None:
            raise ValueError(
                f"a scale vector reads the extra parameter {self.param!r}, but the kernel "
                f"has only {sorted(at.operands.extra) or 'none'}"
            )
        return at.mul(x, at.vector(pointer, self.axis, "f32", self.grouped))


@dataclass(frozen=True)
class Activation:
    name: str

    @property
    def tag(self):
        return self.name

    def emit(self, x, at):
        return getattr(at, self.name)(x)


@dataclass(frozen=True)
class Residual:
    dtype: str = "bf16"
    beta: bool = False

    @property
    def tag(self):
        return f"res{self.dtype}" + ("beta" if self.beta else "")

    def emit(self, x, at):
        r = at.residual(self.dtype)
        return at.add(x, at.mul(r, at.operands.beta) if self.beta else r)


EpilogueOp = Alpha | Bias | Activation | Residual | Scale | ScaleVector


def transposed_chain(chain) -> tuple:
    """`chain` for the transposed problem (C^T): a bias along C's columns
    runs along C^T's rows, and the other way round."""
    from dataclasses import replace

    flip = {"col": "row", "row": "col"}
    return tuple(
        replace(op, axis=flip[op.axis]) if isinstance(op, (Bias, ScaleVector)) else op
        for op in chain
    )


def chain_tag(chain) -> str:
    """A name-safe summary of the chain, for kernel names."""
    return "_".join(op.tag for op in chain)


def check_chain(chain, out_dtype: str) -> None:
    if not isinstance(chain, tuple):
        raise TypeError(f"fusion must be a tuple of epilogue operations, but got {chain!r}")
    for op in chain:
        # Besides the built-in operations, any hashable object with a `tag`
        # (a name-safe string) and `emit(x, at)` (IR on one f32 element).
        if not (isinstance(getattr(op, "tag", None), str) and callable(getattr(op, "emit", None))):
            raise TypeError(
                f"fusion must hold Alpha, Bias, Activation, Residual, Scale or objects with "
                f"a tag and an emit(x, at), but got {op!r}"
            )
        if isinstance(op, Activation) and op.name not in ACTIVATIONS:
            raise ValueError(
                f"activation must be one of {', '.join(ACTIVATIONS)}, but got {op.name!r}"
            )
        what = "bias" if isinstance(op, Bias) else "scale vector"
        if isinstance(op, (Bias, ScaleVector)) and op.axis not in ("row", "col"):
            raise ValueError(f"{what} axis must be row or col, but got {op.axis!r}")
        if isinstance(op, (Bias, ScaleVector)) and op.grouped and op.axis != "col":
            raise ValueError(
                f"a grouped {what} runs along columns (one row of N per group), so its "
                f"axis must be col, but got {op.axis!r}"
            )
        if isinstance(op, ScaleVector) and not (
            isinstance(op.param, str) and op.param.isidentifier()
        ):
            raise ValueError(
                f"a scale vector's param must name an extra kernel parameter, but got {op.param!r}"
            )
        if isinstance(op, (Bias, Residual)) and op.dtype not in _LOADABLE:
            raise ValueError(
                f"{type(op).__name__.lower()} dtype must be one of {', '.join(_LOADABLE)}, "
                f"but got {op.dtype!r}"
            )
    for kind in (Alpha, Bias, Residual, Scale):
        if sum(isinstance(op, kind) for op in chain) > 1:
            raise ValueError(
                f"fusion must hold at most one {kind.__name__} (the kernel has one operand "
                f"for it), but got {sum(isinstance(op, kind) for op in chain)}"
            )


@dataclass
class Operands:
    """The kernel's epilogue operands as IR Values: problem rows `m` and
    columns `n` (i32), the bias and residual pointers (`!llvm.ptr<1>`; the
    residual row-major M x N, already offset to this batch) and the f32
    scalars."""

    m: object
    n: object
    bias: object
    residual: object
    alpha: object
    beta: object
    scale: object
    # C (and so the residual) stored transposed: element (r, c) at c * m + r
    transposed: bool = False
    # The kernel's extra parameters by name (build_gemm's extra_params).
    extra: dict = field(default_factory=dict)
    # A grouped GEMM's group of the tile being stored (i32), else None.
    group: object = None


class _At:
    """IR for one accumulator element at a time: element i of the m64nN
    accumulator sits at row 16w + g + 8 (j % 2) and column 8 (j / 2) + 2q +
    (i % 2), j = i / 2 (w = thread / 32, g = thread % 32 / 4, q = thread % 4),
    from `row`, `col`. Loads are cached per distinct row/column."""

    def __init__(self, operands, row, col, thread):
        from ...dialects import arith
        from ...ir import IntegerType

        self.operands = operands
        self.i32 = IntegerType.get_signless(32)
        c = self.const
        w = arith.shrui(thread, c(5))
        g = arith.andi(arith.shrui(thread, c(2)), c(7))
        q = arith.andi(thread, c(3))
        base_row = arith.addi(row, arith.addi(arith.muli(w, c(16)), g))
        base_col = arith.addi(col, arith.muli(q, c(2)))
        self._row = [base_row, arith.addi(base_row, c(8))]
        self._col = {}
        self._base_col = base_col
        self._cache = {}
        self.index = 0

    def const(self, v):
        from ...dialects import arith

        return arith.constant(self.i32, v)

    def fconst(self, v):
        from ...dialects import arith
        from ...ir import F32Type, FloatAttr

        return arith.constant(F32Type.get(), FloatAttr.get(F32Type.get(), v))

    def row(self):
        return self._row[(self.index // 2) % 2]

    def col(self):
        from ...dialects import arith

        offset = 8 * (self.index // 4) + self.index % 2
        if offset not in self._col:
            self._col[offset] = arith.addi(self._base_col, self.const(offset))
        return self._col[offset]

    def _clamped(self, value, limit):
        from ...dialects import arith

        return arith.minui(value, arith.subi(limit, self.const(1)))

    def _load(self, ptr, index, dtype):
        from ...dialects import arith, llvm
        from ...ir import F32Type
        from .._ir import element_type, gep

        elem = element_type(dtype)
        value = llvm.load(elem, gep(ptr, index, elem))
        return value if dtype == "f32" else arith.extf(F32Type.get(), value)

    def vector(self, pointer, axis, dtype, grouped=False):
        """pointer[row] or pointer[col] (grouped: pointer[group * n + col]),
        the index clamped to the problem."""
        from ...dialects import arith

        key = ("vector", pointer, axis, self.row() if axis == "row" else self.col())
        if key not in self._cache:
            o = self.operands
            if axis == "row":
                index = self._clamped(self.row(), o.m)
            else:
                index = self._clamped(self.col(), o.n)
                if grouped:
                    if o.group is None:
                        raise ValueError("a grouped epilogue vector needs a grouped GEMM's tile")
                    index = arith.addi(arith.muli(o.group, o.n), index)
            self._cache[key] = self._load(pointer, index, dtype)
        return self._cache[key]

    def residual(self, dtype):
        from ...dialects import arith

        o = self.operands
        r = self._clamped(self.row(), o.m)
        c = self._clamped(self.col(), o.n)
        if o.transposed:
            return self._load(o.residual, arith.addi(arith.muli(c, o.m), r), dtype)
        return self._load(o.residual, arith.addi(arith.muli(r, o.n), c), dtype)

    # -- arithmetic on f32 Values
    def mul(self, a, b):
        from ...dialects import arith

        return arith.mulf(a, b)

    def add(self, a, b):
        from ...dialects import arith

        return arith.addf(a, b)

    def _exp(self, x):
        """e^x as ex2.approx(x log2 e): relative error ~2^-22."""
        from ...dialects import llvm

        return llvm.intr_exp2(self.mul(x, self.fconst(math.log2(math.e))))

    def _reciprocal_1p(self, x):
        """1 / (1 + x) by rcp.approx (relative error ~1 ulp, one MUFU op: a
        full-precision division costs ~10 instructions per element, which
        measured 18 % of a fused GEMM's time)."""
        from ...dialects import nvvm
        from ...ir import F32Type

        return nvvm.rcp_approx_ftz_f(F32Type.get(), self.add(self.fconst(1.0), x))

    def relu(self, x):
        from ...dialects import arith

        return arith.maxnumf(x, self.fconst(0.0))

    def silu(self, x):
        from ...dialects import arith

        return self.mul(x, self._reciprocal_1p(self._exp(arith.negf(x))))

    def gelu_tanh(self, x):
        """0.5 x (1 + tanh(y)), y = sqrt(2/pi) (x + 0.044715 x^3), with
        1 + tanh(y) = 2 - 2 / (e^(2y) + 1) (exact at both ends: e^(2y)
        overflowing gives 2, underflowing 0)."""
        from ...dialects import arith

        cube = self.mul(self.mul(x, x), x)
        y = self.mul(
            self.add(x, self.mul(cube, self.fconst(0.044715))),
            self.fconst(2.0 * math.sqrt(2.0 / math.pi)),
        )
        one_plus_tanh = arith.subf(
            self.fconst(2.0), self.mul(self.fconst(2.0), self._reciprocal_1p(self._exp(y)))
        )
        return self.mul(self.mul(x, self.fconst(0.5)), one_plus_tanh)

    def gelu(self, x):
        """0.5 x (1 + erf(x / sqrt 2)); erf by Abramowitz & Stegun 7.1.26
        (absolute error <= 1.5e-7): erf(z) = 1 - poly(t) e^(-z^2),
        t = 1 / (1 + p z) for z >= 0, odd in z."""
        from ...dialects import arith, llvm

        z = self.mul(x, self.fconst(1.0 / math.sqrt(2.0)))
        az = llvm.intr_fabs(z)
        t = self._reciprocal_1p(self.mul(az, self.fconst(0.3275911)))
        poly = self.fconst(1.061405429)
        for a in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
            poly = self.add(self.mul(poly, t), self.fconst(a))
        poly = self.mul(poly, t)
        erf_abs = arith.subf(
            self.fconst(1.0), self.mul(poly, self._exp(arith.negf(self.mul(az, az))))
        )
        erf = llvm.intr_copysign(erf_abs, z)
        return self.mul(self.mul(x, self.fconst(0.5)), self.add(self.fconst(1.0), erf))


def apply(chain, acc, *, row, col, thread, operands: Operands):
    """`acc` (the m64nN f32 accumulator struct of the warpgroup whose first
    row is `row` and first column `col`, i32 Values) with `chain` applied to
    every element; `acc` itself when the chain is empty."""
    from ...dialects import llvm

    if not chain:
        return acc
    members = acc.type.body
    at = _At(operands, row, col, thread)
    result = llvm.mlir_undef(acc.type)
    for i in range(len(members)):
        at.index = i
        x = llvm.extractvalue(members[i], acc, [i])
        for op in chain:
            x = op.emit(x, at)
        result = llvm.insertvalue(result, x, [i])
    return result


# A gated tile's B columns alternate GATE_BLOCK of gate and GATE_BLOCK of up.
GATE_BLOCK = 64


def gate_pairs(acc, name, *, row, col, thread, operands):
    """act(gate) * up of a gated tile: the m64n(N/2) accumulator whose
    column c is `name`(acc's column 128 (c / 64) + c % 64) times acc's
    column 64 further (see GemmConfig.gate). Member i of an m64nN
    accumulator holds column 8 (i / 4) + 2q + i % 2 (row + 8 ((i / 2) % 2)),
    so both columns of a pair sit in the same thread."""
    from ...dialects import llvm
    from ...ir import F32Type

    members = acc.type.body
    half = len(members) // 2
    at = _At(operands, row, col, thread)
    out = llvm.mlir_undef(llvm.StructType.get_literal([F32Type.get()] * half))
    per_pair = 2 * GATE_BLOCK // 8  # 8-column blocks per gate/up pair
    for i in range(half):
        block, r = i // 4, i % 4
        gate_block = per_pair * (block // (GATE_BLOCK // 8)) + block % (GATE_BLOCK // 8)
        g = llvm.extractvalue(members[0], acc, [4 * gate_block + r])
        u = llvm.extractvalue(members[0], acc, [4 * (gate_block + GATE_BLOCK // 8) + r])
        out = llvm.insertvalue(out, at.mul(getattr(at, name)(g), u), [i])
    return out
