"""How a persistent attention kernel walks its (query block, head, batch)
tiles: statically (CTA c takes tiles c, c + grid, ...) or dynamically (each
next tile from a global counter, FlashAttention-3's causal scheduler).

Tiles are numbered in the order they should start (`tile_of`): causal,
the longest query blocks first (a short tail) within sections of heads
whose K and V fit in L2 together; else a head's query blocks side by side
(its K and V stay in L2). A static walk decides every CTA's share before
the launch: without a mask every tile costs the same; with one it walks
work units of two query blocks whose costs add up to the same
(`paired_tile`). A dynamic walk hands each tile to the first CTA that is
free.

Dynamic: the producer thread takes the next tile number from `counter[0]`
(one relaxed atomic add, issued as the current tile starts so its latency
hides behind the tile's loads) and writes it to a shared-memory slot
(two, alternating with the tile count) before Q's expect_tx: the consumers'
wait on Q's barrier then sees it. Past the last tile it writes the tile
count itself and arrives on Q's barrier without loads, which ends the
consumers' walk. The last CTA to finish (`counter[1]` counts them) sets
both counters back to zero, so the next launch starts from zero without a
memset.
"""

from __future__ import annotations

__all__ = [
    "SLOT_BYTES", "l2_section", "paired_tile", "paired_units", "tile_of", "walk_consumer",
    "walk_producer",
]  # fmt: skip

# Two i32 tile numbers (dynamic), padded to a barrier's 8 bytes each.
SLOT_BYTES = 16


