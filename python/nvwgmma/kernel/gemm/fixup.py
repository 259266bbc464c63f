"""The fix-up of split-K and stream-K: partial f32 accumulators passed
between CTAs through a global workspace.

    ws = Workspace(config, partials, flags)   # two !llvm.ptr<1> Values
    ws.store(acc, slot=, consumer=, thread=, barrier=)  # a writer unit
    acc = ws.add(acc, slot=, consumer=, thread=, barrier=)  # the finisher, per slot

Layout: `partials` holds one f32 tile per slot (tile_m x tile_n, one
64-row part per consumer warpgroup on the tile), `flags` one i32 per slot
and consumer -- a separate buffer, so that no other launch's partials ever
land on a flag (the launcher shares each buffer among the launches of a
stream, whatever their shape). A partial is kept in
the accumulator's own register order -- thread t's registers 4q .. 4q+3
at float (q * 128 + t) * 4 of its part -- so a warp's 16-byte stores and
loads cover 512 contiguous bytes, and the finisher, which holds the same
fragment, adds element to element without a shuffle.

Flags start at 0 (the launcher zeroes their buffer once): a writer's
warpgroup stores its part, syncs on its named barrier, and its thread 0
adds 1 after a release fence at GPU scope; the finisher's thread 0 spins
with acquire loads until the flag is 1, sets it back to 0 for the next
launch, and the warpgroup syncs before reading the part (CUTLASS's
generic barrier does the same with __syncthreads).
"""

from __future__ import annotations

__all__ = ["Workspace"]


class Workspace:
    def __init__(self, config, partials, flags):
        from ...ir import F32Type, IntegerType

        self.config = c = config
        self.pointer, self.flags = partials, flags
        self.i32, self.i64 = IntegerType.get_signless(32), IntegerType.get_signless(64)
        self.f32 = F32Type.get()
        self.part_floats = 64 * c.tile_n
        self.registers = c.tile_n // 2  # f32 accumulator registers per thread
        self.parts = c.tile_m // 64  # warpgroups on one tile

    def _i64(self, v):
        from ...dialects import arith

        return arith.constant(self.i64, v)

    def _gep(self, base, offset, elem):
        from .._ir import gep

        return gep(base, offset, elem)

    def _part(self, slot, consumer, thread):
        """This thread's first float of the slot's part for `consumer`."""
        from ...dialects import arith

        part = arith.addi(
            arith.muli(arith.extui(self.i64, slot), self._i64(self.parts)),
            arith.extui(self.i64, consumer),
        )
        floats = arith.addi(
            arith.muli(part, self._i64(self.part_floats)),
            arith.muli(arith.extui(self.i64, thread), self._i64(4)),
        )
        return self._gep(self.pointer, floats, self.f32)

    def _flag(self, slot, consumer):
        from ...dialects import arith

        index = arith.addi(arith.muli(slot, arith.constant(self.i32, self.parts)), consumer)
        return self._gep(self.flags, arith.extui(self.i64, index), self.i32)

    def _first_thread(self, thread):
        from ...dialects import arith

        return arith.cmpi(arith.CmpIPredicate.eq, thread, arith.constant(self.i32, 0))

    def store(self, acc, *, slot, consumer, thread, barrier):
        """Write this warpgroup's part of the partial `acc` to `slot` and
        flag it."""
        from ...dialects import llvm, scf
        from ...ir import InsertionPoint, VectorType
        from .._ir import atomic_increment

        vector = VectorType.get([4], self.f32)
        base = self._part(slot, consumer, thread)
        for q in range(self.registers // 4):
            v = llvm.mlir_undef(vector)
            for lane in range(4):
                x = llvm.extractvalue(self.f32, acc, [4 * q + lane])
                v = llvm.insertelement(v, x, _i32(lane))
            llvm.store(v, self._gep(base, q * 128 * 4, self.f32), alignment=16)
        _sync(barrier)
        signal = scf.IfOp(self._first_thread(thread))
        with InsertionPoint(signal.then_block):
            # A release fence, then a relaxed add: LLVM's NVPTX backend drops
            # the ordering of a release atomicrmw (it emits a plain atom.add).
            llvm.fence(llvm.AtomicOrdering.release, syncscope="device")
            atomic_increment(self._flag(slot, consumer))
            scf.YieldOp([])

    def add(self, acc, *, slot, consumer, thread, barrier):
        """`acc` plus the part of the partial in `slot`, once it is flagged."""
        from ...dialects import arith, llvm, scf
        from ...ir import InsertionPoint, VectorType
        from .._ir import spin_while

        flag = self._flag(slot, consumer)
        waiter = scf.IfOp(self._first_thread(thread))
        with InsertionPoint(waiter.then_block):
            spin_while(flag, lambda value: arith.cmpi(arith.CmpIPredicate.eq, value, _i32(0)))
            llvm.store(_i32(0), flag, alignment=4)
            scf.YieldOp([])
        _sync(barrier)
        vector = VectorType.get([4], self.f32)
        base = self._part(slot, consumer, thread)
        for q in range(self.registers // 4):
            v = llvm.load(vector, self._gep(base, q * 128 * 4, self.f32), alignment=16)
            for lane in range(4):
                x = llvm.extractelement(v, _i32(lane))
                index = 4 * q + lane
                total = arith.addf(llvm.extractvalue(self.f32, acc, [index]), x)
                acc = llvm.insertvalue(acc, total, [index])
        return acc


def _i32(v):
    from .._ir import i32_constant

    return i32_constant(v)


def _sync(barrier):
    """The warpgroup's named barrier `barrier` (an int or i32 Value)."""
    from .. import epilogue

    epilogue._warpgroup_barrier(epilogue._named_barrier_id(barrier, None, None), None, None)
