"""Which output tile, and which part of its K, each CTA of a persistent
GEMM works on, and in what order: the tile scheduler.

Every scheduler hands a CTA a loop of work units (`units()`), each the
K stages [k_first, k_end) of one C tile (`work(unit)`):

- `Persistent` (data-parallel): unit u is a whole tile (a cluster's
  cluster_m vertically adjacent tiles) and goes to CTA u mod G; tiles are
  taken in L2 groups of `group_m` tile rows, column-major inside a group,
  so the A rows and B columns a wave of CTAs reads stay in L2.
- `SplitK`: each tile's K in `splits` equal parts, unit u = tile * splits
  + part, dealt out like the data-parallel units. Parts 0 .. S-2 write
  their f32 partial to a workspace slot; part S-1 (the highest unit of the
  tile, so the last any CTA reaches) adds them, in part order, and stores.
- `StreamK`: the problem's tiles x K-stages iterations cut into G
  contiguous ranges that differ by at most one iteration, one per CTA. A tile cut between CTAs g < g' is
  finished by g, the CTA holding its first K stage (the end of g's range,
  the last thing g does); every later piece is the start of its CTA's
  range (the first thing that CTA does), written to slot g' and added by g
  in CTA order.

Every scheduler's units may walk their K range either way (`k_stage`):
with `k_order="serpentine"` (the default) a CTA's odd units go backwards.
Partials are added in a fixed order, so results do not change from run to
run. A finishing unit waits only on units its CTA's peers reach no later
than their current one, so with every CTA resident (the grid is at most
one CTA per SM) the waits always end. The host side, `grid_size`, picks G.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Grouped", "Masked", "Persistent", "SplitK", "StreamK", "Work", "grid_size",
           "make_scheduler"]  # fmt: skip


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def grid_size(meta: dict, m: int, n: int, k: int, sms: int, batch: int = 1) -> int:
    """CTAs to launch for a batch of M x N x K problems on a GPU with `sms`
    SMs (a multiple of the cluster size).

    Persistent and balanced: the fewest CTAs that still finish in the same
    number of waves, so every CTA gets the same number of tiles (512 tiles
    on 132 SMs: 128 CTAs x 4 tiles, not 116 x 4 + 16 x 3). The makespan is
    the same, but the last wave is not ragged and four SMs stay idle, which
    under the power cap measured +3 % (bench/gemm ablation). Stream-K: one
    CTA per SM, at most one per K stage of the problem."""
    cluster = meta["cluster"][0]
    bm, bn, bk = meta["tile"]
    tiles = batch * _ceil(_ceil(m, bm), cluster) * _ceil(n, bn)
    scheduler = meta.get("scheduler", "persistent")
    if scheduler == "stream_k":
        return max(1, min(sms, tiles * _ceil(k, bk)))
    units = tiles * (meta["splits"] if scheduler == "split_k" else 1)
    if k > meta["persistent_max_k"]:
        return units * cluster
    return balanced_ctas(units, max(1, sms // cluster)) * cluster


def balanced_ctas(units: int, slots: int) -> int:
    """The fewest CTAs (clusters) that finish `units` (at least 1) in as
    many waves as `slots` would: every CTA gets the same number of units."""
    return _ceil(units, _ceil(units, slots))


def _slots(meta: dict, m: int, n: int, grid: int, batch: int) -> int:
    """Partial slots of a split-K or stream-K launch (0 for data-parallel)."""
    scheduler = meta.get("scheduler", "persistent")
    if scheduler == "persistent":
        return 0
    if scheduler == "split_k":
        bm, bn, _ = meta["tile"]
        return batch * _ceil(m, bm) * _ceil(n, bn) * meta["splits"]
    return grid


def workspace_bytes(meta: dict, m: int, n: int, k: int, grid: int, batch: int = 1) -> int:
    """Bytes of scratch a split-K or stream-K launch of `grid` CTAs needs
    for its partials (0 for data-parallel): one f32 tile per slot."""
    bm, bn, _ = meta["tile"]
    return _slots(meta, m, n, grid, batch) * bm * bn * 4


def flag_bytes(meta: dict, m: int, n: int, k: int, grid: int, batch: int = 1) -> int:
    """Bytes of zeroed flags the launch needs (0 for data-parallel): one
    i32 per slot and consumer warpgroup; the kernel leaves them zero."""
    return _slots(meta, m, n, grid, batch) * (meta["tile"][0] // 64) * 4


@dataclass
class Work:
    """One work unit: the K stages [k_first, k_end) (index Values) of the C
    tile at (row, col, batch) (i32 Values). With a fix-up, `writer` (i1)
    units store their partial in workspace slot `slot` (i32) and skip the
    epilogue; `finisher` (i1) units add the tile's partials first.

    Where A's or B's batch coordinate is not C's (a grouped GEMM sends the
    group to B only), `a_batch` / `b_batch` (i32) name it; `rows` / `cols`
    (i32), where given, bound the rows / columns the store writes below M /
    N (a group's last row): the registers epilogue honours them, the TMA
    one cannot (it clips at the tensor's edges) and refuses them."""

    row: object
    col: object
    batch: object
    k_first: object
    k_end: object
    writer: object = None
    finisher: object = None
    slot: object = None
    tile: object = None  # i32: the tile's index (split-K, stream-K)
    a_batch: object = None
    b_batch: object = None
    rows: object = None
    cols: object = None


class Persistent:
    """IR for the data-parallel persistent schedule of `config` on an
    M x N x K problem batched `batch` times (i32 Values; tiles may hang over
    the edges): `units()` is the (first, end, step) of this CTA's loop over
    work units (index Values), `work(unit)` what it computes. `cta` and
    `ctas` (i32 Values, in clusters) default to the launch's ctaid.x and
    nctaid.x over cluster_m; given, the schedule runs anywhere (a CPU test
    replays every CTA's units)."""

    fixup = False

    def __init__(self, config, m, n, k, batch, *, rank=None, cta=None, ctas=None):
        from ...dialects import arith, nvvm
        from ...ir import IndexType, IntegerType

        self.config = c = config
        self.rank = rank
        i32, self.index = IntegerType.get_signless(32), IndexType.get()
        self.i32 = i32
        # A cluster works on cluster_m vertically adjacent tiles at a time.
        self.rows_of_units = self.ceil(m, c.tile_m * c.cluster_m)
        self.tiles_n = self.ceil(n, c.tile_n)
        self.per_batch = arith.muli(self.rows_of_units, self.tiles_n)
        self.tiles = arith.muli(self.per_batch, batch)
        self.k_tiles = self.ceil(k, c.k_tile)
        if cta is None:
            cta = arith.divui(nvvm.read_ptx_sreg_ctaid_x(i32), self.const(c.cluster_m))
        if ctas is None:
            ctas = arith.divui(nvvm.read_ptx_sreg_nctaid_x(i32), self.const(c.cluster_m))
        self.cta_i32, self.ctas_i32 = cta, ctas
        self.cta = arith.index_cast(self.index, self.cta_i32)
        self.ctas = arith.index_cast(self.index, self.ctas_i32)

    def const(self, v):
        from ...dialects import arith

        return arith.constant(self.i32, v)

    def ceil(self, value, divisor: int):
        """ceil(value / divisor) for an i32 Value below 2^31."""
        from ...dialects import arith

        return arith.divui(arith.addi(value, self.const(divisor - 1)), self.const(divisor))

    def _index(self, value):
        from ...dialects import arith

        return arith.index_cast(self.index, value)

    def units(self):
        return self.cta, self._index(self.tiles), self.ctas

    def work(self, unit) -> Work:
        from ...dialects import arith

        row, col, batch = self.tile(arith.index_cast(self.i32, unit))
        return Work(row, col, batch, self._index(self.const(0)), self._index(self.k_tiles))

    def cursor(self) -> list:
        """The i32 Values a role carries from one of its units to the next
        (none here): see `advance`."""
        return []

    def advance(self, unit, cursor) -> tuple:
        """(work(unit), the cursor after it): each role walks its units in
        increasing order, so a scheduler whose `work` searches (Grouped)
        can start where the previous unit's search ended. The Work is
        work(unit)'s whatever the cursor, so units stay pure functions of
        the unit index."""
        return self.work(unit), []

    def k_stage(self, work, step, j):
        """The K stage (i32) loaded at loop step `step` (an index Value in
        [k_first, k_end)) of the CTA's `j`-th unit (i32; None when
        config.k_order is "forward"). Serpentine: odd units walk their K
        range backwards, so each starts on the stages its predecessor
        loaded last -- the A rows it shares with them (the next tile
        column of the same L2 group), still in L2."""
        from ...dialects import arith

        kt = arith.index_cast(self.i32, step)
        if self.config.k_order == "forward":
            return kt
        first = arith.index_cast(self.i32, work.k_first)
        end = arith.index_cast(self.i32, work.k_end)
        back = arith.subi(arith.addi(first, end), arith.addi(kt, self.const(1)))
        odd = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(j, self.const(1)), self.const(0))
        return arith.select(odd, back, kt)

    def tile(self, t):
        """(row, col, batch) of C for tile (cluster unit) `t` (i32):
        batch-major, then groups of group_m tile rows, column-major inside a
        group (L2 reuse); in a cluster, CTA r takes tile row r of the unit."""
        from ...dialects import arith

        c, const = self.config, self.const
        batch = arith.divui(t, self.per_batch)
        t = arith.remui(t, self.per_batch)
        tm, tn = self.banded(t, self.rows_of_units, max(1, c.group_m // c.cluster_m))
        if self.rank is not None:
            tm = arith.addi(arith.muli(tm, const(c.cluster_m)), self.rank)
        return arith.muli(tm, const(c.tile_m)), arith.muli(tn, const(c.tile_n)), batch

    def banded(self, t, tile_rows, band_rows: int):
        """(tile row, tile column) of tile `t` (i32) of a tile_rows x
        tiles_n grid walked in bands of `band_rows` tile rows, column-major
        inside a band: the CTAs of a wave share B's columns in L2."""
        from ...dialects import arith

        band = self.const(band_rows)
        per_band = arith.muli(band, self.tiles_n)
        first = arith.muli(arith.divui(t, per_band), band)
        size = arith.minui(arith.subi(tile_rows, first), band)
        within = arith.remui(t, per_band)
        return arith.addi(first, arith.remui(within, size)), arith.divui(within, size)


class SplitK(Persistent):
    """Each tile's K stages in `config.splits` parts (see the module doc)."""

    fixup = True

    def __init__(self, config, m, n, k, batch, **where):
        from ...dialects import arith

        super().__init__(config, m, n, k, batch, **where)
        self.count = arith.muli(self.tiles, self.const(config.splits))

    def units(self):
        return self.cta, self._index(self.count), self.ctas

    def _bound(self, part):
        """The first K stage of part `part` (i32): part * k_tiles / splits."""
        from ...dialects import arith

        return arith.divui(arith.muli(part, self.k_tiles), self.const(self.config.splits))

    def work(self, unit) -> Work:
        from ...dialects import arith

        u = arith.index_cast(self.i32, unit)
        s = self.const(self.config.splits)
        t, part = arith.divui(u, s), arith.remui(u, s)
        row, col, batch = self.tile(t)
        last = arith.cmpi(arith.CmpIPredicate.eq, part, self.const(self.config.splits - 1))
        return Work(
            row,
            col,
            batch,
            self._index(self._bound(part)),
            self._index(self._bound(arith.addi(part, self.const(1)))),
            writer=arith.xori(last, arith.constant(last.type, 1)),
            finisher=last,
            slot=u,
            tile=t,
        )

    def partials(self, work, acc, add):
        """`add(acc, slot)` over the tile's partial slots, in part order."""
        from ...dialects import arith, scf
        from ...ir import InsertionPoint

        first = arith.muli(work.tile, self.const(self.config.splits))
        loop = scf.ForOp(
            self._index(self.const(0)),
            self._index(self.const(self.config.splits - 1)),
            self._index(self.const(1)),
            [acc],
        )
        with InsertionPoint(loop.body):
            slot = arith.addi(first, arith.index_cast(self.i32, loop.induction_variable))
            scf.YieldOp([add(loop.inner_iter_args[0], slot)])
        return loop.results[0]


class StreamK(Persistent):
    """The tiles x K-stages iteration space cut into equal contiguous
    ranges, one per CTA (see the module doc)."""

    fixup = True

    def __init__(self, config, m, n, k, batch, **where):
        from ...dialects import arith

        super().__init__(config, m, n, k, batch, **where)
        self.total = arith.muli(self.tiles, self.k_tiles)  # < 2^31: the host checks
        self.share = arith.divui(self.total, self.ctas_i32)
        self.extra = arith.remui(self.total, self.ctas_i32)
        self.start = self._start(self.cta_i32)
        self.end = self._start(arith.addi(self.cta_i32, self.const(1)))

    def _start(self, g):
        """The first iteration of CTA g's range: the first total mod G CTAs
        take one iteration more than the rest (32-bit: a 64-bit division
        costs the finisher's loop registers)."""
        from ...dialects import arith

        return arith.addi(arith.muli(g, self.share), arith.minui(g, self.extra))

    def units(self):
        """The tiles this CTA's range touches (empty if the range is)."""
        from ...dialects import arith

        first = arith.divui(self.start, self.k_tiles)
        last = arith.divui(arith.addi(self.end, self.const(-1)), self.k_tiles)
        empty = arith.cmpi(arith.CmpIPredicate.eq, self.start, self.end)
        end = arith.select(empty, first, arith.addi(last, self.const(1)))
        return self._index(first), self._index(end), self._index(self.const(1))

    def work(self, unit) -> Work:
        from ...dialects import arith

        t = arith.index_cast(self.i32, unit)
        row, col, batch = self.tile(t)
        tile_start = arith.muli(t, self.k_tiles)
        lo = arith.subi(arith.maxui(self.start, tile_start), tile_start)
        hi = arith.subi(arith.minui(self.end, arith.addi(tile_start, self.k_tiles)), tile_start)
        zero = self.const(0)
        writer = arith.cmpi(arith.CmpIPredicate.ugt, lo, zero)
        cut = arith.cmpi(arith.CmpIPredicate.ult, hi, self.k_tiles)
        finisher = arith.andi(arith.cmpi(arith.CmpIPredicate.eq, lo, zero), cut)
        return Work(
            row,
            col,
            batch,
            self._index(lo),
            self._index(hi),
            writer=writer,
            finisher=finisher,
            slot=self.cta_i32,
            tile=t,
        )

    def partials(self, work, acc, add):
        """`add(acc, slot)` over the CTAs after this one whose range starts
        inside the tile, in CTA order."""
        from ...dialects import arith, scf
        from ...ir import InsertionPoint

        tile_end = arith.muli(arith.addi(work.tile, self.const(1)), self.k_tiles)
        g = arith.addi(self.cta_i32, self.const(1))
        loop = scf.WhileOp([g.type, acc.type], [g, acc])
        before = loop.before.blocks.append(g.type, acc.type)
        with InsertionPoint(before):
            peer = before.arguments[0]
            inside = arith.cmpi(arith.CmpIPredicate.ult, self._start(peer), tile_end)
            scf.ConditionOp(inside, list(before.arguments))
        after = loop.after.blocks.append(g.type, acc.type)
        with InsertionPoint(after):
            peer, partial = after.arguments
            scf.YieldOp([arith.addi(peer, self.const(1)), add(partial, peer)])
        return loop.results[1]


class Grouped(Persistent):
    """Ragged groups of rows on one tile grid of N (a grouped GEMM,
    torch._grouped_mm's 2-D x 3-D form): group g owns rows [offs[g-1],
    offs[g]) of A and C (`offsets`: a pointer to `groups` cumulative row
    ends, i32, in device memory -- read on the device, so the host never
    waits for them) and batch entry g of B. Unit u is the u-th (group, tile
    row, tile column), groups in order, then tile rows, then columns; an
    empty group has no units. `work(u)` finds u's group by a scan of the
    offsets (the same in every thread; `advance` starts it at the previous
    unit's group) and bounds the store to the group's last row
    (Work.rows), so the registers epilogue never writes into the next
    group. An end below the one before it reads as that one (an empty
    group).

    With `table` (a pointer to config.group_table groups' shared memory,
    group_table.table_bytes) the CTA's threads first copy the groups
    there, and `work(u)` finds u's group by a search of the table with no
    loop (group_table.GroupTable). Every thread of the CTA must then
    construct the scheduler: `threads` is (this thread, the CTA's threads,
    a barrier callable), by default tid.x, ntid.x and bar.sync 0. Whole
    warps (`advance_in_warps`: the consumers) search it by vote (`lanes`,
    group_table.WarpVote by default), one thread (the producer) by halving."""

    def __init__(self, config, m, n, k, offsets, groups, *, rank=None, cta=None, ctas=None,
                 table=None, threads=None, lanes=None):  # fmt: skip
        from ...dialects import arith

        one = arith.constant(m.type, 1)  # one batch: the groups share B's batch axis
        super().__init__(config, m, n, k, one, rank=rank, cta=cta, ctas=ctas)
        self.offsets, self.groups, self.lanes = offsets, groups, lanes
        self.table = None
        if table is None or not config.group_table:
            self.total = self._scan(None)[1]
            return
        from .group_table import GroupTable

        self.table = GroupTable(self, table, config.group_table)
        self.total = self.table.fill(*(threads or self._threads()))

    def _threads(self):
        from ...dialects import nvvm

        def barrier():
            # The table is no wgmma's operand, but the checker cannot tell
            # (protocol_c5): a generic-proxy write to shared memory is
            # fenced before any mma_async; once per CTA.
            nvvm.fence_proxy(nvvm.ProxyKind.async_shared, space=nvvm.SharedSpace.shared_cta)
            nvvm.barrier0()

        return nvvm.read_ptx_sreg_tid_x(self.i32), nvvm.read_ptx_sreg_ntid_x(self.i32), barrier

    # Offsets a scan step reads at once: its loads are independent, so they
    # are in flight together, where one load per group waited for each in
    # turn (~50 cycles a group: 6k cycles of every unit at 128 experts, as
    # long as a short-K tile's mainloop).
    SCAN_STEP = 8

    def _scan(self, unit, start=None):
        """The scan over the groups, SCAN_STEP offsets per step: (last end,
        units before the end, and for `unit` (an i32 Value, or None): its
        group, the group's first row, its end and the units before the
        group). With a unit it stops at the step that holds the unit's
        group (then the first two results are that step's). `start`: the
        (group, its first row, units before it) to begin at -- a group at
        or before the unit's (a cursor) -- else group 0."""
        from ...dialects import arith, llvm, scf
        from ...ir import InsertionPoint
        from .._ir import gep

        zero, step = self.const(0), self.SCAN_STEP
        # next group, prev end, before, found g/start/end/before
        carried = [*(start or [zero] * 3), *[zero] * 4]
        loop = scf.WhileOp([v.type for v in carried], carried)
        cond = loop.before.blocks.append(*[v.type for v in carried])
        with InsertionPoint(cond):
            g0, _, before = cond.arguments[:3]
            going = arith.cmpi(arith.CmpIPredicate.slt, g0, self.groups)
            if unit is not None:  # not yet past the unit's group
                going = arith.andi(going, arith.cmpi(arith.CmpIPredicate.ule, before, unit))
            scf.ConditionOp(going, list(cond.arguments))
        body = loop.after.blocks.append(*[v.type for v in carried])
        with InsertionPoint(body):
            g0, prev_end, before, *found = body.arguments
            last = arith.subi(self.groups, self.const(1))
            gs = [arith.addi(g0, self.const(j)) for j in range(step)]
            inside = [arith.cmpi(arith.CmpIPredicate.slt, g, self.groups) for g in gs]
            # Every load first (a clamped address past the last group).
            values = [llvm.load(self.i32, gep(self.offsets, arith.minsi(g, last), self.i32))
                      for g in gs]  # fmt: skip
            for g, ok, value in zip(gs, inside, values):
                start, end = self._rows(g, value, prev_end)
                end = arith.select(ok, end, prev_end)
                rows = arith.select(ok, arith.subi(end, start), zero)
                after = arith.addi(before, arith.muli(self._tile_rows(rows), self.tiles_n))
                if unit is not None:
                    hit = arith.andi(arith.cmpi(arith.CmpIPredicate.ule, before, unit),
                                     arith.cmpi(arith.CmpIPredicate.ult, unit, after))  # fmt: skip
                    found = [arith.select(hit, new, old)
                             for new, old in zip((g, start, end, before), found)]  # fmt: skip
                prev_end, before = end, after
            scf.YieldOp([arith.addi(g0, self.const(step)), prev_end, before, *found])
        return loop.results[1:]

    def _tile_rows(self, rows):
        """A group's tile rows of `rows` rows, a cluster's at a time: the
        scan's unit count and advance's tile walk must agree on it."""
        c = self.config
        return self.ceil(rows, c.tile_m * c.cluster_m)

    def _rows(self, g, value, prev_end):
        """(first row, end) of group g, from its offsets entry `value`: the
        rows after the previous group's. A decreasing end is an empty group:
        the scan stays monotone whatever the offsets hold (they are not
        checked in a capture)."""
        from ...dialects import arith

        return prev_end, arith.maxsi(value, prev_end)

    def units(self):
        return self.cta, self._index(self.total), self.ctas

    def work(self, unit) -> Work:
        return self.advance(unit, self.cursor())[0]

    def cursor(self) -> list:
        """(group, its first row, units before it) of the last unit's group:
        the next unit's scan starts there, not at group 0 -- a step or two
        where CTAs 132 units apart cross a few groups, instead of groups / 8
        steps before every unit's mainloop (at 128 experts, a short-K
        tile's time). With a table: (group, first row, end, units before
        it, units up to its end); a unit still in that group searches
        nothing."""
        return [self.const(0)] * (3 if self.table is None else 5)

    def _find(self, u, cursor, warps):
        """(group, first row, end, units before, cursor after) of unit `u`,
        found by whole warps or by one thread."""
        from ...dialects import arith, scf
        from ...ir import InsertionPoint

        if self.table is None:
            _, _, group, start, end, before = self._scan(u, cursor)
            return group, start, end, before, [group, start, before]
        same = arith.cmpi(arith.CmpIPredicate.ult, u, cursor[4])
        found = scf.IfOp(same, [self.i32] * 5, has_else=True)
        with InsertionPoint(found.then_block):
            scf.YieldOp(list(cursor))
        with InsertionPoint(found.else_block):
            table = self.table
            scf.YieldOp(list(table.find_by_vote(u, self.lanes) if warps else table.find(u)))
        group, start, end, before, _ = found.results
        return group, start, end, before, list(found.results)

    def advance(self, unit, cursor) -> tuple:
        return self._advance(unit, cursor, warps=False)

    def advance_in_warps(self, unit, cursor) -> tuple:
        """advance(unit, cursor) for callers that are whole warps, every
        lane together (the consumers): the table searched by vote."""
        return self._advance(unit, cursor, warps=True)

    def _advance(self, unit, cursor, warps) -> tuple:
        from ...dialects import arith

        u = arith.index_cast(self.i32, unit)
        group, start, end, before, cursor = self._find(u, cursor, warps)
        local = arith.subi(u, before)
        c, const, zero = self.config, self.const, self.const(0)
        # Inside a group, the L2 bands of Persistent.tile (row by row, a
        # wave would stream all of B once per tile row). A cluster's CTAs
        # take adjacent tile rows of one group and share its B; where the
        # group's rows end in the first, the second's rows are all past
        # the end, so it stores nothing (Work.rows) but still loads and
        # multicasts its half of B.
        tile_rows = self._tile_rows(arith.subi(end, start))
        tm, tn = self.banded(local, tile_rows, max(1, c.group_m // c.cluster_m))
        if self.rank is not None:
            tm = arith.addi(arith.muli(tm, const(c.cluster_m)), self.rank)
        row = arith.addi(start, arith.muli(tm, const(c.tile_m)))
        col = arith.muli(tn, const(c.tile_n))
        work = Work(row, col, zero, self._index(zero), self._index(self.k_tiles),
                    a_batch=zero, b_batch=group, rows=end)  # fmt: skip
        return work, cursor


class Masked(Grouped):
    """Groups of rows at a fixed stride (the masked layout of MoE decode
    under CUDA graphs: activations (groups, max_rows, K) flattened to
    groups x max_rows rows, each group's token count on the device): group
    g owns rows [g * max_rows, g * max_rows + counts[g]) of A and C, the
    count clamped to [0, max_rows] (`offsets` points at the counts).
    Otherwise Grouped: units only for rows that hold tokens."""

    def __init__(self, config, m, n, k, counts, groups, max_rows, **where):
        self.max_rows = max_rows
        super().__init__(config, m, n, k, counts, groups, **where)

    def _rows(self, g, value, prev_end):
        from ...dialects import arith

        start = arith.muli(g, self.max_rows)
        count = arith.minsi(arith.maxsi(value, self.const(0)), self.max_rows)
        return start, arith.addi(start, count)


def make_scheduler(config, m, n, k, batch, **where):
    """The scheduler `config.scheduler` names (`where`: rank, cta, ctas)."""
    kind = {"persistent": Persistent, "split_k": SplitK, "stream_k": StreamK}
    return kind[config.scheduler](config, m, n, k, batch, **where)
