"""A persistent, warp-specialised TMA GEMM generator built from nvwgmma's
builders and the kernel layer.

    from nvwgmma.kernel.gemm import GemmConfig, build_gemm
    module, meta = build_gemm(GemmConfig(dtype="bf16", out_dtype="bf16"))

    python -m nvwgmma.kernel.gemm --dtype bf16 --out-dtype bf16 --ptx gemm.ptx --json gemm.json

C[M, N] = A[M, K] · B[N, K]ᵀ: A row-major (K contiguous), B given as N × K
(K contiguous: a column-major B, the layout TMA and wgmma read without a
transpose), C row-major. M, N, K must be multiples of the tile (meta says
which). One producer warpgroup streams A and B tiles with TMA into a ring of
`stages` shared-memory stages; `consumers` warpgroups (64 rows each) run
m64n{tile_n}k16 wgmmas and release each stage as soon as the group that read
it completed. The grid is persistent and balanced (`grid_size`): each CTA
loops over the same number of tiles, taken in L2-friendly groups of
`group_m` tile rows, so one tile's epilogue overlaps the next tile's loads.
The epilogue stages C through shared memory with stmatrix and stores it
with TMA. `cluster_m=2` pairs CTAs in 2 x 1 clusters that multicast their
shared B tile (correct, measured slower: docs/performance.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, replace

from .. import _checks
from ..layouts import ELEMENT_BITS

__all__ = ["ABLATIONS", "GemmConfig", "PERSISTENT_MAX_K", "SHIPPED", "build_gemm", "grid_size"]


@dataclass(frozen=True)
class GemmConfig:
    """The shape of the generated kernel. Defaults: the fastest measured."""

    dtype: str = "bf16"  # bf16, f16, or e4m3/e5m2 (fp8) inputs
    out_dtype: str = "bf16"  # bf16, f16 or f32
    tile_n: int = 256
    consumers: int = 2  # tile_m = 64 * consumers
    tile_k: int | None = None  # default: one 128-byte swizzled row (64 16-bit, 128 fp8)
    stages: int = 3
    group_m: int = 16  # tile rows per L2 group of the persistent schedule
    epilogue: str = "tma"  # stmatrix + TMA store (16-bit outputs) or "registers"
    # wgmma groups left pending before a stage is released: 1 delays each
    # release by an iteration, which costs a stage of prefetch depth; with
    # 3 stages that costs more than it buys (bench/gemm ablation).
    inflight: int = 0
    # The TMA epilogue stages C in `epilogue_chunks` column chunks through
    # one chunk-sized buffer per consumer: 2 chunks free the shared memory
    # of a fourth stage.
    epilogue_chunks: int = 1
    # Let a TMA store's read of the staging overlap the next tile's
    # mainloop; the wait moves to just before the staging is written again.
    defer_store_wait: bool = True
    # CTAs per thread-block cluster along M: 2 pairs CTAs on vertically
    # adjacent tiles that share their B tile; each loads half of it and
    # multicasts it to both, halving B's L2 -> SM traffic.
    cluster_m: int = 1
    producer_regs: int = 40
    consumer_regs: int = 232

    @property
    def tile_m(self) -> int:
        return 64 * self.consumers

    @property
    def k_tile(self) -> int:
        """K per stage: tile_k, or one 128-byte swizzled row of the input type."""
        return (
            self.tile_k
            if self.tile_k is not None
            else _ROW_BYTES * 8 // ELEMENT_BITS.get(self.dtype, 16)
        )

    @property
    def name(self) -> str:
        return (
            f"gemm_{self.dtype}_{self.out_dtype}_{self.tile_m}x{self.tile_n}x{self.k_tile}"
            f"_s{self.stages}_{self.epilogue}"
            + ("" if self.inflight == 0 else f"_w{self.inflight}")
            + ("" if self.group_m == 16 else f"_g{self.group_m}")
            + ("" if self.epilogue_chunks == 1 else f"_c{self.epilogue_chunks}")
            + ("" if self.defer_store_wait else "_sync_store")
            + ("" if self.cluster_m == 1 else f"_x{self.cluster_m}")
        )


_INPUTS = ("bf16", "f16", "e4m3", "e5m2")
_ROW_BYTES = 128  # one 128B-swizzled row of K per stage

# Persistent for every K: at steady state (bench/gemm/run.py, H200) it was
# as fast or faster than one CTA per tile on every measured shape. (An
# earlier reading that favoured one CTA per tile for long K came from
# timing kernels right after lighter ones, at boost clocks.)
PERSISTENT_MAX_K = 1 << 30

# Configurations CI builds, verifies, protocol-checks and assembles.
SHIPPED = [
    GemmConfig(dtype="bf16", out_dtype="bf16"),
    GemmConfig(dtype="f16", out_dtype="f16"),
    # f32 C: 64 KB per consumer staged in two chunks, so 3 stages still fit.
    GemmConfig(dtype="bf16", out_dtype="f32", epilogue_chunks=2),
    GemmConfig(dtype="f16", out_dtype="f32", epilogue_chunks=2),
    GemmConfig(dtype="e4m3", out_dtype="bf16"),
]
# What each technique buys (bench/gemm/run.py's ablation rows): the default
# without it, or with the next candidate.
ABLATIONS = {
    "epilogue from registers (4 stages)": GemmConfig(epilogue="registers", stages=4),
    "f32 out: epilogue from registers": GemmConfig(out_dtype="f32", epilogue="registers"),
    "one wgmma group in flight (wait_group 1)": GemmConfig(inflight=1),
    "no L2 tile grouping (group_m 1)": GemmConfig(group_m=1),
    "L2 groups of 8 tile rows": GemmConfig(group_m=8),
    "TMA store waited at once": GemmConfig(defer_store_wait=False),
    "4 stages, C in 2 chunks": GemmConfig(stages=4, epilogue_chunks=2),
    "4 stages, C in 2 chunks, wait_group 1": GemmConfig(stages=4, epilogue_chunks=2, inflight=1),
    "128 x 128 tile (5 stages)": GemmConfig(tile_n=128, stages=5),
    "2 x 1 cluster, B multicast": GemmConfig(cluster_m=2),
    "2 x 1 cluster, B multicast (f16)": GemmConfig(dtype="f16", out_dtype="f16", cluster_m=2),
}


def _check_config(c: GemmConfig):
    from .. import lattice
    from . import epilogue

    if c.dtype not in _INPUTS:
        raise ValueError(f"dtype must be one of {', '.join(_INPUTS)}, but got {c.dtype!r}")
    allowed_out = ("bf16", "f16", "f32")
    if c.out_dtype not in allowed_out:
        raise ValueError(
            f"out_dtype must be one of {', '.join(allowed_out)}, but got {c.out_dtype!r}"
        )
    if c.tile_n not in lattice.legal_n(c.dtype) or c.tile_n % 64:
        raise ValueError(
            f"tile_n must be a legal wgmma N that is a multiple of 64, but got {c.tile_n}"
        )
    _checks.integer(c.consumers, "consumers", 1, 3)
    row_elements = _ROW_BYTES * 8 // ELEMENT_BITS[c.dtype]
    if c.k_tile != row_elements:
        raise ValueError(
            f"tile_k must be one 128-byte swizzled row, {row_elements} {c.dtype} "
            f"elements, but got {c.tile_k}"
        )
    _checks.integer(c.stages, "stages", 2, 8)
    _checks.integer(c.group_m, "group_m", 1, 64)
    if c.epilogue not in ("registers", "tma"):
        raise ValueError(f"epilogue must be registers or tma, but got {c.epilogue!r}")
    _checks.integer(c.inflight, "inflight", 0, 1)
    _checks.integer(c.epilogue_chunks, "epilogue_chunks", 1, 4)
    _checks.boolean(c.defer_store_wait, "defer_store_wait")
    _checks.integer(c.cluster_m, "cluster_m", 1, 2)
    block = epilogue._block_columns(c.out_dtype)
    if c.tile_n % (block * c.epilogue_chunks):
        raise ValueError(
            f"epilogue_chunks must split tile_n into multiples of {block} columns, but got "
            f"{c.epilogue_chunks} chunks of {c.tile_n}"
        )


def grid_size(meta: dict, m: int, n: int, k: int, sms: int) -> int:
    """CTAs to launch for an M x N x K problem on a GPU with `sms` SMs (a
    multiple of the cluster size).

    Persistent and balanced: the fewest CTAs that still finish in the same
    number of waves, so every CTA gets the same number of tiles (512 tiles
    on 132 SMs: 128 CTAs x 4 tiles, not 116 x 4 + 16 x 3). The makespan is
    the same, but the last wave is not ragged and four SMs stay idle, which
    under the power cap measured +3 % (bench/gemm ablation)."""
    cluster = meta["cluster"][0]
    tiles = (m // meta["tile"][0]) * (n // meta["tile"][1])
    if k > meta["persistent_max_k"]:
        return tiles
    units, slots = tiles // cluster, max(1, sms // cluster)
    waves = -(-units // slots)
    return -(-units // waves) * cluster


def build_gemm(config: GemmConfig = GemmConfig()):
    """(module, meta) for `config`. meta: kernel name, block, dynamic shared
    memory, tile, TMA boxes (for nvwgmma.kernel.tensormap.encode_tiled) and
    the divisibility M, N, K must meet; the grid is one CTA per SM."""
    from .. import lattice
    from ..dialects import arith, llvm, nvvm, scf
    from ..dialects import nvwgmma as wg
    from ..ir import (
        DenseI32ArrayAttr,
        IndexType,
        InsertionPoint,
        IntegerType,
        Location,
        Module,
    )
    from . import epilogue, pipeline, smem, tile_geometry
    from ._ir import gep

    if not isinstance(config, GemmConfig):
        raise TypeError(f"config must be a GemmConfig, but got {type(config).__name__}")
    c = config
    _check_config(c)
    bm, bn, bk = c.tile_m, c.tile_n, c.k_tile
    a_tile = tile_geometry(c.dtype, rows=bm, k=bk, major="K", swizzle="128B")
    a_rows = tile_geometry(c.dtype, rows=64, k=bk, major="K", swizzle="128B")
    b_tile = tile_geometry(c.dtype, rows=bn, k=bk, major="K", swizzle="128B")
    # With a cluster each CTA loads 1/cluster_m of the B tile and multicasts it.
    b_slice = tile_geometry(c.dtype, rows=bn // c.cluster_m, k=bk, major="K", swizzle="128B")
    a_box, b_box = a_tile.tma(), b_slice.tma()
    stage_bytes = a_tile.tile_bytes + b_tile.tile_bytes
    tx_bytes = a_box.bytes * a_box.boxes + b_box.bytes * b_box.boxes * c.cluster_m
    assert tx_bytes == stage_bytes
    ring_at = c.stages * stage_bytes
    c_at = -(-(ring_at + 2 * 8 * c.stages) // a_tile.alignment) * a_tile.alignment
    chunk = bn // c.epilogue_chunks
    c_staging = epilogue.staging_bytes(chunk, c.out_dtype) if c.epilogue == "tma" else 0
    # C's TMA box: 64 rows of one 128-byte swizzled row each.
    if c.out_dtype == "f32":  # the tf32 geometry, stored as plain FLOAT32
        c_box = replace(
            tile_geometry("tf32", rows=64, k=32, major="K", swizzle="128B").tma(),
            data_type="FLOAT32",
        )
    else:
        c_box = tile_geometry(c.out_dtype, rows=64, k=64, major="K", swizzle="128B").tma()
    dynamic_smem = c_at + c.consumers * c_staging + (a_tile.alignment - 16)
    if dynamic_smem > 227 * 1024:
        raise ValueError(
            f"the stages must fit 227 KiB of shared memory, but {c.stages} stages of "
            f"{stage_bytes} bytes need {dynamic_smem}"
        )
    k_instr = lattice.instruction_k(c.dtype)
    threads = 128 * (1 + c.consumers)
    i32 = IntegerType.get_signless(32)
    index = IndexType.get()

    with Location.unknown():
        module = Module.parse(
            """
  llvm.mlir.global external @dsmem() {addr_space = 3 : i32, alignment = 16 : i64}
      : !llvm.array<0 x i8>
  llvm.func @gemm(%tmA: !llvm.ptr, %tmB: !llvm.ptr, %C: !llvm.ptr<1>, %tmC: !llvm.ptr,
                  %M: i32, %N: i32, %K: i32) attributes {nvvm.kernel} {
    llvm.return
  }"""
        )
        kernel = module.body.operations[1]
        kernel.attributes["nvvm.maxntid"] = DenseI32ArrayAttr.get([threads, 1, 1])
        if c.cluster_m > 1:
            kernel.attributes["nvvm.cluster_dim"] = DenseI32ArrayAttr.get([c.cluster_m, 1, 1])
        entry = kernel.regions[0].blocks[0]
        tm_a, tm_b, c_ptr, tm_c, m_arg, n_arg, k_arg = entry.arguments
        ptr3 = llvm.PointerType.get(3)
        with InsertionPoint(entry.operations[0]):

            def const(v, t=i32):
                return arith.constant(t, v)

            tid = nvvm.read_ptx_sreg_tid_x(i32)
            warpgroup = arith.divui(tid, const(128))
            wg_thread = arith.remui(tid, const(128))
            base = smem.aligned_base(llvm.mlir_addressof(ptr3, "dsmem"), a_tile.alignment)
            # Every CTA of a cluster releases each stage in every CTA of it.
            ring = pipeline.Ring(gep(base, const(ring_at)), c.stages, c.consumers * c.cluster_m)
            first = arith.cmpi(arith.CmpIPredicate.eq, tid, const(0))
            clustered = c.cluster_m > 1
            rank = nvvm.read_ptx_sreg_cluster_ctarank(i32) if clustered else None
            peers = (arith.xori(rank, const(1)),) if clustered else ()
            init = scf.IfOp(first)
            with InsertionPoint(init.then_block):
                ring.init()
                if clustered:  # the peer arrives on and multicasts into them
                    nvvm.fence_mbarrier_init()
                scf.YieldOp([])
            if clustered:
                nvvm.cluster_arrive()
                nvvm.cluster_wait()
            else:
                nvvm.barrier0()

            # A cluster works on cluster_m vertically adjacent tiles at a time.
            rows_of_units = arith.divui(m_arg, const(bm * c.cluster_m))
            tiles_n = arith.divui(n_arg, const(bn))
            num_units = arith.muli(rows_of_units, tiles_n)
            k_tiles = arith.divui(k_arg, const(bk))
            cta = arith.index_cast(
                index, arith.divui(nvvm.read_ptx_sreg_ctaid_x(i32), const(c.cluster_m))
            )
            ctas = arith.index_cast(
                index, arith.divui(nvvm.read_ptx_sreg_nctaid_x(i32), const(c.cluster_m))
            )
            c0, c1 = const(0, index), const(1, index)
            k_tiles_index = arith.index_cast(index, k_tiles)
            group_rows = max(1, c.group_m // c.cluster_m)

            def tile_coords(unit_index):
                """(row, col) of C for persistent work unit `unit`: groups of
                group_m tile rows, column-major inside a group (L2 reuse); in
                a cluster, CTA r takes tile row r of the unit."""
                t = arith.index_cast(i32, unit_index)
                per_group = arith.muli(const(group_rows), tiles_n)
                group = arith.divui(t, per_group)
                first_m = arith.muli(group, const(group_rows))
                size_m = arith.minui(arith.subi(rows_of_units, first_m), const(group_rows))
                within = arith.remui(t, per_group)
                tm = arith.addi(first_m, arith.remui(within, size_m))
                if clustered:
                    tm = arith.addi(arith.muli(tm, const(c.cluster_m)), rank)
                tn = arith.divui(within, size_m)
                return arith.muli(tm, const(bm)), arith.muli(tn, const(bn))

            def stage_tile(stage, offset):
                offset = const(offset) if isinstance(offset, int) else offset
                return gep(base, arith.addi(arith.muli(stage, const(stage_bytes)), offset))

            is_producer = arith.cmpi(arith.CmpIPredicate.eq, warpgroup, const(0))
            roles = scf.IfOp(is_producer, has_else=True)
            # -------------------------------------------------------------- producer
            with InsertionPoint(roles.then_block):
                nvvm.setmaxregister(c.producer_regs, nvvm.SetMaxRegisterAction.decrease)
                issuer = scf.IfOp(first)
                with InsertionPoint(issuer.then_block):
                    tiles = scf.ForOp(cta, arith.index_cast(index, num_units), ctas, [const(0)])
                    with InsertionPoint(tiles.body):
                        row, col = tile_coords(tiles.induction_variable)
                        loads = scf.ForOp(c0, k_tiles_index, c1, [tiles.inner_iter_args[0]])
                        with InsertionPoint(loads.body):
                            it = loads.inner_iter_args[0]
                            stage, phase = ring.stage_and_phase(it)
                            ring.producer_acquire(stage, phase)
                            ring.producer_expect(stage, tx_bytes)
                            k0 = arith.muli(
                                arith.index_cast(i32, loads.induction_variable), const(bk)
                            )
                            ring.load(
                                tm_a, stage_tile(stage, 0), (k0, row), stage, bytes=a_box.bytes
                            )
                            if clustered:
                                # This CTA's slice of B, into every CTA.
                                ring.load(
                                    tm_b,
                                    stage_tile(
                                        stage,
                                        arith.addi(
                                            const(a_tile.tile_bytes),
                                            arith.muli(rank, const(b_slice.tile_bytes)),
                                        ),
                                    ),
                                    (k0, arith.addi(col, arith.muli(rank, const(b_slice.rows)))),
                                    stage,
                                    bytes=b_box.bytes,
                                    multicast_mask=(1 << c.cluster_m) - 1,
                                )
                            else:
                                ring.load(
                                    tm_b,
                                    stage_tile(stage, a_tile.tile_bytes),
                                    (k0, col),
                                    stage,
                                    bytes=b_box.bytes,
                                )
                            scf.YieldOp([arith.addi(it, const(1))])
                        scf.YieldOp([loads.results[0]])
                    scf.YieldOp([])
                scf.YieldOp([])
            # -------------------------------------------------------------- consumers
            with InsertionPoint(roles.else_block):
                nvvm.setmaxregister(c.consumer_regs, nvvm.SetMaxRegisterAction.increase)
                consumer = arith.subi(warpgroup, const(1))
                a_desc = smem.tile_descriptor(
                    gep(base, arith.muli(consumer, const(a_rows.tile_bytes))), a_rows
                )
                b_desc = smem.tile_descriptor(gep(base, const(a_tile.tile_bytes)), b_tile)
                releaser = arith.cmpi(arith.CmpIPredicate.eq, wg_thread, const(0))
                # Named barrier 0 is __syncthreads; each consumer its own.
                store_barrier = arith.addi(consumer, const(1))
                staging = gep(base, arith.addi(const(c_at), arith.muli(consumer, const(c_staging))))

                def release(stage):
                    rel = scf.IfOp(releaser)
                    with InsertionPoint(rel.then_block):
                        ring.consumer_release(stage, peers=peers)
                        scf.YieldOp([])

                tiles = scf.ForOp(cta, arith.index_cast(index, num_units), ctas, [const(0)])
                with InsertionPoint(tiles.body):
                    row, col = tile_coords(tiles.induction_variable)
                    start = tiles.inner_iter_args[0]
                    acc0 = wg.zero_accumulator("f32", bn)
                    main = scf.ForOp(c0, k_tiles_index, c1, [acc0, start])
                    with InsertionPoint(main.body):
                        acc, it = main.inner_iter_args
                        kt = arith.index_cast(i32, main.induction_variable)
                        stage, phase = ring.stage_and_phase(it)
                        ring.consumer_wait(stage, phase)
                        wg.fence()
                        for step in range(a_rows.k_steps):
                            acc = wg.mma_async(
                                acc,
                                smem.step_descriptor(
                                    a_desc,
                                    a_rows,
                                    k_step=step,
                                    stage=stage,
                                    stage_bytes=stage_bytes,
                                ),
                                smem.step_descriptor(
                                    b_desc,
                                    b_tile,
                                    k_step=step,
                                    stage=stage,
                                    stage_bytes=stage_bytes,
                                ),
                                shape=(64, bn, k_instr),
                                a_type=c.dtype,
                                d_type="f32",
                                # The first K step of a tile overwrites: no zeroing pass.
                                scale_d=arith.cmpi(arith.CmpIPredicate.ugt, kt, const(0))
                                if step == 0
                                else True,
                            )
                        wg.commit_group()
                        # With one group in flight, the previous group has
                        # completed and its stage can be refilled; with none,
                        # this one has.
                        wg.wait_group(c.inflight)
                        if c.inflight:
                            has_previous = arith.cmpi(arith.CmpIPredicate.ugt, kt, const(0))
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
                        last_stage, _ = ring.stage_and_phase(arith.subi(end, const(1)))
                        release(last_stage)
                    rows = arith.addi(row, arith.muli(consumer, const(64)))
                    if c.epilogue == "tma":
                        for h in range(c.epilogue_chunks):
                            if c.defer_store_wait or h:
                                # The previous store (of this tile's last
                                # chunk or the last tile's) has read it.
                                epilogue.wait_store_read(barrier_id=store_barrier, thread=wg_thread)
                            epilogue.stage_accumulator(
                                main.results[0],
                                staging,
                                d_type="f32",
                                n=bn,
                                out_type=c.out_dtype,
                                thread=wg_thread,
                                columns=(h * chunk, chunk),
                            )
                            epilogue.tma_store(
                                tm_c,
                                staging,
                                row=rows,
                                col=arith.addi(col, const(h * chunk)),
                                n=chunk,
                                barrier_id=store_barrier,
                                thread=wg_thread,
                                wait_read=not c.defer_store_wait and h == c.epilogue_chunks - 1,
                                out_type=c.out_dtype,
                            )
                    else:
                        epilogue.store_accumulator(
                            main.results[0],
                            c_ptr,
                            n_arg,
                            d_type="f32",
                            n=bn,
                            out_type=c.out_dtype,
                            row=rows,
                            col=col,
                            thread=wg_thread,
                        )
                    scf.YieldOp([end])
                if c.epilogue == "tma" and c.defer_store_wait:
                    # Shared memory must outlive the last store's read.
                    epilogue.wait_store_read(barrier_id=store_barrier, thread=wg_thread)
                scf.YieldOp([])
            if clustered:
                # No CTA leaves while its peer may still arrive on its barriers.
                nvvm.cluster_arrive()
                nvvm.cluster_wait()
    module.operation.verify()
    meta = {
        "kernel": "gemm",
        "config": asdict(c),
        "name": c.name,
        "block": [threads, 1, 1],
        # Same kernel for any grid: it loops over tiles ctaid, ctaid + nctaid, ...
        "grid": "persistent, balanced: the fewest CTAs finishing in the same waves (grid_size)",
        "persistent_max_k": PERSISTENT_MAX_K,
        "dynamic_smem": dynamic_smem,
        "tile": [bm, bn, bk],
        "divisible": {"M": bm * c.cluster_m, "N": bn, "K": bk},
        "cluster": [c.cluster_m, 1, 1],
        "boxes": {"A": asdict(a_box), "B": asdict(b_box), "C": asdict(c_box)},
        "operands": "A: M x K row-major (tensor map), B: N x K row-major (tensor map), "
        "C: M x N row-major pointer, C's tensor map (tma epilogue), then M, N, K as i32",
    }
    return module, meta


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m nvwgmma.kernel.gemm", description="Write a GEMM's PTX and launch metadata."
    )
    parser.add_argument("--dtype", default="bf16", choices=list(_INPUTS))
    parser.add_argument("--out-dtype", default="bf16", choices=["bf16", "f16", "f32"])
    parser.add_argument("--tile-n", type=int, default=GemmConfig.tile_n)
    parser.add_argument("--consumers", type=int, default=GemmConfig.consumers)
    parser.add_argument("--stages", type=int, default=GemmConfig.stages)
    parser.add_argument("--group-m", type=int, default=GemmConfig.group_m)
    parser.add_argument("--epilogue", default=GemmConfig.epilogue, choices=["registers", "tma"])
    parser.add_argument(
        "--epilogue-chunks",
        type=int,
        default=None,
        help="column chunks of the TMA epilogue (default: 2 for f32 output, else 1)",
    )
    parser.add_argument("--cluster-m", type=int, default=GemmConfig.cluster_m)
    parser.add_argument("--ptx", required=True, help="PTX output file")
    parser.add_argument("--json", help="launch metadata output file")
    parser.add_argument("--assemble", action="store_true", help="also run ptxas")
    args = parser.parse_args(argv)
    from ..compile import CompileError, compile_to_ptx
    from ..ir import Context

    config = GemmConfig(
        dtype=args.dtype,
        out_dtype=args.out_dtype,
        tile_n=args.tile_n,
        consumers=args.consumers,
        stages=args.stages,
        group_m=args.group_m,
        epilogue=args.epilogue,
        epilogue_chunks=args.epilogue_chunks or (2 if args.out_dtype == "f32" else 1),
        cluster_m=args.cluster_m,
    )
    try:
        with Context():
            module, meta = build_gemm(config)
            ptx = compile_to_ptx(module, assemble=args.assemble)
    except (ValueError, TypeError, CompileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    with open(args.ptx, "w") as f:
        f.write(ptx)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(meta, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