def l2_section(l2_bytes: int, sk: int, head_dim: int, group: int) -> int:
    """How many (head, batch) pairs a causal section holds: as many K/V
    heads as fill half of L2 (the rest streams Q and O), times the query
    heads sharing each (GQA), at least one K/V head's worth."""
    kv_bytes = 2 * sk * head_dim * 2  # K and V, 16-bit
    return max(1, (l2_bytes // 2) // max(kv_bytes, 1)) * group


def _i32(v):
    from .._ir import i32_constant

    return i32_constant(v)


def _query_blocks(kernel):
    """ceil(Sq / block_m) as an i32 Value."""
    from ...dialects import arith

    bm = kernel.c.block_m
    return arith.divui(arith.addi(kernel.args["Sq"], _i32(bm - 1)), _i32(bm))


def _total(kernel):
    """(tile count, query blocks) as i32 Values."""
    from ...dialects import arith

    args, blocks = kernel.args, _query_blocks(kernel)
    return arith.muli(blocks, arith.muli(args["heads"], args["batches"])), blocks


class _IntOps:
    """Tile arithmetic on Python ints (what the tests walk)."""

    add, sub, mul = staticmethod(int.__add__), staticmethod(int.__sub__), staticmethod(int.__mul__)
    div, rem, min = staticmethod(int.__floordiv__), staticmethod(int.__mod__), staticmethod(min)

    @staticmethod
    def const(v):
        return v


class _IrOps:
    """The same arithmetic as unsigned i32 IR."""

    @staticmethod
    def const(v):
        return _i32(v)

    def __getattr__(self, name):
        from ...dialects import arith

        return {"add": arith.addi, "sub": arith.subi, "mul": arith.muli, "div": arith.divui,
                "rem": arith.remui, "min": arith.minui}[name]  # fmt: skip


def tile_of(t, blocks, heads, batches, section, causal, ops=_IntOps):
    """(query block, head, batch) of tile number `t` of `blocks` x `heads`
    x `batches` tiles.

    Not causal: a (head, batch) pair's query blocks side by side, so the
    CTAs working at once share their K and V in L2. Causal: longest query
    blocks first (the short ones make the tail), within sections of
    `section` (head, batch) pairs whose K and V fit in L2 together: all of
    a section's longest blocks, then its next longest, ... then the next
    section. One section of every pair would be longest-first over the
    whole grid, but then the CTAs at work read K and V of as many pairs as
    there are SMs, and each pair's K/V is read again, from DRAM, for each
    of its query blocks (FlashAttention-3's LPT scheduler sections the
    same way)."""
    pairs = ops.mul(heads, batches)
    if causal:
        span = ops.mul(section, blocks)
        first = ops.mul(ops.div(t, span), section)
        r = ops.rem(t, span)
        width = ops.min(section, ops.sub(pairs, first))
        block = ops.sub(ops.sub(blocks, ops.div(r, width)), ops.const(1))
        pair = ops.add(first, ops.rem(r, width))
    else:
        block = ops.rem(t, blocks)
        pair = ops.div(t, blocks)
    return block, ops.rem(pair, heads), ops.div(pair, heads)


def _decode(kernel, t, blocks):
    """Tile number t → kernel._tile(query block, head, batch)."""
    args = kernel.args
    kernel._tile(*tile_of(t, blocks, args["heads"], args["batches"], args["section"],
                          kernel.c.causal, _IrOps()))  # fmt: skip


def paired_units(blocks, heads, batches, ops=_IntOps):
    """Work units of a causal static walk: ceil(blocks / 2) per (head,
    batch) pair (paired_tile)."""
    return ops.mul(ops.div(ops.add(blocks, ops.const(1)), ops.const(2)), ops.mul(heads, batches))


def paired_tile(u, half, blocks, heads, batches, ops=_IntOps):
    """(query block, head, batch) of half `half` (0 or 1) of causal work
    unit `u`: unit j of a (head, batch) pair is its query blocks blocks-1-j
    and j, whose causal key blocks add up to blocks + 1 for every j -- equal
    units, so a static walk over them is as balanced as a non-causal one
    (round-robin over tiles sorted longest-first left the busiest SM 26-34 %
    above the mean at S = 512-2048: Nsight Compute saw a quarter of the SM
    cycles idle). A pair's units are adjacent, so the CTAs at work share
    few pairs' K and V in L2. With `blocks` odd the middle unit has one
    block: its half 1 names it again and is skipped."""
    per_pair = ops.div(ops.add(blocks, ops.const(1)), ops.const(2))
    pair, j = ops.div(u, per_pair), ops.rem(u, per_pair)
    mirror = ops.sub(ops.sub(blocks, ops.const(1)), j)
    block = ops.add(ops.mul(half, ops.sub(j, mirror)), mirror)  # half 0: mirror, 1: j
    return block, ops.rem(pair, heads), ops.div(pair, heads)


def _static_paired(kernel, role, before):
    """The static causal walk: CTA c takes work units c, c + G, ... (both
    halves of each in turn, paired_tile), skipping the repeated half of an
    odd middle block."""
    from ...dialects import arith, nvvm, scf
    from ...ir import IndexType, InsertionPoint, IntegerType

    i32, index = IntegerType.get_signless(32), IndexType.get()
    args, blocks = kernel.args, _query_blocks(kernel)
    cta, grid = nvvm.read_ptx_sreg_ctaid_x(i32), nvvm.read_ptx_sreg_nctaid_x(i32)
    units = paired_units(blocks, args["heads"], args["batches"], _IrOps())
    rounds = arith.divui(arith.addi(units, arith.subi(grid, _i32(1))), grid)
    loop = scf.ForOp(arith.constant(index, 0), arith.index_cast(index, arith.muli(rounds, _i32(2))),
                     arith.constant(index, 1), [_i32(0), _i32(0)])  # fmt: skip
    with InsertionPoint(loop.body):
        i = arith.index_cast(i32, loop.induction_variable)
        it, count = loop.inner_iter_args
        half = arith.andi(i, _i32(1))
        u = arith.addi(arith.muli(arith.shrui(i, _i32(1)), grid), cta)
        block, head, batch = paired_tile(u, half, blocks, args["heads"], args["batches"],
                                         _IrOps())  # fmt: skip
        # Half 1 of an odd middle unit: 2 block + 1 = blocks, half 0's block again.
        middle = arith.cmpi(arith.CmpIPredicate.eq,
                            arith.addi(arith.muli(block, _i32(2)), _i32(1)), blocks)  # fmt: skip
        repeated = arith.andi(arith.cmpi(arith.CmpIPredicate.eq, half, _i32(1)), middle)
        valid = arith.andi(arith.cmpi(arith.CmpIPredicate.ult, u, units),
                           arith.xori(repeated, arith.constant(repeated.type, 1)))  # fmt: skip
        work = scf.IfOp(valid, [i32, i32], has_else=True)
        with InsertionPoint(work.then_block):
            before(count)
            kernel._tile(block, head, batch)
            role(it)
            scf.YieldOp([arith.addi(it, kernel.n), arith.addi(count, _i32(1))])
        with InsertionPoint(work.else_block):
            scf.YieldOp([it, count])
        scf.YieldOp(list(work.results))


def _static(kernel, role, before):
    """before(count); role(it) for tiles ctaid, ctaid + nctaid, ...; `it`
    counts the K/V blocks of this CTA's earlier tiles, `count` its tiles.
    Causal: over paired work units instead (_static_paired)."""
    from ...dialects import arith, nvvm, scf
    from ...ir import IndexType, InsertionPoint, IntegerType

    if kernel.c.causal:
        return _static_paired(kernel, role, before)
    i32, index = IntegerType.get_signless(32), IndexType.get()
    total, blocks = _total(kernel)
    first = arith.index_cast(index, nvvm.read_ptx_sreg_ctaid_x(i32))
    step = arith.index_cast(index, nvvm.read_ptx_sreg_nctaid_x(i32))
    loop = scf.ForOp(first, arith.index_cast(index, total), step, [_i32(0), _i32(0)])
    with InsertionPoint(loop.body):
        t = arith.index_cast(i32, loop.induction_variable)
        it, count = loop.inner_iter_args
        before(count)
        _decode(kernel, t, blocks)
        role(it)
        scf.YieldOp([arith.addi(it, kernel.n), arith.addi(count, _i32(1))])


def _wait_q_loaded(kernel, count):
    """Q of this CTA's tile `count` has landed."""
    from ...dialects import arith
    from .. import pipeline

    pipeline.wait_parity(kernel.qbar.at(0), arith.andi(count, _i32(1)))


def _slot(kernel, count):
    """The shared-memory slot of the tile numbered `count` in this CTA."""
    from ...dialects import arith
    from ...ir import IntegerType
    from .._ir import gep

    at = arith.muli(arith.andi(count, _i32(1)), _i32(8))
    return gep(kernel.smem(kernel.slots_at), at, IntegerType.get_signless(8))


def _store_slot(kernel, count, t):
    from ...dialects import llvm

    llvm.store(t, _slot(kernel, count), alignment=4)


def _counter(kernel, which):
    from ...ir import IntegerType
    from .._ir import gep

    return gep(kernel.args["sched"], _i32(which), IntegerType.get_signless(32))


def _wait_q_released(kernel, count):
    """The consumers are done with the Q of tile `count` - 1 (none before
    the first)."""
    from ...dialects import arith, scf
    from ...ir import InsertionPoint
    from .. import pipeline

    later = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ugt, count, _i32(0)))
    with InsertionPoint(later.then_block):
        before = arith.subi(count, _i32(1))
        pipeline.wait_parity(kernel.qfree.at(0), arith.andi(before, _i32(1)))
        scf.YieldOp([])


