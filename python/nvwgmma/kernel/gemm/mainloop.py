"""The GEMM mainloop: what one ring stage holds (an A tile and a B tile in
the canonical layout wgmma reads, for either operand major-ness), the TMA
boxes the producer issues to fill it, and the wgmma steps a consumer
warpgroup runs on it.

    ml = Mainloop(config)
    ml.stage_bytes, ml.boxes          # shared memory per stage, TMA boxes
    ml.load(ring, stage, stage_base, tm_a, tm_b, k0=, row=, col=, batch=, rank=)
    accs = ml.mma(accs, stage, a_descs, b_desc, accumulate=kt > 0)

A tile is TMA-loaded as boxes of one 128-byte swizzled row each: K-major
boxes are (K row x up to 256 M/N rows); MN-major boxes are (64 M/N x K),
one 8 KiB swizzle atom column each, stacked at the descriptor's leading
byte offset. Both land exactly where the descriptor's layout expects them
(`nvwgmma.kernel.geometry`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...layouts import ELEMENT_BITS
from ..geometry import TileGeometry, TmaBox, tile_geometry

__all__ = ["Mainloop", "OperandLoads"]


@dataclass(frozen=True)
class OperandLoads:
    """How TMA fills one operand tile of `geometry`: `count` boxes of
    `box`, box i at shared offset i * box.bytes and `span` rows further
    along M/N; `k_inner`: the box's inner coordinate runs along K."""

    geometry: TileGeometry
    box: TmaBox
    count: int
    span: int
    k_inner: bool


