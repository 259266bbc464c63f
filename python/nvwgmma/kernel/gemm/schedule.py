"""The kernel schedule: what each warpgroup of a GEMM CTA does with the
pieces (mainloop, epilogue, tile scheduler).

Cooperative (`cooperative`): warpgroup 0 is the producer (one thread
issues every TMA load of the ring, 40 registers); the `consumers`
warpgroups (232 registers) all work on the same tile, 64 rows each, each
releasing a stage as soon as the wgmma group that read it completed, then
storing their rows through the epilogue while the producer already fills
the ring for the next tile.
"""

from __future__ import annotations

__all__ = ["KernelValues", "cooperative"]

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


def cooperative(config, v: KernelValues, ring, mainloop, epilogue, scheduler, workspace=None):
    """Emit the producer and consumer roles at the insertion point;
    `workspace` (a fixup.Workspace) carries partials between CTAs when the
    scheduler splits tiles' K."""
    from ...dialects import arith, nvvm, scf
    from ...dialects import nvwgmma as wg
    from ...ir import IndexType, InsertionPoint, IntegerType
    from .._ir import gep

    c = config
    i32, index = IntegerType.get_signless(32), IndexType.get()

    def const(value, t=i32):
        return arith.constant(t, value)

    c1 = const(1, index)
    is_producer = arith.cmpi(arith.CmpIPredicate.eq, v.warpgroup, const(0))
    roles = scf.IfOp(is_producer, has_else=True)
    # ------------------------------------------------------------------ producer
    with InsertionPoint(roles.then_block):
        nvvm.setmaxregister(c.producer_regs, nvvm.SetMaxRegisterAction.decrease)
        issuer = scf.IfOp(v.first)
        with InsertionPoint(issuer.then_block):
            tiles = scf.ForOp(*scheduler.units(), [const(0)])
            with InsertionPoint(tiles.body):
                work = scheduler.work(tiles.induction_variable)
                loads = scf.ForOp(work.k_first, work.k_end, c1, [tiles.inner_iter_args[0]])
                with InsertionPoint(loads.body):
                    it = loads.inner_iter_args[0]
                    stage, phase = ring.stage_and_phase(it)
                    ring.producer_acquire(stage, phase)
                    ring.producer_expect(stage, mainloop.tx_bytes)
                    k0 = arith.muli(
                        arith.index_cast(i32, loads.induction_variable), const(c.k_tile)
                    )
                    mainloop.load(
                        ring,
                        stage,
                        v.tm_a,
                        v.tm_b,
                        k0=k0,
                        row=work.row,
                        col=work.col,
                        batch=work.batch,
                        rank=v.rank,
                    )
                    scf.YieldOp([arith.addi(it, const(1))])
                scf.YieldOp([loads.results[0]])
            scf.YieldOp([])
        scf.YieldOp([])
    # ------------------------------------------------------------------ consumers
    with InsertionPoint(roles.else_block):
        nvvm.setmaxregister(c.consumer_regs, nvvm.SetMaxRegisterAction.increase)
        consumer = arith.subi(v.warpgroup, const(1))
        a_desc, b_desc = mainloop.descriptors(consumer)
        releaser = arith.cmpi(arith.CmpIPredicate.eq, v.wg_thread, const(0))
        # Named barrier 0 is __syncthreads; each consumer its own.
        store_barrier = arith.addi(consumer, const(1))
        staging = gep(
            v.base,
            arith.addi(const(v.staging_at), arith.muli(consumer, const(epilogue.staging_bytes))),
        )

        def release(stage):
            rel = scf.IfOp(releaser)
            with InsertionPoint(rel.then_block):
                ring.consumer_release(stage, peers=v.peers)
                scf.YieldOp([])

        tiles = scf.ForOp(*scheduler.units(), [const(0)])
        with InsertionPoint(tiles.body):
            work = scheduler.work(tiles.induction_variable)
            start = tiles.inner_iter_args[0]
            # An empty K range (more split-K parts than K stages) adds zeros.
            acc0 = wg.zero_accumulator("f32", c.tile_n)
            main = scf.ForOp(work.k_first, work.k_end, c1, [acc0, start])
            with InsertionPoint(main.body):
                acc, it = main.inner_iter_args
                kt = arith.index_cast(i32, main.induction_variable)
                first_k = arith.index_cast(i32, work.k_first)
                stage, phase = ring.stage_and_phase(it)
                ring.consumer_wait(stage, phase)
                wg.fence()
                acc = mainloop.mma(
                    acc,
                    stage,
                    a_desc,
                    b_desc,
                    # The first K step of a tile overwrites: no zeroing pass.
                    accumulate=arith.cmpi(arith.CmpIPredicate.ugt, kt, first_k),
                )
                wg.commit_group()
                # With one group in flight, the previous group has completed
                # and its stage can be refilled; with none, this one has.
                wg.wait_group(c.inflight)
                if c.inflight:
                    has_previous = arith.cmpi(arith.CmpIPredicate.ugt, kt, first_k)
                    prev = scf.IfOp(has_previous)
                    with InsertionPoint(prev.then_block):
                        previous_stage, _ = ring.stage_and_phase(arith.subi(it, const(1)))
                        release(previous_stage)
                        scf.YieldOp([])
                else:
                    release(stage)
                scf.YieldOp([acc, arith.addi(it, const(1))])
            end = main.results[1]
            if c.inflight:
                wg.wait_group(0)
                ran = arith.cmpi(arith.CmpIPredicate.ugt, end, start)
                last = scf.IfOp(ran)
                with InsertionPoint(last.then_block):
                    last_stage, _ = ring.stage_and_phase(arith.subi(end, const(1)))
                    release(last_stage)
                    scf.YieldOp([])
            rows = arith.addi(work.row, arith.muli(consumer, const(64)))

            def store(acc):
                epilogue.store(
                    acc,
                    row=rows,
                    col=work.col,
                    thread=v.wg_thread,
                    staging=staging,
                    barrier=store_barrier,
                    tm_c=v.tm_c,
                    c_ptr=v.c_ptr,
                    operands=v.operands,
                    batch=work.batch,
                )

            acc = main.results[0]
            if workspace is None:
                store(acc)
            else:
                _fixup(work, acc, scheduler, workspace, store, consumer, v.wg_thread, store_barrier)
            scf.YieldOp([end])
        epilogue.finish(barrier=store_barrier, thread=v.wg_thread)
        scf.YieldOp([])


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
