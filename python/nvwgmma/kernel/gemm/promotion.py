"""The mainloop of GemmConfig.block_scales (DeepSeek-style promotion): each
128-deep K tile's product in fresh accumulators, waited for, then added
to the running ones times the thread's row scales, scale_a[row, kt], and
the column block's, scale_b[col / 128, kt], one FMA per element (a
multiply and an add are two instructions).

A consumer's tensor-core work stops while it promotes; two consumers on
one tile keep the tensor cores partly busy in between. With `inflight`
1, the next K tile's wgmmas are issued (into a second set of fresh
accumulators) before this one's are promoted: `wait_group 1` waits for
this one only, and the promotion runs while the tensor cores work on the
next (three accumulator sets: 128-wide tiles of 64-row consumers).
"""

from __future__ import annotations

__all__ = ["block_scaled"]


class _Scales:
    """A consumer's scales and how they meet its accumulators."""

    def __init__(self, roles, work):
        from ...dialects import arith

        c, v, const = roles.c, roles.v, roles.const
        self.sa_ptr, self.sb_ptr = v.operands.extra["scale_a"], v.operands.extra["scale_b"]
        self.k_blocks = roles.scheduler.k_tiles
        last_row = arith.subi(v.operands.m, const(1))
        last_block = arith.subi(roles.scheduler.ceil(v.operands.n, 128), const(1))
        first = roles.consumer_index if c.schedule == "cooperative" else const(0)
        t = v.wg_thread
        top = arith.addi(
            arith.addi(work.row, arith.muli(first, const(64))),
            arith.addi(arith.muli(arith.shrui(t, const(5)), const(16)),
                       arith.andi(arith.shrui(t, const(2)), const(7))),
        )  # fmt: skip
        self.rows = [arith.minui(arith.addi(top, const(8 * h)), last_row) for h in range(2)]
        # B's scale per `sub` columns of the tile: per 128-column block, or,
        # for a tile of an odd number of 64-column blocks (every other one
        # starts 64 columns into a scale block), per 64 columns -- static per
        # accumulator element either way.
        self.sub = 128 if c.tile_n % 128 == 0 else 64
        if self.sub == 128:
            col_block = arith.divui(work.col, const(128))
            blocks = [arith.minui(arith.addi(col_block, const(j)), last_block)
                      for j in range(c.tile_n // 128)]  # fmt: skip
        else:
            blocks = [arith.minui(arith.divui(arith.addi(work.col, const(64 * j)), const(128)),
                                  last_block) for j in range(c.tile_n // 64)]  # fmt: skip
        if work.b_batch is not None:
            # A grouped GEMM: B's scales are one (N/128 x K/128) table per group.
            per_group = arith.muli(work.b_batch, arith.addi(last_block, const(1)))
            blocks = [arith.addi(b, per_group) for b in blocks]
        self.blocks = blocks

    def _load(self, ptr, index, kt):
        from ...dialects import arith, llvm
        from ...ir import F32Type
        from .._ir import gep

        f32 = F32Type.get()
        return llvm.load(f32, gep(ptr, arith.addi(arith.muli(index, self.k_blocks), kt), f32))

    def load(self, kt):
        """K tile `kt`'s scales (A's rows, B's column blocks), loaded where
        this is called: before a wait, their latency hides."""
        sa = [self._load(self.sa_ptr, r, kt) for r in self.rows]
        return sa, [self._load(self.sb_ptr, b, kt) for b in self.blocks]

    def promote(self, accs, fresh, scales):
        """`accs` + `fresh` x its `scales` (`load`'s), element by element."""
        from ...dialects import arith, llvm

        sa, sb = scales
        both = [[arith.mulf(a, b) for b in sb] for a in sa]
        promoted = []
        for acc, part in zip(accs, fresh):
            members = acc.type.body
            out = llvm.mlir_undef(acc.type)
            for i in range(len(members)):
                s = both[(i // 2) % 2][(8 * (i // 4)) // self.sub]
                x = llvm.extractvalue(members[i], part, [i])
                y = llvm.extractvalue(members[i], acc, [i])
                out = llvm.insertvalue(out, llvm.intr_fma(x, s, y), [i])
            promoted.append(out)
        return promoted


def _zeros(roles):
    from ...dialects import nvwgmma as wg

    return [wg.zero_accumulator("f32", roles.c.tile_n) for _ in range(roles.blocks)]


def _unset(roles):
    """Fresh accumulators for a first scale-d 0 group: undefined values
    (no register writes)."""
    from ...dialects import llvm
    from ...dialects import nvwgmma as wg

    acc_type = wg.accumulator_type("f32", roles.c.tile_n)
    return [llvm.mlir_undef(acc_type) for _ in range(roles.blocks)]


def _issue(roles, fresh, it):
    """Wait for ring position `it`'s stage and issue its wgmmas into
    `fresh` (overwriting: scale-d 0), one committed group."""
    from ...dialects import arith
    from ...dialects import nvwgmma as wg
    from ...ir import IntegerType

    stage, phase = roles.ring.stage_and_phase(it)
    roles.ring.consumer_wait(stage, phase)
    wg.fence()
    false = arith.constant(IntegerType.get_signless(1), 0)
    fresh = roles.ml.mma(fresh, stage, *roles.descs, accumulate=false)
    wg.commit_group()
    return fresh, stage


def block_scaled(roles, work, start):
    """(accumulators, ring position after) of `work`'s K tiles, each
    promoted as it completes (`config.inflight` 1: overlapped with the
    next K tile's wgmmas)."""
    if roles.c.inflight:
        return _overlapped(roles, work, start)
    return _serial(roles, work, start)


def _overlapped(roles, work, start):
    """block_scaled with the next K tile in flight. Two fresh sets, A and
    B, each in fixed registers (a set moved while its group is pending
    would be a copy of registers the tensor cores still write): K tile 0
    issued into A; then pairs of steps -- issue the next into B, wait for
    A's group only, promote A; issue the next into A, wait for B's,
    promote B -- and a tail of one step more where the K tiles are even,
    the last waited for with nothing behind it."""
    from ...dialects import arith, scf
    from ...ir import InsertionPoint

    scales, nb, const, c1 = _Scales(roles, work), roles.blocks, roles.const, roles.c1
    two = arith.constant(c1.type, 2)
    # The fresh sets' first inputs are never read (scale-d 0) and must not
    # be written after the fence: zeros would be, where LLVM sinks them.
    a, stage = _issue(roles, _unset(roles), start)
    it = arith.addi(start, const(1))
    count = arith.subi(work.k_end, work.k_first)
    pairs_end = arith.addi(work.k_first, arith.muli(arith.divui(arith.subi(count, c1), two), two))
    loop = scf.ForOp(work.k_first, pairs_end, two, [*_zeros(roles), *a, *_unset(roles), stage, it])
    with InsertionPoint(loop.body):
        carried = list(loop.inner_iter_args)
        accs, a, b = carried[:nb], carried[nb : 2 * nb], carried[2 * nb : 3 * nb]
        stage, it, kt = carried[-2], carried[-1], loop.induction_variable
        accs, b, a, stage, it = _step(roles, scales, accs, a, b, stage, it, kt)
        accs, a, b, stage, it = _step(roles, scales, accs, b, a, stage, it, arith.addi(kt, c1))
        scf.YieldOp([*accs, *a, *b, stage, it])
    results = list(loop.results)
    accs, a, b = results[:nb], results[nb : 2 * nb], results[2 * nb : 3 * nb]
    stage, it = results[-2], results[-1]
    last = arith.subi(work.k_end, c1)
    even = arith.cmpi(arith.CmpIPredicate.eq, arith.remui(count, two), arith.constant(c1.type, 0))
    tail = scf.IfOp(even, [x.type for x in accs] + [it.type], has_else=True)
    with InsertionPoint(tail.then_block):
        ends, b, _, b_stage, after = _step(
            roles, scales, accs, a, b, stage, it, arith.subi(last, c1)
        )
        scf.YieldOp([*_last(roles, scales, ends, b, b_stage, last), after])
    with InsertionPoint(tail.else_block):
        scf.YieldOp([*_last(roles, scales, accs, a, stage, last), it])
    results = list(tail.results)
    return results[:nb], results[-1]


def _step(roles, scales, accs, current, spare, stage, it, kt):
    """Issue ring position `it` into `spare`, wait for `current`'s group
    (K tile `kt`, an index) only, release its `stage`, promote it: (accs,
    the new set in flight, the promoted set, its stage, it + 1)."""
    from ...dialects import arith

    loaded = scales.load(arith.index_cast(roles.i32, kt))
    following, next_stage = _issue(roles, spare, it)
    accs, done = _retire(roles, scales, accs, current, stage, loaded, pending=1)
    return accs, following, done, next_stage, arith.addi(it, roles.const(1))


def _last(roles, scales, accs, current, stage, kt):
    """The last K tile (`kt`): wait for everything, release, promote."""
    from ...dialects import arith

    loaded = scales.load(arith.index_cast(roles.i32, kt))
    return _retire(roles, scales, accs, current, stage, loaded, pending=0)[0]


def _retire(roles, scales, accs, current, stage, loaded, *, pending):
    """Wait until `pending` groups are left (`current`'s among those
    done), release its `stage`, promote it with the `loaded` scales:
    (accs, the waited-for set)."""
    from ...dialects import nvwgmma as wg

    done = list(wg.wait_group(pending, *current).results)
    roles._release(stage)
    return scales.promote(accs, done, loaded), done


def _serial(roles, work, start):
    """(accumulators, ring position after) of `work`'s K tiles: issue,
    wait, release, promote, K tile after K tile. The fresh accumulators
    are carried: each K tile's wgmmas overwrite the last one's, so no
    zeros are written between the fence and them (LLVM would sink such
    writes below the fence)."""
    from ...dialects import arith, scf
    from ...ir import InsertionPoint

    scales, nb, const = _Scales(roles, work), roles.blocks, roles.const
    main = scf.ForOp(work.k_first, work.k_end, roles.c1, [*_zeros(roles), *_zeros(roles), start])
    with InsertionPoint(main.body):
        carried = list(main.inner_iter_args)
        accs, fresh, it = carried[:nb], carried[nb : 2 * nb], carried[-1]
        loaded = scales.load(arith.index_cast(roles.i32, main.induction_variable))
        fresh, stage = _issue(roles, fresh, it)
        accs, fresh = _retire(roles, scales, accs, fresh, stage, loaded, pending=0)
        scf.YieldOp([*accs, *fresh, arith.addi(it, const(1))])
    results = list(main.results)
    return results[:nb], results[-1]
