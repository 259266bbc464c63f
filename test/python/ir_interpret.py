"""Evaluate the integer arithmetic a builder emitted, given values for its
free inputs: how the IR tests check address and descriptor arithmetic
against numpy or the layout tables without running a GPU. Each result
wraps to its type's width, as the hardware would."""

_OPS = {
    "llvm.add": lambda a, b: a + b,
    "llvm.sub": lambda a, b: a - b,
    "llvm.mul": lambda a, b: a * b,
    "llvm.and": lambda a, b: a & b,
    "llvm.or": lambda a, b: a | b,
    "llvm.xor": lambda a, b: a ^ b,
    "llvm.lshr": lambda a, b: a >> b,
    "llvm.shl": lambda a, b: a << b,
    "llvm.udiv": lambda a, b: a // b,
    "llvm.urem": lambda a, b: a % b,
    "llvm.zext": lambda a: a,
    "llvm.sext": lambda a: a,  # the values evaluated are not negative
    "llvm.trunc": lambda a: a,
    "llvm.ptrtoint": lambda a: a,
    "arith.addi": lambda a, b: a + b,
    "arith.muli": lambda a, b: a * b,
    "arith.andi": lambda a, b: a & b,
    "arith.xori": lambda a, b: a ^ b,
    "arith.shli": lambda a, b: a << b,
    "arith.shrui": lambda a, b: a >> b,
    "arith.remui": lambda a, b: a % b,
    "arith.divui": lambda a, b: a // b,
}


def evaluate(value, env: dict):
    """The unsigned value of `value`; `env` maps free Values to ints."""
    from nvwgmma import ir

    if value in env:
        return env[value]
    op = value.owner
    if op.name in ("llvm.mlir.constant", "arith.constant"):
        result = ir.IntegerAttr(op.attributes["value"]).value
    else:
        result = _OPS[op.name](*(evaluate(v, env) for v in op.operands))
    return result % (1 << ir.IntegerType(value.type).width)
