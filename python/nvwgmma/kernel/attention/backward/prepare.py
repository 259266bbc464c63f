"""The backward's preparation pass: per query row, D = rowsum(dO * O) in
f32, the forward's log-sum-exp in log2 units (+inf where a row saw no key,
so its P is 0, not NaN) -- both laid out (batch, heads, padded queries),
each query block's start 16-byte aligned for TMA -- and the row of dQ's
f32 buffer zeroed. One pass over dO and O at memory speed, where torch's
casts, product, sum and copies took several (bench/attention/backward.py).

A CTA of 256 threads (8 warps) covers 64 query rows of one (batch, head);
a warp takes one row at a time, each lane head_dim/32 elements.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..common import kernel_family

__all__ = ["PrepareConfig", "build_prepare", "load", "write"]

SIGNATURE = (
    ("dO", "!llvm.ptr<1>"),  # dO and O: (tokens, heads, d) per batch entry, same strides
    ("O", "!llvm.ptr<1>"),
    ("LSE", "!llvm.ptr<1>"),  # the forward's f32 log-sum-exp (natural log)
    ("lse2", "!llvm.ptr<1>"),  # out: f32 (batch, heads, padded), log2 units
    ("D", "!llvm.ptr<1>"),  # out: f32 (batch, heads, padded)
    ("dQacc", "!llvm.ptr<1>"),  # out: f32 rows zeroed
    ("cuQ", "!llvm.ptr<1>"),  # varlen: i32 cumulative query offsets, else 0
    ("Sq", "i32"),
    ("padded", "i32"),  # queries rounded up to the backward's query block
    ("block", "i32"),  # the backward's query block (dQ's rows it adds into)
    ("H", "i32"),
    ("o_batch", "i64"),  # dO / O strides in elements
    ("o_row", "i32"),
    ("o_head", "i32"),
    ("lse_batch", "i64"),  # LSE strides in elements (its queries contiguous)
    ("lse_head", "i32"),
    ("dq_batch", "i64"),  # dQacc strides in elements
    ("dq_row", "i32"),
    ("dq_head", "i32"),
)
ROWS = 64  # per CTA
THREADS = 256


@dataclass(frozen=True)
class PrepareConfig:
    head_dim: int = 128
    dtype: str = "bf16"
    varlen: bool = False

    @property
    def name(self) -> str:
        return f"attn_bwd_prepare_d{self.head_dim}_{self.dtype}{'_varlen' * self.varlen}"


def build_prepare(config: PrepareConfig):
    """(module, meta): the kernel `attention_backward_prepare`, grid
    (padded / 64, heads, batch) of 256 threads."""
    from ....dialects import arith, llvm, nvvm, scf
    from ....ir import (
        BF16Type,
        F16Type,
        F32Type,
        FloatAttr,
        InsertionPoint,
        IntegerType,
        Location,
        VectorType,
    )
    from ..._ir import gep, i32_constant, kernel_shell
    from ...fastmath import LOG2E

    d = config.head_dim
    if d not in (64, 128, 256):
        raise ValueError(f"head_dim must be 64, 128 or 256, but got {d}")
    if config.dtype not in ("bf16", "f16"):
        raise ValueError(f"dtype must be bf16 or f16, but got {config.dtype!r}")
    per_lane = d // 32
    module, entry, a = kernel_shell("attention_backward_prepare", SIGNATURE, THREADS)
    with Location.unknown(), InsertionPoint(entry.operations[0]):
        i32, i64, f32 = IntegerType.get_signless(32), IntegerType.get_signless(64), F32Type.get()
        elem = BF16Type.get() if config.dtype == "bf16" else F16Type.get()
        narrow, wide_v = VectorType.get([per_lane], elem), VectorType.get([per_lane], f32)

        def c(v):
            return i32_constant(v)

        def wide(v):
            return arith.extsi(i64, v)

        def f(v):
            return llvm.mlir_constant(FloatAttr.get(f32, v))

        tid = nvvm.read_ptx_sreg_tid_x(i32)
        warp, lane = arith.divui(tid, c(32)), arith.remui(tid, c(32))
        r0 = arith.muli(nvvm.read_ptx_sreg_ctaid_x(i32), c(ROWS))
        h, b = nvvm.read_ptx_sreg_ctaid_y(i32), nvvm.read_ptx_sreg_ctaid_z(i32)
        if config.varlen:
            start = llvm.load(i32, gep(a["cuQ"], b, i32))
            sq = arith.subi(llvm.load(i32, gep(a["cuQ"], arith.addi(b, c(1)), i32)), start)
        else:
            start, sq = c(0), a["Sq"]
        head_at = arith.addi(arith.muli(wide(b), a["o_batch"]), wide(arith.muli(h, a["o_head"])))
        lse_at = arith.addi(arith.muli(wide(b), a["lse_batch"]),
                            wide(arith.addi(arith.muli(h, a["lse_head"]), start)))  # fmt: skip
        out_at = arith.muli(wide(arith.addi(arith.muli(b, a["H"]), h)), wide(a["padded"]))
        dq_at = arith.addi(arith.muli(wide(b), a["dq_batch"]), wide(arith.muli(h, a["dq_head"])))
        lane_col = arith.muli(lane, c(per_lane))
        zeros = llvm.mlir_zero(wide_v)
        for j in range(ROWS // (THREADS // 32)):
            r = arith.addi(r0, arith.addi(arith.muli(warp, c(ROWS // (THREADS // 32))), c(j)))
            token = wide(arith.addi(start, r))
            inside = arith.cmpi(arith.CmpIPredicate.slt, r, sq)  # the whole warp's row
            row = scf.IfOp(inside, [f32, f32], has_else=True)
            with InsertionPoint(row.then_block):
                at = arith.addi(arith.addi(head_at, arith.muli(token, wide(a["o_row"]))),
                                wide(lane_col))  # fmt: skip
                x, y = (llvm.fpext(wide_v, llvm.load(narrow, gep(a[n], at, elem),
                                                     alignment=2 * per_lane))
                        for n in ("dO", "O"))  # fmt: skip
                products = llvm.fmul(x, y)
                total = llvm.extractelement(products, c(0))
                for k in range(1, per_lane):
                    total = llvm.fadd(total, llvm.extractelement(products, c(k)))
                for lane_xor in (16, 8, 4, 2, 1):
                    other = nvvm.shfl_sync(f32, c(-1), total, c(lane_xor), c(0x1F),
                                           nvvm.ShflKind.bfly)  # fmt: skip
                    total = llvm.fadd(total, other)
                lse = llvm.load(f32, gep(a["LSE"], arith.addi(lse_at, wide(r)), f32))
                empty = llvm.fcmp(llvm.FCmpPredicate.oeq, lse, f(float("-inf")))
                scf.YieldOp([total, llvm.select(empty, f(float("inf")), llvm.fmul(lse, f(LOG2E)))])
            with InsertionPoint(row.else_block):
                scf.YieldOp([f(0.0), f(float("inf"))])
            dd, lse2 = row.results
            first = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, lane, c(0)))
            with InsertionPoint(first.then_block):
                at = arith.addi(out_at, wide(r))
                llvm.store(dd, gep(a["D"], at, f32))
                llvm.store(lse2, gep(a["lse2"], at, f32))
                scf.YieldOp([])
            # dQ's rows the backward adds into: its whole query blocks.
            blocks = arith.muli(arith.divui(arith.addi(sq, arith.subi(a["block"], c(1))),
                                            a["block"]), a["block"])  # fmt: skip
            zero = scf.IfOp(arith.cmpi(arith.CmpIPredicate.slt, r, blocks))
            with InsertionPoint(zero.then_block):
                at = arith.addi(arith.addi(dq_at, arith.muli(token, wide(a["dq_row"]))),
                                wide(lane_col))  # fmt: skip
                llvm.store(zeros, gep(a["dQacc"], at, f32), alignment=4 * per_lane)
                scf.YieldOp([])
    module.operation.verify()
    meta = {
        "kernel": "attention_backward_prepare",
        "name": config.name,
        "block": [THREADS, 1, 1],
        "rows_per_cta": ROWS,
        "dynamic_smem": 0,
        "signature": [list(p) for p in SIGNATURE],
    }
    return module, meta


# The PTX cache's view of the kernel: FAMILY.key / write / load.
FAMILY = kernel_family(build_prepare, SIGNATURE)
write, load = FAMILY.write, FAMILY.load
