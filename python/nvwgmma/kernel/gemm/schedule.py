"""The kernel schedule: what each warpgroup of a GEMM CTA does with the
pieces (mainloop, epilogue, tile scheduler).

Cooperative (`cooperative`): warpgroup 0 is the producer (one thread
issues every TMA load of the ring, 40 registers); the `consumers`
warpgroups (232 registers) all work on the same tile, `consumer_rows` (64
or 128) rows each, each releasing a stage as soon as the wgmma group that
read it completed (with `split_wait`, a stage's wgmmas are two groups --
a 128-row consumer's two 64-row blocks, or the two halves of a 64-row
consumer's K steps -- and the previous stage is waited for and released
between them), then
storing their rows through the epilogue while the producer already fills
the ring for the next tile.

Ping-pong (`pingpong`): two consumers take the CTA's tiles in turn, each a
whole tile of `consumer_rows` rows; while one stores, the other's wgmmas
keep the tensor cores busy.
"""

from __future__ import annotations

__all__ = ["KernelValues", "cooperative", "pingpong"]

from dataclasses import dataclass


@dataclass
class KernelValues:
    """The IR Values the schedule works with (i32 unless noted)."""

    tm_a: object
    tm_b: object
    tm_c: object
    c_ptr: object  # !llvm.ptr<1>: C, for the registers epilogue
    warpgroup: object
    wg_thread: object
    first: object  # i1: thread 0 of the CTA
    rank: object  # cluster rank, or None
    peers: tuple  # cluster ranks that also release each stage
    base: object  # !llvm.ptr<3>: the aligned dynamic shared memory
    staging_at: int  # byte offset of the epilogue staging buffers
    operands: object  # fusion.Operands (also the problem's m and n)


