"""Run straight-line register code a builder emitted on all 128 threads of
a warpgroup at once, with numpy: how the kernel-layer tests check the
accumulator helpers (reductions with quad shuffles, masking, A-fragment
conversion) against numpy without a GPU.

Every value is a numpy array with the thread on axis 0: f32 as float32,
integers as uint64 wrapped to their width, bf16/f16 as their 16-bit
patterns, vectors with a second axis, structs as lists of arrays.
Shuffles exchange values between lanes of each warp as `shfl.sync` does.
"""

import numpy as np

THREADS = 128


def _width(t) -> int:
    from nvwgmma import ir

    return ir.IntegerType(t).width


def _wrap(x, t):
    return np.asarray(x, np.uint64) & np.uint64((1 << _width(t)) - 1)


def _signed(x, t):
    w = _width(t)
    x = np.asarray(x, np.int64)
    return np.where(x >= 1 << (w - 1), x - (1 << w), x)


def _to_bf16(x):
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)  # round to nearest even
    return (rounded >> 16) & 0xFFFF


def _to_f16(x):
    return np.asarray(x, np.float32).astype(np.float16).view(np.uint16).astype(np.uint64)


def _is(t, name) -> bool:
    return str(t) == name


class Warpgroup:
    """Evaluates Values on demand; `env` maps free Values (function
    arguments) to arrays (or lists of arrays for structs)."""

    def __init__(self, env=None):
        self.memo = dict(env or {})

    def __call__(self, value):
        if value not in self.memo:
            self.memo[value] = self._evaluate(value)
        return self.memo[value]

    def _evaluate(self, value):
        from nvwgmma import ir

        op = value.owner
        name = op.name
        args = [self(v) for v in op.operands]
        t = value.type
        attrs = op.attributes
        if name in ("llvm.mlir.constant", "arith.constant"):
            attr = attrs["value"]
            if isinstance(t, ir.IntegerType):
                return np.full(THREADS, ir.IntegerAttr(attr).value % (1 << _width(t)), np.uint64)
            return np.full(THREADS, ir.FloatAttr(attr).value, np.float32)
        if name in ("llvm.mlir.undef", "llvm.mlir.zero", "llvm.mlir.poison"):
            return self._zero(t)
        if name == "nvvm.read.ptx.sreg.tid.x":
            return np.arange(THREADS, dtype=np.uint64)
        if name == "llvm.extractvalue":
            return args[0][list(ir.DenseI64ArrayAttr(attrs["position"]))[0]]
        if name == "llvm.insertvalue":
            out = list(args[0])
            out[list(ir.DenseI64ArrayAttr(attrs["position"]))[0]] = args[1]
            return out
        if name == "llvm.insertelement":
            out = args[0].copy()
            out[np.arange(THREADS), args[2].astype(np.int64)] = args[1]
            return out
        if name == "llvm.extractelement":
            return args[0][np.arange(THREADS), args[1].astype(np.int64)]
        if name == "llvm.fptrunc":
            elem = str(ir.VectorType(t).element_type) if isinstance(t, ir.VectorType) else str(t)
            return {"bf16": _to_bf16, "f16": _to_f16}[elem](args[0])
        if name == "llvm.bitcast":
            source = op.operands[0].type
            if _is(source, "f32"):  # f32 -> i32: its bits
                return np.asarray(args[0], np.float32).view(np.uint32).astype(np.uint64)
            if _is(t, "f32"):  # i32 -> f32
                return (_wrap(args[0], source)).astype(np.uint32).view(np.float32)
            # vector<2 x 16-bit> -> i32: element 0 in the low half.
            return args[0][:, 0] | (args[0][:, 1] << np.uint64(16))
        if name in ("llvm.fadd", "llvm.fsub", "llvm.fmul", "llvm.intr.maxnum", "llvm.fdiv"):
            a, b = (np.asarray(x, np.float32) for x in args)
            f = {"llvm.fadd": np.add, "llvm.fsub": np.subtract, "llvm.fmul": np.multiply,
                 "llvm.intr.maxnum": np.fmax, "llvm.fdiv": np.divide}[name]  # fmt: skip
            return f(a, b).astype(np.float32)
        if name == "llvm.intr.fma":
            a, b, c = (np.asarray(x, np.float64) for x in args)
            return (a * b + c).astype(np.float32)
        if name == "llvm.call_intrinsic":
            intrinsic = ir.StringAttr(attrs["intrin"]).value
            x = np.asarray(args[0], np.float64)
            f = {"llvm.nvvm.ex2.approx.ftz.f": np.exp2, "llvm.nvvm.lg2.approx.ftz.f": np.log2,
                 "llvm.nvvm.rcp.approx.ftz.f": lambda v: 1 / v}[intrinsic]  # fmt: skip
            return f(x).astype(np.float32)
        if name == "llvm.select":
            return np.where(args[0].astype(bool), args[1], args[2])
        if name in ("llvm.icmp", "arith.cmpi"):
            # arith's and llvm's predicates number alike
            pred = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"][
                ir.IntegerAttr(attrs["predicate"]).value
            ]
            a, b = args
            if pred.startswith("s"):
                a, b = _signed(a, op.operands[0].type), _signed(b, op.operands[0].type)
            f = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                 "gt": np.greater, "ge": np.greater_equal}[pred if len(pred) == 2 else pred[1:]]  # fmt: skip
            return f(a, b).astype(np.uint64)
        if name == "nvvm.shfl.sync":
            return self._shuffle(op, args)
        if name == "nvvm.convert.f32x2.to.f8x2":
            from nvwgmma.layouts import to_bits

            kind = "e4m3" if "E4M3" in str(attrs["dstTy"]) else "e5m2"
            hi, lo = (to_bits(np.asarray(v, np.float32), kind).astype(np.uint64) for v in args)
            return lo | (hi << np.uint64(8))
        ints = {
            "llvm.add": np.add, "arith.addi": np.add, "llvm.sub": np.subtract,
            "arith.subi": np.subtract, "llvm.mul": np.multiply, "arith.muli": np.multiply,
            "llvm.and": np.bitwise_and, "arith.andi": np.bitwise_and, "llvm.or": np.bitwise_or,
            "llvm.xor": np.bitwise_xor, "arith.xori": np.bitwise_xor, "llvm.lshr": np.right_shift,
            "llvm.shl": np.left_shift, "arith.remui": np.remainder, "arith.divui": np.floor_divide,
        }  # fmt: skip
        if name in ints:
            a, b = (np.asarray(x, np.uint64) for x in args)
            return _wrap(ints[name](a, b), t)
        if name == "llvm.intr.smax":
            return _wrap(np.maximum(*(_signed(x, t) for x in args)), t)
        if name in ("llvm.zext", "llvm.trunc"):
            return _wrap(args[0], t)
        raise NotImplementedError(f"warpgroup_interpret: {name}")

    def _zero(self, t):
        from nvwgmma import ir

        body = getattr(t, "body", None)
        if body is not None:
            return [self._zero(m) for m in body]
        if isinstance(t, ir.VectorType):
            return np.zeros((THREADS, t.shape[0]), np.float32 if isinstance(
                t.element_type, ir.F32Type) else np.uint64)  # fmt: skip
        return np.zeros(THREADS, np.float32 if isinstance(t, ir.F32Type) else np.uint64)

    @staticmethod
    def _shuffle(op, args):
        _, value, offset, clamp = args
        kind = str(op.attributes["kind"])
        lane = np.arange(THREADS) % 32
        base = np.arange(THREADS) - lane
        assert (clamp == 0x1F).all(), "only full-warp shuffles are modelled"
        if "bfly" in kind:
            src = lane ^ offset.astype(np.int64)
        elif "idx" in kind:
            src = offset.astype(np.int64) & 31
        else:
            raise NotImplementedError(kind)
        return value[base + src]


def accumulator_args(func_arg, matrix, d_type="f32"):
    """env entry: the (64, n) f32 `matrix` as the per-thread accumulator
    struct members of `func_arg`."""
    from nvwgmma.layouts import pack_accumulator

    regs = pack_accumulator(np.asarray(matrix, np.float32).view(np.uint32), d_type)
    return {func_arg: [regs[:, i].view(np.float32) for i in range(regs.shape[1])]}
