"""What the forward and backward attention kernels share: their builders'
IR helpers (KernelIR), a batch entry's sequence bounds, box-by-box TMA
loads of a tile, the checks of a configuration's bool fields and
warpgroup register budgets, and their place in the PTX cache."""

from __future__ import annotations

from dataclasses import fields

__all__ = [
    "KernelIR", "check_bools", "check_registers", "kernel_family", "load_tile_boxes", "sequence",
    "wide",
]  # fmt: skip


PRECOMPILE = "python -m nvwgmma.kernel.attention --precompile DIR"


def kernel_family(build, signature):
    """cache.KernelFamily of an attention kernel (the forward, the backward,
    their side passes), precompiled with attention's kernels."""
    from .. import cache

    return cache.KernelFamily(build, signature, PRECOMPILE)


class KernelIR:
    """The helpers an attention kernel's builder uses everywhere: i32
    constants, addresses in the dynamic shared memory (`self.base`,
    aligned to 1024 bytes by `dynamic_smem()`), the producer / consumer
    split."""

    def const(self, v):
        from .._ir import i32_constant

        return i32_constant(v)

    def smem(self, offset):
        from .._ir import gep

        return gep(self.base, offset)

    def split_roles(self, tid, init_barriers):
        """Thread 0 runs `init_barriers()`, the CTA syncs, then warpgroup 0
        runs `self.producer()` and the others `self.consumer(warpgroup - 1)`."""
        from ...dialects import arith, nvvm, scf
        from ...ir import InsertionPoint

        init = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, tid, self.const(0)))
        with InsertionPoint(init.then_block):
            init_barriers()
            scf.YieldOp([])
        nvvm.barrier0()
        roles = scf.IfOp(
            arith.cmpi(arith.CmpIPredicate.eq, self.warpgroup, self.const(0)), has_else=True
        )
        with InsertionPoint(roles.then_block):
            self.producer()
            scf.YieldOp([])
        with InsertionPoint(roles.else_block):
            self.consumer(arith.subi(self.warpgroup, self.const(1)))
            scf.YieldOp([])

    def dynamic_smem(self):
        from ...dialects import llvm
        from .. import smem

        self.base = smem.aligned_base(llvm.mlir_addressof(llvm.PointerType.get(3), "dsmem"), 1024)


def wide(v):
    """An i32 Value as i64 (sign-extended)."""
    from ...dialects import arith
    from ...ir import IntegerType

    return arith.extsi(IntegerType.get_signless(64), v)


def sequence(args, batch, varlen: bool):
    """(query start, query length, key start, key length, the maps' batch
    coordinate) of batch entry `batch`: dense, 0, Sq, 0, Sk and the entry;
    varlen, from the cumulative offsets cuQ / cuK, and batch coordinate 0
    (the packed tensors are one entry)."""
    from ...dialects import arith, llvm
    from ...ir import IntegerType
    from .._ir import gep, i32_constant

    i32 = IntegerType.get_signless(32)
    if not varlen:
        zero = i32_constant(0)
        return zero, args["Sq"], zero, args["Sk"], batch

    def offsets(cu):
        start = llvm.load(i32, gep(cu, batch, i32))
        end = llvm.load(i32, gep(cu, arith.addi(batch, i32_constant(1)), i32))
        return start, arith.subi(end, start)

    q_start, sq = offsets(args["cuQ"])
    k_start, sk = offsets(args["cuK"])
    return q_start, sq, k_start, sk, i32_constant(0)


def load_tile_boxes(tensor_map, geometry, dst_at, coordinates, barrier_or_ring, stage=None):
    """`geometry`'s tile loaded box by box (`geometry.tma_placements()`):
    box (offset, inner, outer) lands at `dst_at(offset)` from the map's
    `coordinates(inner, outer)`, completing on a one-shot barrier
    (`stage` None) or on ring stage `stage`."""
    from .. import pipeline

    box = geometry.tma()
    for offset, inner, outer in geometry.tma_placements():
        dst, coords = dst_at(offset), coordinates(inner, outer)
        if stage is None:
            pipeline.load_tile(tensor_map, dst, coords, barrier_or_ring, bytes=box.bytes)
        else:
            barrier_or_ring.load(tensor_map, dst, coords, stage, bytes=box.bytes)


def check_bools(c) -> None:
    """TypeError for a bool field of `c` that holds something else."""
    for f in fields(c):
        value = getattr(c, f.name)
        if f.type == "bool" and not isinstance(value, bool):
            raise TypeError(f"{f.name} must be a bool, but got {value!r}")


def check_registers(c) -> None:
    """ValueError unless `c`'s setmaxnreg counts fit what its CTA launches
    with (2 x 240 + 32 = 512 assembles but hangs the consumers' increase)."""
    from .._ir import check_registers as check

    check(c.consumers, c.consumer_regs, c.producer_regs)
