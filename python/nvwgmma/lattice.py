"""The wgmma lattice, as the C++ rule table states it.

Every fact here comes from `lib/IR/Constraints.cpp` through the native
extension: the same table the op verifiers use, checked point by point
against ptxas. Nothing in Python restates it.

    from nvwgmma import lattice
    lattice.instruction_k("bf16")                 # 16
    lattice.instruction_k("e4m3", sparse=True)    # 64
    lattice.legal_n("s8")                         # (8, 16, 24, 32, 48, ..., 256)
    lattice.accumulator_register_count("f16", 128)  # 32
    lattice.family("f16").can_transpose           # True
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Union

__all__ = [
    "INPUT_TYPES",
    "ACCUMULATOR_TYPES",
    "Family",
    "family",
    "instruction_k",
    "legal_n",
    "accumulator_register_count",
    "accumulator_member",
]


def _elem_type():
    from .dialects._nvwgmma_enum_gen import ElemType

    return ElemType


# The PTX type names, in the generated ElemType enum's order (the extension
# speaks in the enum's integer values).
_TYPE_NAMES = tuple(member.name for member in _elem_type())

TypeLike = Union[str, object]


@dataclass(frozen=True)
class Family:
    """What the lattice allows for one (a_type, b_type) input pair."""

    name: str
    k: int
    sparse_k: int  # 0: no sparse form
    can_transpose: bool
    can_negate: bool
    can_saturate: bool
    sparsity_selectors: int  # legal selectors are 0 .. sparsity_selectors-1
    n_values: tuple[int, ...]
    d_types: tuple[str, ...]


def _native():
    from ._mlir_libs import _nvwgmma

    return _nvwgmma


def _type_index(value: TypeLike, what: str, allowed=_TYPE_NAMES) -> int:
    name = getattr(value, "name", value)
    if not isinstance(name, str) or name not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(allowed)}, but got {value!r}")
    return _TYPE_NAMES.index(name)


@functools.cache
def _family(a: int, b: int) -> Family | None:
    info = _native().family_info(a, b)
    if info is None:
        return None
    info["d_types"] = tuple(_TYPE_NAMES[t] for t in info["d_types"])
    return Family(**info)


# Input types pair with themselves; accumulator types are some family's D.
INPUT_TYPES = tuple(t for i, t in enumerate(_TYPE_NAMES) if _family(i, i) is not None)
ACCUMULATOR_TYPES = tuple(
    t
    for t in _TYPE_NAMES
    if any(t in _family(i, i).d_types for i in map(_TYPE_NAMES.index, INPUT_TYPES))
)


def family(a_type: TypeLike, b_type: TypeLike | None = None) -> Family:
    """The family of an input pair (b_type defaults to a_type).

    Raises ValueError naming rule mma_async_c2/c3 when the pair is not one.
    """
    a = _type_index(a_type, "a_type", INPUT_TYPES)
    b = _type_index(a_type if b_type is None else b_type, "b_type", INPUT_TYPES)
    found = _family(a, b)
    if found is None:
        raise ValueError(
            "typeA and typeB must be equal, both e4m3/e5m2 or both s8/u8, but got "
            f"{_TYPE_NAMES[a]} and {_TYPE_NAMES[b]} (mma_async_c3)"
        )
    return found


def instruction_k(a_type: TypeLike, b_type: TypeLike | None = None, *, sparse: bool = False) -> int:
    """K of one mma_async (or mma_async.sp when `sparse`) for the input pair."""
    fam = family(a_type, b_type)
    if sparse and not fam.sparse_k:
        raise ValueError(
            f"inputs of a sparse op must not be b1 (b1 has no sparse form), but got {fam.name} "
            "(mma_async_sp_c1)"
        )
    return fam.sparse_k if sparse else fam.k


def legal_n(a_type: TypeLike, b_type: TypeLike | None = None) -> tuple[int, ...]:
    """Every legal N of the input pair, ascending."""
    return family(a_type, b_type).n_values


def accumulator_register_count(d_type: TypeLike, n: int) -> int:
    """32-bit accumulator registers per thread of an m64nN accumulator:
    n/2 for f32 and s32, n/4 for f16 (two packed halves each)."""
    d = _type_index(d_type, "d_type", ACCUMULATOR_TYPES)
    if isinstance(n, bool) or not isinstance(n, int) or n % 8 or not 8 <= n <= 256:
        raise ValueError(f"n must be a multiple of 8 in [8, 256], but got {n!r}")
    return int(_native().accumulator_register_count(d, n))


def accumulator_member(d_type: TypeLike) -> str:
    """The accumulator struct's member type name: "f32" or "i32"."""
    return _member_name(_type_index(d_type, "d_type", ACCUMULATOR_TYPES))


@functools.cache
def _member_name(d: int) -> str:
    from .ir import Context

    with Context():
        return str(_native().accumulator_member_type(d))
