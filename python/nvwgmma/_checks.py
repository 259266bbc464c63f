"""Up-front argument checks of the public Python API.

Every public function checks its arguments before it touches native code,
so a wrong argument is a TypeError or ValueError that says what was expected
and what was found, never an abort or a failure far from the call.
"""

from __future__ import annotations

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _found(x) -> str:
    if x is None:
        return "None"
    text = repr(x)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(x).__name__} {text}"


def integer(x, name: str, lo: int = INT64_MIN, hi: int = INT64_MAX) -> int:
    """An int (not a bool) in [lo, hi]."""
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError(f"{name} must be an int, but got {_found(x)}")
    if not lo <= x <= hi:
        raise ValueError(f"{name} must be in [{lo}, {hi}], but got {x}")
    return x


def boolean(x, name: str) -> bool:
    """A bool (numpy bools included), not any truthy object."""
    if isinstance(x, bool) or type(x).__name__ == "bool_":
        return bool(x)
    raise TypeError(f"{name} must be a bool, but got {_found(x)}")


def value(x, name: str):
    """An MLIR Value (an OpView or Operation with one result is taken as
    that result)."""
    from .ir import Operation, OpView, Value

    if isinstance(x, (OpView, Operation)) and len(x.results) == 1:
        x = x.results[0]
    if not isinstance(x, Value):
        raise TypeError(f"{name} must be an MLIR Value, but got {_found(x)}")
    return x


def integer_value(x, name: str, widths) -> object:
    """A Value of a signless integer type whose width is in `widths`."""
    from .ir import IntegerType

    v = value(x, name)
    if not (isinstance(v.type, IntegerType) and v.type.width in widths):
        expected = " or ".join(f"i{w}" for w in widths)
        raise TypeError(f"{name} must be an {expected} Value, but got a Value of type {v.type}")
    return v


def operation(x, name: str):
    """The Operation of an op, OpView, or the defining op of a Value."""
    from .ir import Operation, OpView, Value

    if isinstance(x, Value):
        x = x.owner  # the defining op; a Block for a block argument
    if isinstance(x, OpView):
        return x.operation
    if isinstance(x, Operation):
        return x
    raise TypeError(f"{name} must be an op or an op's result Value, but got {_found(x)}")


def verified(op, what: str):
    """Verifies an upstream op a builder just made; raises TypeError (after
    erasing it) when it does not verify."""
    from .ir import MLIRError

    try:
        op.operation.verify()
    except MLIRError as error:
        messages = [d.message for d in error.error_diagnostics] or [str(error)]
        op.operation.erase()
        raise TypeError(f"{what} must build a valid op, but got: {messages[0]}") from None
    return op