class _Roles:
    """What both kernel schedules share: the producer, and the consumer's
    set-up, mainloop over one work unit and tile ending."""

    def __init__(self, config, v, ring, mainloop, epilogue, scheduler, workspace):
        from ...dialects import arith
        from ...ir import IndexType, IntegerType

        self.c, self.v, self.ring, self.ml = config, v, ring, mainloop
        self.epilogue, self.scheduler, self.workspace = epilogue, scheduler, workspace
        self.i32, self.index = IntegerType.get_signless(32), IndexType.get()
        self.c1 = arith.constant(self.index, 1)

    def const(self, value):
        from ...dialects import arith

        return arith.constant(self.i32, value)

    def producer(self):
        """One thread issues every TMA load of the CTA's units, in order."""
        from ...dialects import arith, nvvm, scf
        from ...ir import InsertionPoint

        c, v, ring, const = self.c, self.v, self.ring, self.const
        nvvm.setmaxregister(c.producer_regs, nvvm.SetMaxRegisterAction.decrease)
        issuer = scf.IfOp(v.first)
        with InsertionPoint(issuer.then_block):
            serpentine = c.k_order == "serpentine"
            # Serpentine also counts the CTA's units (j).
            cursor = _cursor(self.scheduler)
            tiles = scf.ForOp(*self.scheduler.units(), [const(0)] * (1 + serpentine) + cursor)
            with InsertionPoint(tiles.body):
                start, *j = tiles.inner_iter_args[: 1 + serpentine]
                work, cursor = _advance(self.scheduler, tiles.induction_variable,
                                        tiles.inner_iter_args[1 + serpentine :])  # fmt: skip
                loads = scf.ForOp(work.k_first, work.k_end, self.c1, [start])
                with InsertionPoint(loads.body):
                    it = loads.inner_iter_args[0]
                    stage, phase = ring.stage_and_phase(it)
                    ring.producer_acquire(stage, phase)
                    ring.producer_expect(stage, self.ml.tx_bytes)
                    kt = self.scheduler.k_stage(
                        work, loads.induction_variable, j[0] if serpentine else None
                    )
                    k0 = arith.muli(kt, const(c.k_tile))
                    self.ml.load(ring, stage, v.tm_a, v.tm_b, k0=k0, row=work.row,
                                 col=work.col, batch=work.batch, rank=v.rank,
                                 a_batch=work.a_batch, b_batch=work.b_batch)  # fmt: skip
                    scf.YieldOp([arith.addi(it, const(1))])
                scf.YieldOp([loads.results[0]] + [arith.addi(u, const(1)) for u in j] + cursor)
            scf.YieldOp([])

    def consumer(self, consumer, a_start):
        """The consumer's set-up: registers, descriptors (its A rows start
        `a_start` times consumer_rows into the stage), barrier, staging."""
        from ...dialects import arith, nvvm
        from .._ir import gep

        c, v, const = self.c, self.v, self.const
        nvvm.setmaxregister(c.consumer_regs, nvvm.SetMaxRegisterAction.increase)
        self.consumer_index = consumer
        self.descs = self.ml.descriptors(a_start)
        self.blocks = c.consumer_rows // 64
        self.releaser = arith.cmpi(arith.CmpIPredicate.eq, v.wg_thread, const(0))
        # Named barrier 0 is __syncthreads; each consumer its own.
        self.store_barrier = arith.addi(consumer, const(1))
        self.staging = gep(
            v.base,
            arith.addi(
                const(v.staging_at), arith.muli(consumer, const(self.epilogue.staging_bytes))
            ),
        )

    def _release(self, stage):
        from ...dialects import scf
        from ...ir import InsertionPoint

        rel = scf.IfOp(self.releaser)
        with InsertionPoint(rel.then_block):
            self.ring.consumer_release(stage, peers=self.v.peers)
            scf.YieldOp([])

    def _release_previous(self, accumulate, it):
        """Release the stage before ring position `it`: a previous K step
        of this unit exists exactly when this one accumulates."""
        from ...dialects import arith, scf
        from ...ir import InsertionPoint

        prev = scf.IfOp(accumulate)
        with InsertionPoint(prev.then_block):
            previous_stage, _ = self.ring.stage_and_phase(arith.subi(it, self.const(1)))
            self._release(previous_stage)
            scf.YieldOp([])

    def _halves(self):
        """The two wgmma groups of a split-wait stage: the first block, then
        the second; or, for one block, the first half of its K steps, then
        the second."""
        if self.blocks > 1:
            return dict(blocks=range(0, 1)), dict(blocks=range(1, self.blocks))
        k_steps = self.ml.a_rows.k_steps
        return dict(steps=range(0, k_steps // 2)), dict(steps=range(k_steps // 2, k_steps))

    def mainloop(self, work, start):
        """(accumulators, one per 64-row block; ring position after) of
        `work`'s K stages, the ring at position `start` (i32)."""
        from ...dialects import arith, scf
        from ...dialects import nvwgmma as wg
        from ...ir import InsertionPoint

        if self.c.block_scales:
            from .promotion import block_scaled

            return block_scaled(self, work, start)
        c, ring, const = self.c, self.ring, self.const
        a_descs, b_desc = self.descs
        # An empty K range (more split-K parts than K stages) adds zeros.
        acc0 = [wg.zero_accumulator("f32", c.tile_n) for _ in range(self.blocks)]
        main = scf.ForOp(work.k_first, work.k_end, self.c1, [*acc0, start])
        with InsertionPoint(main.body):
            *accs, it = main.inner_iter_args
            kt = arith.index_cast(self.i32, main.induction_variable)
            first_k = arith.index_cast(self.i32, work.k_first)
            stage, phase = ring.stage_and_phase(it)
            ring.consumer_wait(stage, phase)
            wg.fence()
            # The first K step of a tile overwrites: no zeroing pass.
            accumulate = arith.cmpi(arith.CmpIPredicate.ugt, kt, first_k)
            if c.split_wait:
                # The first block's wgmmas keep the tensor cores busy while
                # the previous stage's group completes and is released.
                # (Its own group: ptxas makes a wait cover every wgmma issued.)
                # With one block, the first half of the stage's K steps does.
                first, rest = self._halves()
                accs = self.ml.mma(accs, stage, a_descs, b_desc, accumulate=accumulate, **first)
                wg.commit_group()
                wg.wait_group(1)
                self._release_previous(accumulate, it)
                wg.fence()
                accs = self.ml.mma(accs, stage, a_descs, b_desc, accumulate=accumulate, **rest)
                wg.commit_group()
            else:
                accs = self.ml.mma(accs, stage, a_descs, b_desc, accumulate=accumulate)
                wg.commit_group()
                # With one group in flight, the previous group has completed
                # and its stage can be refilled; with none, this one has (and
                # the accumulators come back through the wait: nothing that
                # reads them can be scheduled above it).
                if c.inflight:
                    wg.wait_group(c.inflight)
                else:
                    accs = list(wg.wait_group(0, *accs).results)
                if c.inflight:
                    self._release_previous(accumulate, it)
                else:
                    self._release(stage)
            scf.YieldOp([*accs, arith.addi(it, const(1))])
        *accs, end = main.results
        if c.inflight:
            accs = list(wg.wait_group(0, *accs).results)
            last = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ugt, end, start))
            with InsertionPoint(last.then_block):
                last_stage, _ = ring.stage_and_phase(arith.subi(end, const(1)))
                self._release(last_stage)
                scf.YieldOp([])
        return accs, end

    def finish_tile(self, work, accs, row):
        """Store the accumulators (64-row blocks) whose first row is `row`
        -- or, for a split tile, hand each on or add its partials first."""
        from ...dialects import arith

        v, thread, barrier, const = self.v, self.v.wg_thread, self.store_barrier, self.const
        first = self.consumer_index if self.c.schedule == "cooperative" else const(0)
        for b, acc in enumerate(accs):
            row_b = row if b == 0 else arith.addi(row, const(64 * b))

            def store(acc, row_b=row_b, b=b):
                self.epilogue.store(acc, row=row_b, col=work.col, thread=thread,
                                    staging=self.staging, barrier=barrier, tm_c=v.tm_c,
                                    c_ptr=v.c_ptr, operands=v.operands, batch=work.batch,
                                    block=b, limits=(work.rows, work.cols),
                                    group=work.b_batch)  # fmt: skip

            if self.workspace is None:
                store(acc)
            else:
                part = arith.addi(arith.muli(first, const(self.blocks)), const(b))
                _fixup(work, acc, self.scheduler, self.workspace, store, part, thread, barrier)

    def done(self):
        self.epilogue.finish(barrier=self.store_barrier, thread=self.v.wg_thread)


