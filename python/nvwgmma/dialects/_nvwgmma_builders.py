"""Friendly builders for the nvwgmma dialect.

    from nvwgmma.dialects import nvwgmma as wg
    acc = wg.zero_accumulator("f32", 128)
    d = wg.mma_async(acc, desc_a, desc_b, shape=(64, 128, 16),
                     a_type="bf16", b_type="bf16", d_type="f32", scale_d=True)

Every builder verifies the op it creates: an invalid combination raises
`nvwgmma.errors.WgmmaRuleError` carrying the verifier's message and rule
label, and leaves no op behind.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypedDict, Union

from .. import _checks
from .._mlir_libs import _nvwgmma
from ..errors import WgmmaRuleError
from ..ir import (
    Attribute,
    Context,
    IntegerAttr,
    IntegerType,
    MLIRError,
    OpView,
    Type,
    Value,
    register_attribute_builder,
)
from . import llvm as _llvm
from ._nvwgmma_enum_gen import ElemType, Layout, ScaleD, ScaleIn
from ._nvwgmma_ops_gen import CommitGroupOp, FenceOp, MmaAsyncOp, MmaAsyncSpOp, WaitGroupOp

if TYPE_CHECKING:
    from typing_extensions import Unpack

_nvwgmma.define_shape_attr(_nvwgmma)
ShapeAttr = _nvwgmma.ShapeAttr
ShapeAttr.__doc__ = "#nvwgmma.shape<m, n, k>: ShapeAttr.get(m, n, k), with .m, .n, .k."

__all__ = [
    "WgmmaRuleError",
    "MmaOptions",
    "ShapeAttr",
    "descriptor",
    "advance_descriptor",
    "accumulator_type",
    "a_fragment_type",
    "commit_group",
    "fence",
    "inline_asm",
    "mma_async",
    "mma_async_sp",
    "ptx",
    "shape_attr",
    "wait_group",
    "zero_accumulator",
]

EnumLike = Union[str, ElemType]
ShapeLike = Union[Sequence[int], Attribute]


def _context(loc=None) -> Context:
    return loc.context if loc is not None else Context.current


def _enum(kind: type, value) -> object:
    if isinstance(value, kind):
        return value
    try:
        return kind[str(value)]
    except KeyError:
        choices = ", ".join(member.name for member in kind)
        raise ValueError(
            f"expected one of {choices} for {kind.__name__}, but got {value!r}"
        ) from None


# Enum attributes are built from the generated enum classes through the C
# API (never by printing and parsing text); the generated op classes use the
# same constructors when handed enum members directly.
_ENUM_ATTRS = {
    ElemType: ("NVWGMMA_ElemTypeAttr", _nvwgmma.elem_type_attr),
    ScaleIn: ("NVWGMMA_ScaleInAttr", _nvwgmma.scale_in_attr),
    ScaleD: ("NVWGMMA_ScaleDAttr", _nvwgmma.scale_d_attr),
    Layout: ("NVWGMMA_LayoutAttr", _nvwgmma.layout_attr),
}


def _enum_attr(kind: type, value, context: Context | None = None) -> Attribute:
    return _ENUM_ATTRS[kind][1](int(_enum(kind, value)), context or Context.current)


def _register_enum_builder(kind: type) -> None:
    @register_attribute_builder(_ENUM_ATTRS[kind][0], replace=True)
    def build(value, context):
        return _enum_attr(kind, value, context)


for _kind in _ENUM_ATTRS:
    _register_enum_builder(_kind)


def shape_attr(shape: ShapeLike, context: Context | None = None) -> Attribute:
    """`#nvwgmma.shape<m = M, n = N, k = K>` (a ShapeAttr) from (m, n, k)."""
    if isinstance(shape, Attribute):
        if not ShapeAttr.isinstance(shape):
            raise TypeError(f"shape must be a #nvwgmma.shape attribute, but got {shape}")
        return ShapeAttr(shape)
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__len__") or len(shape) != 3:
        raise TypeError(f"shape must be (m, n, k) or a ShapeAttr, but got {shape!r}")
    m, n, k = (_checks.integer(v, f"shape[{i}]") for i, v in enumerate(shape))
    return ShapeAttr.get(m, n, k, context=context or Context.current)


def accumulator_type(d_type: EnumLike, n: int, context: Context | None = None) -> Type:
    """The accumulator struct of an m64nNk* mma_async with D type `d_type`.

    n/2 f32 members for f32, n/2 i32 for s32, n/4 i32 (two packed f16 each)
    for f16: the lattice's numbers (nvwgmma.lattice).
    """
    from ..lattice import accumulator_register_count

    context = context or Context.current
    d = _enum(ElemType, d_type)
    count = accumulator_register_count(d, n)
    member = _nvwgmma.accumulator_member_type(int(d), context)
    return _llvm.StructType.get_literal([member] * count, context=context)


def a_fragment_type(member: Type | None = None, context: Context | None = None) -> Type:
    """The A register fragment: 4 x `member` (default i32)."""
    context = context or Context.current
    if member is not None and not isinstance(member, Type):
        raise TypeError(f"member must be an MLIR Type or None, but got {member!r}")
    member = member or IntegerType.get_signless(32, context)
    return _llvm.StructType.get_literal([member] * 4, context=context)


def zero_accumulator(d_type: EnumLike, n: int, *, loc=None, ip=None) -> Value:
    """An all-zero accumulator (`llvm.mlir.zero`) for (d_type, n)."""
    acc_type = accumulator_type(d_type, n, _context(loc))
    return _checks.verified(_llvm.ZeroOp(acc_type, loc=loc, ip=ip), "zero_accumulator").result


def _verified(op: OpView) -> OpView:
    """Verifies a freshly built op; on failure erases it and raises.

    A broken wgmma rule comes back from the rule table as (label, message):
    the label travels as data into WgmmaRuleError.label.
    """
    broken = _nvwgmma.check_rules(op.operation)
    if broken is not None:
        op.operation.erase()
        label, message = broken
        raise WgmmaRuleError(message, label)
    try:
        op.operation.verify()
    except MLIRError as error:
        messages = [d.message for d in error.error_diagnostics] or [str(error)]
        op.operation.erase()
        raise TypeError(messages[0]) from None
    return op


def fence(*, loc=None, ip=None) -> FenceOp:
    """`nvwgmma.fence` (wgmma.fence.sync.aligned)."""
    return FenceOp(loc=loc, ip=ip)


def commit_group(*, loc=None, ip=None) -> CommitGroupOp:
    """`nvwgmma.commit_group` (wgmma.commit_group.sync.aligned)."""
    return CommitGroupOp(loc=loc, ip=ip)


def wait_group(n: int, *values, loc=None, ip=None) -> WaitGroupOp:
    """`nvwgmma.wait_group n`: wait until at most n groups are pending.

    Given accumulators or A fragments (`values`), the op returns them as new
    values (`.results`, in order) that later uses must take, so LLVM cannot
    move a use above the wait: `acc, = wait_group(0, acc).results`."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n must be an int, but got {n!r}")
    # Values an i64 attribute cannot hold never reach the rule table.
    if not -(2**63) <= n < 2**63:
        raise WgmmaRuleError(
            f"group must be a non-negative 64-bit integer, but got {n!r} (wait_group_c1)",
            "wait_group_c1",
        )
    values = [_checks.value(v, f"values[{i}]") for i, v in enumerate(values)]
    group = IntegerAttr.get(IntegerType.get_signless(64, _context(loc)), n)
    return _verified(WaitGroupOp(group, values, loc=loc, ip=ip))


