"""Which output tile each CTA of a persistent GEMM works on, and in what
order: the tile scheduler.

Data-parallel persistent (`Persistent`): work unit u (a cluster's
cluster_m vertically adjacent tiles) goes to CTA u mod G; units are taken
in L2 groups of `group_m` tile rows, column-major inside a group, so the
A rows and B columns a wave of CTAs reads stay in L2. The host side,
`grid_size`, picks G: the fewest CTAs that still finish in the same
number of waves.
"""

from __future__ import annotations

__all__ = ["Persistent", "grid_size"]


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def grid_size(meta: dict, m: int, n: int, k: int, sms: int, batch: int = 1) -> int:
    """CTAs to launch for a batch of M x N x K problems on a GPU with `sms`
    SMs (a multiple of the cluster size).

    Persistent and balanced: the fewest CTAs that still finish in the same
    number of waves, so every CTA gets the same number of tiles (512 tiles
    on 132 SMs: 128 CTAs x 4 tiles, not 116 x 4 + 16 x 3). The makespan is
    the same, but the last wave is not ragged and four SMs stay idle, which
    under the power cap measured +3 % (bench/gemm ablation)."""
    cluster = meta["cluster"][0]
    bm, bn = meta["tile"][0], meta["tile"][1]
    units = batch * _ceil(_ceil(m, bm), cluster) * _ceil(n, bn)
    if k > meta["persistent_max_k"]:
        return units * cluster
    slots = max(1, sms // cluster)
    waves = _ceil(units, slots)
    return _ceil(units, waves) * cluster


class Persistent:
    """IR for the data-parallel persistent schedule of `config` on an
    M x N problem batched `batch` times (i32 Values; tiles may hang over
    the edges): `units()` is the (first, end, step) of this CTA's loop over
    work units (index Values) and `tile(unit)` the (row, col, batch) of the
    C tile it computes."""

    def __init__(self, config, m, n, batch, *, rank=None):
        from ...dialects import arith, nvvm
        from ...ir import IndexType, IntegerType

        self.config = c = config
        self.rank = rank
        i32, index = IntegerType.get_signless(32), IndexType.get()
        self.i32 = i32
        # A cluster works on cluster_m vertically adjacent tiles at a time.
        self.rows_of_units = self.ceil(m, c.tile_m * c.cluster_m)
        self.tiles_n = self.ceil(n, c.tile_n)
        self.per_batch = arith.muli(self.rows_of_units, self.tiles_n)
        self.count = arith.muli(self.per_batch, batch)
        self.cta = arith.index_cast(
            index, arith.divui(nvvm.read_ptx_sreg_ctaid_x(i32), self.const(c.cluster_m))
        )
        self.ctas = arith.index_cast(
            index, arith.divui(nvvm.read_ptx_sreg_nctaid_x(i32), self.const(c.cluster_m))
        )

    def const(self, v):
        from ...dialects import arith

        return arith.constant(self.i32, v)

    def ceil(self, value, divisor: int):
        """ceil(value / divisor) for an i32 Value below 2^31."""
        from ...dialects import arith

        return arith.divui(arith.addi(value, self.const(divisor - 1)), self.const(divisor))

    def units(self):
        from ...dialects import arith
        from ...ir import IndexType

        return self.cta, arith.index_cast(IndexType.get(), self.count), self.ctas

    def tile(self, unit):
        """(row, col, batch) of C for work unit `unit`: batch-major, then
        groups of group_m tile rows, column-major inside a group (L2 reuse);
        in a cluster, CTA r takes tile row r of the unit."""
        from ...dialects import arith

        c, const = self.config, self.const
        group_rows = max(1, c.group_m // c.cluster_m)
        u = arith.index_cast(self.i32, unit)
        batch = arith.divui(u, self.per_batch)
        t = arith.remui(u, self.per_batch)
        per_group = arith.muli(const(group_rows), self.tiles_n)
        group = arith.divui(t, per_group)
        first_m = arith.muli(group, const(group_rows))
        size_m = arith.minui(arith.subi(self.rows_of_units, first_m), const(group_rows))
        within = arith.remui(t, per_group)
        tm = arith.addi(first_m, arith.remui(within, size_m))
        if self.rank is not None:
            tm = arith.addi(arith.muli(tm, const(c.cluster_m)), self.rank)
        tn = arith.divui(within, size_m)
        return arith.muli(tm, const(c.tile_m)), arith.muli(tn, const(c.tile_n)), batch