def _cursor(scheduler) -> list:
    """The Values a role carries over its units for the scheduler: its
    `cursor()`, or none for a scheduler with only units() and work()."""
    cursor = getattr(scheduler, "cursor", None)
    return list(cursor()) if cursor is not None else []


def _advance(scheduler, unit, cursor, warps=False) -> tuple:
    """(unit's Work, the cursor after it). `warps`: the caller is whole
    warps, every lane together (a consumer; the producer is one thread),
    so the scheduler's `advance_in_warps` where it has one."""
    advance = getattr(scheduler, "advance", None)
    if warps:
        advance = getattr(scheduler, "advance_in_warps", advance)
    if advance is None:
        return scheduler.work(unit), []
    work, after = advance(unit, list(cursor))
    return work, list(after)


def _split_roles(v, producer, consumer):
    from ...dialects import arith, scf
    from ...ir import InsertionPoint, IntegerType

    i32 = IntegerType.get_signless(32)
    is_producer = arith.cmpi(arith.CmpIPredicate.eq, v.warpgroup, arith.constant(i32, 0))
    roles = scf.IfOp(is_producer, has_else=True)
    with InsertionPoint(roles.then_block):
        producer()
        scf.YieldOp([])
    with InsertionPoint(roles.else_block):
        consumer(arith.subi(v.warpgroup, arith.constant(i32, 1)))
        scf.YieldOp([])


def cooperative(config, v: KernelValues, ring, mainloop, epilogue, scheduler, workspace=None):
    """Emit the producer and consumer roles at the insertion point;
    `workspace` (a fixup.Workspace) carries partials between CTAs when the
    scheduler splits tiles' K. Consumers share each tile, consumer_rows each."""
    from ...dialects import arith, scf
    from ...ir import InsertionPoint

    r = _Roles(config, v, ring, mainloop, epilogue, scheduler, workspace)

    def consumer(index):
        r.consumer(index, a_start=index)
        tiles = scf.ForOp(*scheduler.units(), [r.const(0)] + _cursor(scheduler))
        with InsertionPoint(tiles.body):
            start, *cursor = tiles.inner_iter_args
            work, cursor = _advance(scheduler, tiles.induction_variable, cursor, warps=True)
            accs, end = r.mainloop(work, start)
            row = arith.addi(work.row, arith.muli(index, r.const(config.consumer_rows)))
            r.finish_tile(work, accs, row)
            scf.YieldOp([end] + cursor)
        r.done()

    _split_roles(v, r.producer, consumer)


