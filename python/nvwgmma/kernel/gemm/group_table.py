"""A grouped schedule's groups in shared memory: filled once per CTA before
its tile loop, then searched, loop-free, for each work unit's group.

The table holds, for each of `capacity` (a power of two) groups, its end
row (clamped: a decreasing end reads as the one before it, as the scan
reads it) and the units up to and including it. One thread (the producer)
finds a unit's group by halving: log2(capacity) dependent shared-memory
loads. Whole warps (the consumers) find it by vote: each lane reads one
entry and a ballot counts those at or below the unit, one step up to 32
groups, two up to 1024. A unit of the previous unit's group (most units of
a prefill) searches nothing.

Why not the scan over the offsets (scheduler.Grouped without a table), and
why the vote: what the consumers do between tiles decides how ptxas builds
their mainloop. With the scan's loop in the tile loop, or the halving search
in both roles from 16 groups up, ptxas built the consumers' whole tile loop
-- the mainloop's stage, phase and descriptor arithmetic -- in per-thread
registers and moved them over (R2UR) before every wgmma: 2.7 % fewer
tensor-core cycles than the same tile's dense GEMM, 3-6 % of the time on
1024-row experts (Nsight Compute, H200; docs/performance.md). A ballot is
the same in every lane and ptxas knows it: with the vote they stay in
uniform registers up to 32 groups. From 64, where the producer's halving is
longer, ptxas moves them again, at no cost measured on the benchmark's 64-
to 256-expert layers (128 to 512 rows an expert)."""

from __future__ import annotations

__all__ = ["GroupTable", "WarpVote", "table_bytes"]

# Units of entries past the groups: above every unit, so no search stops there.
_PAST = 0x7FFFFFFF


def table_bytes(capacity: int) -> int:
    """Shared memory a table of `capacity` groups takes: two i32 per group."""
    return 8 * capacity


class WarpVote:
    """How whole warps count: `count(n, predicate)` is the number of lanes
    l < n (n <= 32) whose `predicate(l)` (l: this lane's index, an i32
    Value below n; an i1 Value) holds, the same in every lane: a ballot of
    the warp. Every lane of the calling warps must take part."""

    def count(self, n: int, predicate):
        from ...dialects import arith, llvm, nvvm
        from ...ir import IntegerType
        from .._ir import i32_constant

        i32 = IntegerType.get_signless(32)
        lane = nvvm.read_ptx_sreg_laneid(i32)
        # Lanes past n read lane n - 1's entry and vote no.
        held = arith.andi(predicate(arith.minui(lane, i32_constant(n - 1))),
                          arith.cmpi(arith.CmpIPredicate.ult, lane, i32_constant(n)))  # fmt: skip
        return llvm.intr_ctpop(nvvm.vote_sync(i32, i32_constant(-1), held,
                                              nvvm.VoteSyncKind.ballot))  # fmt: skip


class OneThread:
    """WarpVote's count made by one thread, every lane's predicate in
    turn, summed: the vote where there is no warp (the scheduler's traces
    run the consumers' search on the CPU with it)."""

    def count(self, n: int, predicate):
        from ...dialects import arith
        from ...ir import IntegerType
        from .._ir import i32_constant

        i32 = IntegerType.get_signless(32)
        total = i32_constant(0)
        for lane in range(n):
            total = arith.addi(total, arith.extui(i32, predicate(i32_constant(lane))))
        return total