class MmaOptions(TypedDict, total=False):
    """The keywords mma_async and mma_async_sp share (all keyword-only).

    shape    (64, n, k) or a ShapeAttr (required)
    a_type, b_type, d_type   PTX type names ("f16", "e4m3", "s32", ...) or
             ElemType members; a_type and d_type are required, b_type
             defaults to a_type
    scale_d  True/False (constant; default True) or an i1 Value decided at
             run time
    negate_a, negate_b        imm-scale -1 (f16, bf16, tf32, fp8)
    transpose_a, transpose_b  imm-trans 1 (f16, bf16; transpose_a needs a
             descriptor A)
    satfinite                 clamp instead of wrap (s8/u8)
    loc, ip                   location and insertion point
    """

    shape: ShapeLike
    a_type: EnumLike
    b_type: EnumLike | None
    d_type: EnumLike
    scale_d: bool | Value
    negate_a: bool
    negate_b: bool
    transpose_a: bool
    transpose_b: bool
    satfinite: bool
    loc: object
    ip: object


_REQUIRED_OPTIONS = ("shape", "a_type", "d_type")


def mma_async(acc: Value, a: Value, b_desc: Value, **options: Unpack[MmaOptions]) -> Value:
    """`nvwgmma.mma_async`: D = A * B (+ D if scale_d) on one warpgroup.

    acc      accumulator struct (see accumulator_type / zero_accumulator)
    a        i64 shared-memory descriptor, or a 4 x 32-bit register fragment
    b_desc   i64 shared-memory descriptor
    options  the keywords of MmaOptions (shape, a_type, d_type, ...)

    Returns the new accumulator Value. Raises WgmmaRuleError if the
    combination is not a wgmma variant ptxas accepts for sm_90a.
    """
    return _build_mma(MmaAsyncOp, acc, a, b_desc, (), options)