def _dynamic_producer(kernel, role):
    from ...dialects import arith, llvm, nvvm, scf
    from ...ir import InsertionPoint, IntegerType
    from .._ir import atomic_increment

    i32, i64 = IntegerType.get_signless(32), IntegerType.get_signless(64)
    total, blocks = _total(kernel)
    grid = nvvm.read_ptx_sreg_nctaid_x(i32)
    first = nvvm.read_ptx_sreg_ctaid_x(i32)
    inits = [first, _i32(0), _i32(0)]
    loop = scf.WhileOp([i32] * 3, inits)
    before = loop.before.blocks.append(i32, i32, i32)
    with InsertionPoint(before):
        t = before.arguments[0]
        scf.ConditionOp(arith.cmpi(arith.CmpIPredicate.slt, t, total), list(before.arguments))
    after = loop.after.blocks.append(i32, i32, i32)
    with InsertionPoint(after):
        t, it, count = after.arguments
        _wait_q_released(kernel, count)
        _store_slot(kernel, count, t)
        upcoming = arith.addi(atomic_increment(_counter(kernel, 0)), grid)
        _decode(kernel, t, blocks)
        role(it)
        scf.YieldOp([upcoming, arith.addi(it, kernel.n), arith.addi(count, _i32(1))])
    count = loop.results[2]
    # The end: the tile count in the next slot, Q's barrier completed without loads.
    _wait_q_released(kernel, count)
    _store_slot(kernel, count, total)
    nvvm.mbarrier_arrive(i64, kernel.qbar.at(0))
    done = atomic_increment(_counter(kernel, 1))
    last = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, done, arith.subi(grid, _i32(1))))
    with InsertionPoint(last.then_block):
        # Every CTA has taken its last number: no add can follow these stores.
        for which in (0, 1):
            llvm.store(_i32(0), _counter(kernel, which), alignment=4)
        scf.YieldOp([])


def _dynamic_consumer(kernel, role):
    from ...dialects import arith, llvm, scf
    from ...ir import InsertionPoint, IntegerType

    i32 = IntegerType.get_signless(32)
    total, blocks = _total(kernel)
    loop = scf.WhileOp([i32] * 3, [_i32(0), _i32(0)])
    before = loop.before.blocks.append(i32, i32)
    with InsertionPoint(before):
        it, count = before.arguments
        _wait_q_loaded(kernel, count)
        t = llvm.load(i32, _slot(kernel, count), alignment=4)
        more = arith.cmpi(arith.CmpIPredicate.slt, t, total)
        scf.ConditionOp(more, [it, count, t])
    after = loop.after.blocks.append(i32, i32, i32)
    with InsertionPoint(after):
        it, count, t = after.arguments
        _decode(kernel, t, blocks)
        role(it)
        scf.YieldOp([arith.addi(it, kernel.n), arith.addi(count, _i32(1))])


def walk_producer(kernel, role):
    """The producer's walk: role(it) per tile, once the consumers released
    the last tile's Q."""
    if kernel.c.dynamic:
        _dynamic_producer(kernel, role)
    else:
        _static(kernel, role, lambda count: _wait_q_released(kernel, count))


def walk_consumer(kernel, role):
    """A consumer's walk: role(it) per tile, once its Q has landed."""
    if kernel.c.dynamic:
        _dynamic_consumer(kernel, role)
    else:
        _static(kernel, role, lambda count: _wait_q_loaded(kernel, count))