class GroupTable:
    """The table of `capacity` groups at `base` (a shared-memory pointer;
    any address space where the schedule runs on the CPU) for the grouped
    scheduler `scheduler` (scheduler.Grouped: its offsets, group count,
    `_rows` and `_tile_rows`)."""

    STEP = 8  # groups the filling thread reads at once (independent loads)

    def __init__(self, scheduler, base, capacity: int):
        from ...dialects import arith
        from .._ir import gep

        self.s, self.capacity, self.i32 = scheduler, capacity, scheduler.i32
        self.ends = base
        self.afters = gep(base, 4 * capacity)
        # More groups than the table holds are refused before launch
        # (grouped.prepare_grouped); clamped here, so memory stays in bounds.
        self.count = arith.minsi(scheduler.groups, scheduler.const(capacity))

    def _at(self, table, index):
        from .._ir import gep

        return gep(table, index, self.i32)

    def _load(self, table, index):
        from ...dialects import llvm

        return llvm.load(self.i32, self._at(table, index))

    def fill(self, thread, threads, barrier):
        """Fill the table; returns the units of all groups (i32). Every
        thread of the CTA calls it (`thread` of `threads`, i32; `barrier`
        syncs them): each copies its share of the offsets, then thread 0
        walks the groups in order."""
        from ...dialects import arith, llvm, scf
        from ...ir import InsertionPoint

        s, const, count = self.s, self.s.const, self.count
        last = arith.subi(count, const(1))
        # Raw offsets into the ends, the afters past every unit (the walk
        # overwrites the groups').
        index = s._index
        copy = scf.ForOp(index(thread), index(const(self.capacity)), index(threads))
        with InsertionPoint(copy.body):
            i = arith.index_cast(self.i32, copy.induction_variable)
            raw = llvm.load(self.i32, self._at(s.offsets, arith.maxsi(arith.minsi(i, last),
                                                                      const(0))))  # fmt: skip
            llvm.store(raw, self._at(self.ends, i))
            llvm.store(const(_PAST), self._at(self.afters, i))
            scf.YieldOp([])
        barrier()
        first = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, thread, const(0)))
        with InsertionPoint(first.then_block):
            self._walk(count)
            scf.YieldOp([])
        barrier()
        total = self._load(self.afters, arith.maxsi(last, const(0)))
        return arith.select(arith.cmpi(arith.CmpIPredicate.sgt, count, const(0)), total, const(0))

    def _walk(self, count):
        """Thread 0: each group's clamped end and units so far, in order,
        STEP groups a step (their loads first, all in flight together)."""
        from ...dialects import arith, llvm, scf
        from ...ir import InsertionPoint

        s, const, step = self.s, self.s.const, self.STEP
        zero, last = const(0), arith.subi(count, const(1))
        steps = s.ceil(count, step)
        walk = scf.ForOp(s._index(zero), s._index(steps), s._index(const(1)), [zero, zero])
        with InsertionPoint(walk.body):
            prev_end, before = walk.inner_iter_args
            g0 = arith.muli(arith.index_cast(self.i32, walk.induction_variable), const(step))
            gs = [arith.addi(g0, const(j)) for j in range(step)]
            # Past the last group a lane rewrites the last group's entries
            # with the values they already hold (its end and units).
            at = [arith.minsi(g, last) for g in gs]
            values = [self._load(self.ends, a) for a in at]
            for g, a, value in zip(gs, at, values):
                ok = arith.cmpi(arith.CmpIPredicate.slt, g, count)
                start, end = s._rows(g, value, prev_end)
                end = arith.select(ok, end, prev_end)
                rows = arith.select(ok, arith.subi(end, start), zero)
                before = arith.addi(before, arith.muli(s._tile_rows(rows), s.tiles_n))
                prev_end = end
                llvm.store(end, self._at(self.ends, a))
                llvm.store(before, self._at(self.afters, a))
            scf.YieldOp([prev_end, before])

    def find(self, unit):
        """(group, its first row, its end, units before it, units up to
        its end) of `unit` (i32, below the total), for one thread: the
        number of groups whose units end at or before it, by halving a
        power-of-two range -- log2(capacity) loads, no loop."""
        from ...dialects import arith

        const = self.s.const
        group, half = const(0), self.capacity // 2
        while half:
            ended = self._load(self.afters, arith.addi(group, const(half - 1)))
            below = arith.cmpi(arith.CmpIPredicate.ule, ended, unit)
            group = arith.select(below, arith.addi(group, const(half)), group)
            half //= 2
        return self._entries(group)

    def find_by_vote(self, unit, lanes=None):
        """find(unit)'s five values, for whole warps (`lanes`: how they
        count, WarpVote by default): the groups ending at or before `unit`
        counted by a ballot, one entry a lane -- the last group of each of
        32 blocks first where the table holds more than 32, then the
        groups of the unit's block."""
        from ...dialects import arith

        lanes, const = lanes or WarpVote(), self.s.const
        capacity = self.capacity

        def ended(first, stride, n):  # entries first + stride * (l + 1) - 1, l < n, at or below
            def predicate(lane):
                at = arith.addi(first, arith.subi(arith.muli(arith.addi(lane, const(1)),
                                                             const(stride)), const(1)))  # fmt: skip
                return arith.cmpi(arith.CmpIPredicate.ule, self._load(self.afters, at), unit)

            return lanes.count(n, predicate)

        if capacity <= 32:
            return self._entries(ended(const(0), 1, capacity))
        per = capacity // 32
        first = arith.muli(ended(const(0), per, 32), const(per))
        return self._entries(arith.addi(first, ended(first, 1, per)))

    def _entries(self, group):
        """(group, its first row, its end, units before it, units up to
        its end) of table entry `group`."""
        from ...dialects import arith

        s, const = self.s, self.s.const
        first = arith.cmpi(arith.CmpIPredicate.eq, group, const(0))
        prev = arith.maxsi(arith.subi(group, const(1)), const(0))
        end = self._load(self.ends, group)
        after = self._load(self.afters, group)
        prev_end = arith.select(first, const(0), self._load(self.ends, prev))
        before = arith.select(first, const(0), self._load(self.afters, prev))
        start, _ = s._rows(group, end, prev_end)
        return group, start, end, before, after