def mma_async_sp(
    acc: Value,
    a: Value,
    b_desc: Value,
    metadata: Value,
    *,
    selector: int = 0,
    **options: Unpack[MmaOptions],
) -> Value:
    """`nvwgmma.mma_async.sp`: mma_async with a 2:4 (tf32: 1:2) sparse A.

    `a` holds the non-zero half of A (see nvwgmma.sparsity.compress),
    `metadata` is the i32 sparsity metadata of this thread and `selector`
    the sparsity selector (0 or 1 for f16/bf16/tf32, 0 otherwise). K is twice
    the dense K. The other keywords are those of mma_async (MmaOptions).
    """
    acc = _checks.value(acc, "acc")
    metadata = _checks.value(metadata, "metadata")
    selector = _checks.integer(selector, "selector")
    i64 = IntegerType.get_signless(64, acc.type.context)
    return _build_mma(
        MmaAsyncSpOp, acc, a, b_desc, (metadata, IntegerAttr.get(i64, selector)), options
    )


def _build_mma(op_class, acc, a, b_desc, sparse, options: dict) -> Value:
    unknown = sorted(set(options) - set(MmaOptions.__annotations__))
    if unknown:
        raise TypeError(
            f"expected keywords among {', '.join(MmaOptions.__annotations__)}, but got "
            f"{', '.join(unknown)}"
        )
    missing = [name for name in _REQUIRED_OPTIONS if name not in options]
    if missing:
        raise TypeError(f"expected the keywords {', '.join(missing)}, but got none")
    acc = _checks.value(acc, "acc")
    a = _checks.value(a, "a")
    b_desc = _checks.value(b_desc, "b_desc")
    flags = {
        name: _checks.boolean(options.get(name, False), name)
        for name in ("negate_a", "negate_b", "transpose_a", "transpose_b", "satfinite")
    }
    context = acc.type.context
    a_type = _enum(ElemType, options["a_type"])
    b_type = options.get("b_type")
    scale_d = options.get("scale_d", True)
    kwargs = {}
    if isinstance(scale_d, Value):
        kwargs["scaleDValue"] = scale_d
    else:
        scale_d = _checks.boolean(scale_d, "scale_d (or an i1 Value)")
        kwargs["scaleD"] = _enum_attr(ScaleD, "one" if scale_d else "zero", context)
    op = op_class(
        acc.type,
        a,
        b_desc,
        acc,
        *sparse,
        shape_attr(options["shape"], context),
        _enum_attr(ElemType, options["d_type"], context),
        _enum_attr(ElemType, a_type, context),
        _enum_attr(ScaleIn, "neg" if flags["negate_a"] else "one", context),
        _enum_attr(Layout, "col" if flags["transpose_a"] else "row", context),
        _enum_attr(ElemType, a_type if b_type is None else b_type, context),
        _enum_attr(ScaleIn, "neg" if flags["negate_b"] else "one", context),
        _enum_attr(Layout, "row" if flags["transpose_b"] else "col", context),
        satfinite=flags["satfinite"],
        loc=options.get("loc"),
        ip=options.get("ip"),
        **kwargs,
    )
    return _verified(op).result