def operand_loads(dtype: str, rows: int, k: int, major: str, split: int = 1) -> OperandLoads:
    """The boxes of a rows x k operand tile, in at least `split` boxes (a
    cluster multicast splits B among its CTAs)."""
    geometry = tile_geometry(dtype, rows=rows, k=k, major="K" if major == "K" else "MN")
    if major == "K":
        box = tile_geometry(dtype, rows=rows // split, k=k, major="K").tma()
        span = box.box[1]
    else:
        # MN elements per swizzle atom: the atoms lie the leading byte offset apart.
        atom = geometry.leading_byte_offset * 8 // (k * ELEMENT_BITS[dtype])
        box = tile_geometry(dtype, rows=atom, k=k, major="MN").tma()
        span = atom
    count = rows // span
    assert box.bytes * count == geometry.tile_bytes and count % split == 0
    return OperandLoads(geometry, box, count, span, major == "K")


class Mainloop:
    """The per-stage geometry of `config` and the IR to fill and consume a
    stage."""

    def __init__(self, config):
        from ... import lattice

        c = self.config = config
        bm, bn, bk = c.tile_m, c.tile_n, c.k_tile
        self.a = operand_loads(c.dtype, bm, bk, c.a_major)
        self.b = operand_loads(c.dtype, bn, bk, c.b_major, split=c.cluster_m)
        # Each consumer warpgroup reads its own 64 rows of A.
        self.a_rows = tile_geometry(c.dtype, rows=64, k=bk, major=self.a.geometry.major)
        self.stage_bytes = self.a.geometry.tile_bytes + self.b.geometry.tile_bytes
        self.tx_bytes = (self.a.box.bytes * self.a.count) + (self.b.box.bytes * self.b.count)
        assert self.tx_bytes == self.stage_bytes
        self.alignment = self.a.geometry.alignment
        self.k_instr = lattice.instruction_k(c.dtype)

    @property
    def boxes(self) -> dict:
        return {"A": self.a.box, "B": self.b.box}

    # ---------------------------------------------------------------- producer
    def _load_operand(self, ring, stage, tile_at, loads, tensor_map, k0, mn, batch, rank):
        """TMA boxes of one operand into the stage; with `rank` (a cluster
        CTA's rank) this CTA loads its share and multicasts it."""
        from ...dialects import arith
        from ...ir import IntegerType

        i32 = IntegerType.get_signless(32)

        def const(v):
            return arith.constant(i32, v)

        share = loads.count // self.config.cluster_m if rank is not None else loads.count
        if rank is not None:
            # This CTA multicasts boxes rank * share + i.
            rank_bytes = arith.muli(rank, const(share * loads.box.bytes))
            mn = arith.addi(mn, arith.muli(rank, const(share * loads.span)))
        for i in range(share):
            offset = tile_at + loads.box.bytes * i
            if rank is not None:
                offset = arith.addi(const(offset), rank_bytes)
            mn_i = mn if i == 0 else arith.addi(mn, const(loads.span * i))
            coords = (k0, mn_i) if loads.k_inner else (mn_i, k0)
            if batch is not None:
                coords = (*coords, batch)
            ring.load(
                tensor_map,
                self._stage_tile(stage, offset),
                coords,
                stage,
                bytes=loads.box.bytes,
                **(
                    {"multicast_mask": (1 << self.config.cluster_m) - 1} if rank is not None else {}
                ),
            )

    def bind(self, base):
        """Place the ring's stages at `base` (an !llvm.ptr<3>, aligned)."""
        self.base = base

    def _stage_tile(self, stage, offset):
        from ...dialects import arith
        from ...ir import IntegerType
        from .._ir import gep

        i32 = IntegerType.get_signless(32)
        offset = arith.constant(i32, offset) if isinstance(offset, int) else offset
        return gep(
            self.base, arith.addi(arith.muli(stage, arith.constant(i32, self.stage_bytes)), offset)
        )

    def load(self, ring, stage, tm_a, tm_b, *, k0, row, col, batch=None, rank=None,
             a_batch=None, b_batch=None):  # fmt: skip
        """Fill `stage` with the A tile at (row, k0) and the B tile at
        (col, k0) of `batch` (A's of `a_batch`, B's of `b_batch` where
        given); `rank`: this CTA's cluster rank when B is multicast."""
        a_batch = batch if a_batch is None else a_batch
        b_batch = batch if b_batch is None else b_batch
        self._load_operand(ring, stage, 0, self.a, tm_a, k0, row, a_batch, None)
        self._load_operand(
            ring, stage, self.a.geometry.tile_bytes, self.b, tm_b, k0, col, b_batch, rank
        )

    # ---------------------------------------------------------------- consumers
    def descriptors(self, consumer):
        """(A descriptors, one per 64-row block, B descriptor) of stage 0,
        k step 0, for the consumer warpgroup whose rows start `consumer`
        (an i32 Value: its index when consumers share a tile) consumer_rows
        into the stage's A tile."""
        from ...dialects import arith
        from ...ir import IntegerType
        from .. import smem
        from .._ir import gep

        i32 = IntegerType.get_signless(32)
        blocks = self.config.consumer_rows // 64
        first = arith.muli(consumer, arith.constant(i32, blocks * self.a_rows.tile_bytes))
        a_descs = [
            smem.tile_descriptor(
                gep(self.base, arith.addi(first, arith.constant(i32, b * self.a_rows.tile_bytes))),
                self.a_rows,
            )
            for b in range(blocks)
        ]
        b_desc = smem.tile_descriptor(
            gep(self.base, arith.constant(i32, self.a.geometry.tile_bytes)), self.b.geometry
        )
        return a_descs, b_desc

    def mma(self, accs, stage, a_descs, b_desc, *, accumulate, blocks=None, steps=None):
        """`accs` after the wgmma steps over one stage's K, block after
        block (each block's steps chain on its accumulator) -- or only the
        blocks `blocks` and K steps `steps` (ranges); `accumulate` (an i1
        Value) is false on a tile's first stage, which overwrites the
        accumulators instead of zeroing them first."""
        from ...dialects import nvwgmma as wg
        from .. import smem

        c = self.config
        transpose = {}
        if c.a_major == "M":
            transpose["transpose_a"] = True
        if c.b_major == "N":
            transpose["transpose_b"] = True
        out = list(accs)
        for b in range(len(accs)) if blocks is None else blocks:
            acc = accs[b]
            for step in range(self.a_rows.k_steps) if steps is None else steps:
                acc = wg.mma_async(
                    acc,
                    smem.step_descriptor(
                        a_descs[b],
                        self.a_rows,
                        k_step=step,
                        stage=stage,
                        stage_bytes=self.stage_bytes,
                    ),
                    smem.step_descriptor(
                        b_desc,
                        self.b.geometry,
                        k_step=step,
                        stage=stage,
                        stage_bytes=self.stage_bytes,
                    ),
                    shape=(64, c.tile_n, self.k_instr),
                    a_type=c.dtype,
                    d_type="f32",
                    scale_d=accumulate if step == 0 else True,
                    **transpose,
                )
            out[b] = acc
        return out