# Named barriers 1 .. consumers: the consumers' epilogues; these two pass
# the tensor cores between ping-pong consumers.
_TURN_BARRIERS = (3, 4)


def pingpong(config, v: KernelValues, ring, mainloop, epilogue, scheduler, workspace=None):
    """Emit the producer and two consumers that take the CTA's work units
    in turn (unit j: consumer j mod 2), each a whole tile: one
    consumer's epilogue (or fix-up) overlaps the other's mainloop. The
    mainloops run strictly in unit order: before unit j > 0 its consumer
    waits on its turn barrier, which the other consumer arrives on as soon
    as it has issued unit j - 1's last wgmma (CUTLASS's ordered barrier);
    each arrival is matched by one wait, so none is left pending at exit."""
    from ...dialects import arith, nvvm, scf
    from ...ir import InsertionPoint

    r = _Roles(config, v, ring, mainloop, epilogue, scheduler, workspace)
    const = r.const
    threads = const(256)

    def consumer(index):
        r.consumer(index, a_start=const(0))
        first, end, step = scheduler.units()
        mine_turn = arith.addi(const(_TURN_BARRIERS[0]), index)
        other_turn = arith.subi(const(_TURN_BARRIERS[0] + _TURN_BARRIERS[1]), mine_turn)
        tiles = scf.ForOp(first, end, step, [const(0), const(0)] + _cursor(scheduler))
        with InsertionPoint(tiles.body):
            start, j, *cursor = tiles.inner_iter_args
            work, cursor = _advance(scheduler, tiles.induction_variable, cursor, warps=True)
            mine = arith.cmpi(arith.CmpIPredicate.eq, arith.andi(j, const(1)), index)
            turn = scf.IfOp(mine, [start.type], has_else=True)
            with InsertionPoint(turn.then_block):
                waits = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ugt, j, const(0)))
                with InsertionPoint(waits.then_block):
                    nvvm.BarrierOp(None, barrierId=mine_turn, numberOfThreads=threads)
                    scf.YieldOp([])
                accs, after = r.mainloop(work, start)
                next_unit = arith.addi(tiles.induction_variable, step)
                more = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ult, next_unit, end))
                with InsertionPoint(more.then_block):
                    nvvm.barrier_arrive(threads, barrier_id=other_turn)
                    scf.YieldOp([])
                r.finish_tile(work, accs, work.row)
                scf.YieldOp([after])
            with InsertionPoint(turn.else_block):
                # The other consumer's unit: skip its stages of the ring.
                skipped = arith.index_cast(r.i32, arith.subi(work.k_end, work.k_first))
                scf.YieldOp([arith.addi(start, skipped)])
            scf.YieldOp([turn.results[0], arith.addi(j, const(1))] + cursor)
        r.done()

    _split_roles(v, r.producer, consumer)


def _fixup(work, acc, scheduler, workspace, store, consumer, thread, barrier):
    """A split tile's ending: writers hand their partial on; the finisher
    adds the partials in the scheduler's order, then stores."""
    from ...dialects import scf
    from ...ir import InsertionPoint

    roles = scf.IfOp(work.writer, has_else=True)
    with InsertionPoint(roles.then_block):
        workspace.store(acc, slot=work.slot, consumer=consumer, thread=thread, barrier=barrier)
        scf.YieldOp([])
    with InsertionPoint(roles.else_block):
        finish = scf.IfOp(work.finisher, [acc.type], has_else=True)
        with InsertionPoint(finish.then_block):
            total = scheduler.partials(
                work,
                acc,
                lambda partial, slot: workspace.add(
                    partial, slot=slot, consumer=consumer, thread=thread, barrier=barrier
                ),
            )
            scf.YieldOp([total])
        with InsertionPoint(finish.else_block):
            scf.YieldOp([acc])
        store(finish.results[0])
        scf.YieldOp([])