def _get_ptx(op, inline: bool):
    operation = _checks.operation(op, "op")
    result = _nvwgmma.get_ptx(operation, inline)
    if result is None:
        raise ValueError(f"op must be a verified nvwgmma op, but got {operation.name}")
    return result


def ptx(op) -> str:
    """The PTX text an nvwgmma op (or an mma_async result Value) lowers to,
    with operands named (%d0, %descB) and immediates substituted."""
    return _get_ptx(op, False)


def inline_asm(op) -> tuple[str, str]:
    """(asm string, constraint string) of the llvm.inline_asm an op lowers to."""
    return _get_ptx(op, True)


def _i64_constant(value: int, loc=None, ip=None) -> Value:
    i64 = IntegerType.get_signless(64, _context(loc))
    signed = value - (1 << 64) if value >= 1 << 63 else value
    return _llvm.ConstantOp(i64, IntegerAttr.get(i64, signed), loc=loc, ip=ip).result


def descriptor(
    address: Value,
    *,
    leading_byte_offset: int,
    stride_byte_offset: int,
    swizzle="none",
    base_offset: int = 0,
    loc=None,
    ip=None,
) -> Value:
    """Build the i64 matrix descriptor of a shared-memory tile in IR.

    `address` is the tile's shared-memory address: an `!llvm.ptr<3>`, or an
    i32/i64 byte address. The constant fields are validated and encoded by
    `nvwgmma.descriptors.encode_descriptor` (every swizzle mode, unlike
    upstream nvgpu's 128B-only builder); the start address is encoded at run
    time as `(address & 0x3FFFF) >> 4` with llvm.and/lshr/or.
    """
    from ..descriptors import encode_descriptor

    constant = int(
        encode_descriptor(0, leading_byte_offset, stride_byte_offset, swizzle, base_offset)
    )
    address = _checks.value(address, "address")
    context = _context(loc)
    i64 = IntegerType.get_signless(64, context)
    if isinstance(address.type, IntegerType) and address.type.width in (32, 64):
        if address.type.width < 64:
            address = _llvm.zext(i64, address, loc=loc, ip=ip)
    elif isinstance(address.type, _llvm.PointerType):
        address = _llvm.ptrtoint(i64, address, loc=loc, ip=ip)
    else:
        raise TypeError(
            "address must be an !llvm.ptr (shared memory) or an i32/i64 byte address, "
            f"but got a Value of type {address.type}"
        )
    masked = _llvm.and_(address, _i64_constant(0x3FFFF, loc, ip), loc=loc, ip=ip)
    start = _llvm.lshr(masked, _i64_constant(4, loc, ip), loc=loc, ip=ip)
    return _llvm.or_(start, _i64_constant(constant, loc, ip), loc=loc, ip=ip)


def advance_descriptor(desc: Value, byte_offset: int, *, loc=None, ip=None) -> Value:
    """The descriptor of the same tile `byte_offset` bytes further (a K-loop
    step): adds byte_offset >> 4 to the start-address field."""
    desc = _checks.integer_value(desc, "desc", (64,))
    # The start-address field holds 14 bits of address / 16.
    byte_offset = _checks.integer(byte_offset, "byte_offset", -(1 << 18), 1 << 18)
    if byte_offset % 16:
        raise ValueError(f"byte offset must be a multiple of 16, but got {byte_offset}")
    step = _i64_constant(byte_offset >> 4, loc, ip)
    return _llvm.add(desc, step, _llvm.IntegerOverflowFlags.none, loc=loc, ip=ip)
