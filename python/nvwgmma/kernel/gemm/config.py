"""What a generated GEMM is: `GemmConfig`, its checks, and the
configurations CI builds (`SHIPPED`) and the benchmark measures
(`ABLATIONS`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ... import _checks
from ...layouts import ELEMENT_BITS
from .._ir import check_registers
from .fusion import ACTIVATIONS, EpilogueOp, chain_tag, check_chain

__all__ = ["ABLATIONS", "GemmConfig", "INPUTS", "OUTPUTS", "PERSISTENT_MAX_K", "SHIPPED"]

INPUTS = ("bf16", "f16", "e4m3", "e5m2")
OUTPUTS = ("bf16", "f16", "f32", "e4m3", "e5m2")
SCHEDULERS = ("persistent", "split_k", "stream_k")
ROW_BYTES = 128  # one 128B-swizzled row of K per stage

# Persistent for every K: at steady state (bench/gemm/run.py, H200) it was
# as fast or faster than one CTA per tile on every measured shape.
PERSISTENT_MAX_K = 1 << 30
SHARED_MEMORY_LIMIT = 227 * 1024  # dynamic shared memory a CTA may take on sm_90
# The most groups a grouped scheduler's shared table holds (8 KiB); more
# groups scan the offsets instead.
MAX_GROUP_TABLE = 1024


@dataclass(frozen=True)
class GemmConfig:
    """The shape of the generated kernel. Defaults: the fastest measured."""

    dtype: str = "bf16"  # bf16, f16, or e4m3/e5m2 (fp8) inputs
    out_dtype: str = "bf16"  # bf16, f16, f32, or e4m3/e5m2 (registers epilogue)
    tile_n: int = 256
    consumers: int = 2  # tile_m = consumer_rows * consumers (cooperative)
    # Rows of the tile each consumer warpgroup computes: 64 (one m64 wgmma
    # per K step) or 128 (two, one per 64-row block, both reading the same
    # B -- what cuBLAS runs on 128 x 128 tiles: one warpgroup per tile).
    consumer_rows: int = 64
    tile_k: int | None = None  # default: one 128-byte swizzled row (64 16-bit, 128 fp8)
    stages: int = 3
    group_m: int = 16  # tile rows per L2 group of the persistent schedule
    # stmatrix + TMA store (bf16/f16/f32 out, C's row stride a multiple of
    # 16 bytes) or "registers": masked stores from the accumulator (any N,
    # any output type).
    epilogue: str = "tma"
    # wgmma groups left pending before a stage is released: 1 delays each
    # release by an iteration, which costs a stage of prefetch depth; with
    # 3 stages that costs more than it buys (bench/gemm ablation).
    inflight: int = 0
    # With inflight 1: issue a stage's wgmmas as two groups -- the two
    # 64-row blocks (consumer_rows 128, cuBLAS's order), or the two halves
    # of the stage's K steps -- and wait for the previous stage's group
    # between them: the first group keeps the tensor cores busy through the
    # wait, and the stage is released half a stage earlier than after both.
    split_wait: bool = False
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
    # Operand layouts: A "K" (M x K row-major) or "M" (K x M row-major);
    # B "K" (N x K row-major: a Linear weight) or "N" (K x N row-major).
    # MN-major operands use wgmma's transpose (16-bit inputs only).
    a_major: str = "K"
    b_major: str = "K"
    # The epilogue chain applied to the f32 accumulator before the store
    # (nvwgmma.kernel.gemm.fusion): e.g. (Bias(), Activation("gelu")).
    fusion: tuple[EpilogueOp, ...] = field(default=())
    # A gated output, act(gate) * up (a gate/up projection with SwiGLU or
    # GeGLU after it): B's columns alternate 64 of gate and 64 of up, and C
    # gets one column per pair, half as many (after the fusion chain; the
    # registers epilogue). None: C is the product.
    gate: str | None = None
    # DeepSeek-style fp8 block scaling: A scaled per 1 x 128 (an M x K/128
    # f32 `scale_a`), B per 128 x 128 (an N/128 x K/128 f32 `scale_b`), each
    # 128-deep K block's product promoted into the f32 accumulator with its
    # scales (the kernel takes the two pointers after its other parameters).
    block_scales: bool = False
    # The tile scheduler (nvwgmma.kernel.gemm.scheduler): "persistent"
    # (data-parallel), "split_k" (each tile's K in `splits` parts) or
    # "stream_k" (the tiles' K stages cut evenly among the CTAs); the last
    # two add partials through a workspace in a fixed order.
    scheduler: str = "persistent"
    splits: int = 1
    # Groups a grouped GEMM's scheduler keeps in shared memory (a power of
    # two; 0: none, it scans the offsets for each unit): filled once per
    # CTA, then each unit's group is found with no loop in the tile loop
    # (group_table.py). build_gemm reserves it and hands its address to
    # the scheduler.
    group_table: int = 0
    # The kernel schedule: "cooperative" (the consumers share a tile of
    # 64 x consumers rows) or "pingpong" (two consumers take 64-row tiles
    # in turn, one's epilogue overlapping the other's mainloop).
    schedule: str = "cooperative"
    # The order the producer walks a unit's K stages: "serpentine" (a CTA's
    # odd units backwards, starting on the A rows its previous unit read
    # last, still in L2: less DRAM traffic, which under the power cap is
    # clock; +0.4-1.1 % over "forward" at steady state, bench/gemm/power.py)
    # or "forward". Either way the sum's order is fixed: results repeat.
    k_order: str = "serpentine"
    # Store the kernel's M x N result transposed: element (i, j) to C[j, i]
    # of a row-major N x M C (from registers, or for a 16-bit C through
    # stmatrix.trans and a TMA store). matmul's decode path runs
    # C^T = W X^T this way: the weights are the kernel's 64-row operand and
    # a handful of tokens its N, instead of tokens padded to 64 rows.
    store_transposed: bool = False

    @property
    def tile_m(self) -> int:
        consumers = self.consumers if self.schedule == "cooperative" else 1
        return self.consumer_rows * consumers

    @property
    def k_tile(self) -> int:
        """K per stage: tile_k, or one 128-byte swizzled row of the input type."""
        return (
            self.tile_k
            if self.tile_k is not None
            else ROW_BYTES * 8 // ELEMENT_BITS.get(self.dtype, 16)
        )

    @property
    def shared_memory_bytes(self) -> int:
        """Dynamic shared memory the kernel asks for: the ring's stages (an
        A and a B tile of one 128-byte row of K each) and their two
        barriers, aligned for the 128B swizzle, then each consumer's
        epilogue staging and the group table, plus the slack to align the
        base at run time."""
        from .group_table import table_bytes
        from .store import staging

        align = 1024
        ring = self.stages * (self.tile_m + self.tile_n) * ROW_BYTES + 2 * 8 * self.stages
        _, staging_bytes = staging(self)
        return (-(-ring // align) * align + self.consumers * staging_bytes
                + table_bytes(self.group_table) + (align - 16))  # fmt: skip

    @property
    def name(self) -> str:
        return (
            f"gemm_{self.dtype}_{self.out_dtype}_{self.tile_m}x{self.tile_n}x{self.k_tile}"
            f"_s{self.stages}_{self.epilogue}"
            + ("" if self.consumer_rows == 64 else f"_wg{self.consumer_rows}")
            + ("" if self.inflight == 0 else f"_w{self.inflight}")
            + ("" if not self.split_wait else "_split_wait")
            + ("" if self.group_m == 16 else f"_g{self.group_m}")
            + ("" if self.epilogue_chunks == 1 else f"_c{self.epilogue_chunks}")
            + ("" if self.defer_store_wait else "_sync_store")
            + ("" if self.cluster_m == 1 else f"_x{self.cluster_m}")
            + (
                ""
                if (self.a_major, self.b_major) == ("K", "K")
                else f"_{self.a_major}{self.b_major}"
            )
            + {"persistent": "", "split_k": f"_split{self.splits}", "stream_k": "_streamk"}.get(
                self.scheduler, ""
            )
            + ("" if not self.group_table else f"_t{self.group_table}")
            + ("" if self.schedule == "cooperative" else "_pingpong")
            + ("" if self.k_order == "serpentine" else "_kfwd")
            + ("" if not self.store_transposed else "_ct")
            + ("" if not self.fusion else "_" + chain_tag(self.fusion))
            + ("" if self.gate is None else f"_gate{self.gate}")
            + ("_blockscaled" if self.block_scales else "")
        )


def transposed_majors(a_major: str, b_major: str) -> tuple[str, str]:
    """(a_major, b_major) of the transposed problem C^T = B^T A^T: its A is
    the B given (K-major stays K-major, N-major becomes M-major), its B the
    A given."""
    return ("K" if b_major == "K" else "M"), ("K" if a_major == "K" else "N")


def with_fields(config: GemmConfig, text: str) -> GemmConfig:
    """`config` with the fields of `text` ("inflight=1,stages=5", from a
    command line) replaced, each value converted to the field's type."""
    from dataclasses import replace

    changes = {}
    for pair in text.split(","):
        name, sep, value = pair.partition("=")
        if not sep or not hasattr(config, name) or name == "fusion":
            raise ValueError(f"expected field=value pairs of GemmConfig fields, but got {pair!r}")
        kind = type(getattr(config, name))
        if kind is bool:
            truth = {"1": True, "true": True, "True": True, "0": False, "false": False,
                     "False": False}.get(value)  # fmt: skip
            if truth is None:
                raise ValueError(f"expected 0, 1, true or false for {name}, but got {value!r}")
            changes[name] = truth
        elif name == "tile_k":
            changes[name] = None if value == "None" else int(value)
        elif name == "gate":
            changes[name] = None if value == "None" else value
        else:
            changes[name] = kind(value)
    return replace(config, **changes)


def _one_of(value, allowed, what):
    if value not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(map(str, allowed))}, but got {value!r}")


def partial_atoms(c: GemmConfig) -> tuple[str, str, int, int] | None:
    """(operand, major, rows, atom) of an MN-major operand whose tile rows are
    not whole swizzle atoms, or None: TMA loads an MN-major tile atom by
    atom, and a 128-byte swizzle's atom is one 128-byte row along M or N
    (mainloop.operand_loads asserts the same of the geometry). Pure Python:
    the selector asks it where no nvwgmma build is present."""
    atom = ROW_BYTES * 8 // ELEMENT_BITS[c.dtype]
    for operand, major, rows in (("A", c.a_major, c.tile_m), ("B", c.b_major, c.tile_n)):
        if major != "K" and rows % atom:
            return operand, major, rows, atom
    return None


def check_config(c: GemmConfig) -> GemmConfig:
    """`c`, or raise ValueError/TypeError naming the first field it gets
    wrong."""
    from ... import lattice
    from .. import epilogue

    if not isinstance(c, GemmConfig):
        raise TypeError(f"config must be a GemmConfig, but got {type(c).__name__}")
    _one_of(c.dtype, INPUTS, "dtype")
    _one_of(c.out_dtype, OUTPUTS, "out_dtype")
    if c.tile_n not in lattice.legal_n(c.dtype) or c.tile_n % 16:
        raise ValueError(
            f"tile_n must be a legal wgmma N that is a multiple of 16, but got {c.tile_n}"
        )
    _checks.integer(c.consumers, "consumers", 1, 3)
    check_registers(c.consumers, c.consumer_regs, c.producer_regs)
    _one_of(_checks.integer(c.consumer_rows, "consumer_rows"), (64, 128), "consumer_rows")
    if c.consumer_rows == 128 and c.tile_n > 192:
        # Two m64 accumulators hold tile_n f32 registers per thread; at 192
        # ptxas still assembles the TMA store without a spill.
        raise ValueError(
            f"tile_n must be at most 192 with consumer_rows 128 (its two accumulators take "
            f"tile_n registers per thread), but got {c.tile_n}"
        )
    row_elements = ROW_BYTES * 8 // ELEMENT_BITS[c.dtype]
    if c.k_tile != row_elements:
        raise ValueError(
            f"tile_k must be one 128-byte swizzled row, {row_elements} {c.dtype} "
            f"elements, but got {c.tile_k}"
        )
    _checks.integer(c.stages, "stages", 2, 32)
    _checks.integer(c.group_m, "group_m", 1, 64)
    _one_of(c.epilogue, ("registers", "tma"), "epilogue")
    _checks.integer(c.inflight, "inflight", 0, 1)
    _checks.boolean(c.split_wait, "split_wait")
    if c.split_wait and c.inflight != 1:
        raise ValueError(
            f"split_wait takes inflight 1 (it waits for the previous stage's group between a "
            f"stage's two wgmma groups), but got inflight={c.inflight}"
        )
    _checks.integer(c.epilogue_chunks, "epilogue_chunks", 1, 4)
    _checks.boolean(c.defer_store_wait, "defer_store_wait")
    _checks.integer(c.cluster_m, "cluster_m", 1, 2)
    table = _checks.integer(c.group_table, "group_table", 0, MAX_GROUP_TABLE)
    if table & (table - 1):
        raise ValueError(f"group_table must be 0 or a power of two (the search halves its range), "
                         f"but got {table}")  # fmt: skip
    _one_of(c.a_major, ("K", "M"), "a_major")
    _one_of(c.b_major, ("K", "N"), "b_major")
    if ELEMENT_BITS[c.dtype] == 8 and (c.a_major, c.b_major) != ("K", "K"):
        raise ValueError(
            f"a_major and b_major must be K for {c.dtype} inputs (wgmma transposes only "
            f"16-bit operands), but got a_major={c.a_major!r}, b_major={c.b_major!r}"
        )
    if partial := partial_atoms(c):
        operand, major, rows, atom = partial
        side = "m" if operand == "A" else "n"
        raise ValueError(
            f"tile_{side} must be a multiple of {atom} with {operand} {major}-major (TMA "
            f"loads it in whole {atom}-element swizzle atoms), but got {rows}"
        )
    if c.epilogue == "tma":
        if c.out_dtype not in ("bf16", "f16", "f32"):
            raise ValueError(
                f"out_dtype must be bf16, f16 or f32 for the tma epilogue (fp8 output is "
                f"stored from registers), but got {c.out_dtype!r}"
            )
        # The narrowest staging block: 32 bytes of swizzled row.
        block = epilogue._block_columns(c.out_dtype, 32)
        if c.tile_n % (block * c.epilogue_chunks):
            raise ValueError(
                f"epilogue_chunks must split tile_n into multiples of {block} columns, but got "
                f"{c.epilogue_chunks} chunks of {c.tile_n}"
            )
    check_chain(c.fusion, c.out_dtype)
    _checks.boolean(c.block_scales, "block_scales")
    if c.block_scales and (
        ELEMENT_BITS[c.dtype] != 8 or c.k_tile != 128 or c.tile_n % 64 or c.consumer_rows != 64
        or c.split_wait or c.k_order != "forward" or c.store_transposed
    ):  # fmt: skip
        raise ValueError(
            "block_scales needs fp8 inputs, 128-deep K tiles, tile_n a multiple of 64, "
            "64-row consumers, no split_wait, k_order 'forward' and C not "
            f"transposed (one scale block per K tile), but got {c.dtype}, tile_k {c.k_tile}, "
            f"tile_n {c.tile_n}, consumer_rows {c.consumer_rows}, inflight {c.inflight}, "
            f"split_wait {c.split_wait}, k_order {c.k_order!r}, store_transposed "
            f"{c.store_transposed}"
        )
    if c.gate is not None:
        _one_of(c.gate, ACTIVATIONS, "gate")
        if c.epilogue != "registers" or c.store_transposed or c.tile_n % 128:
            raise ValueError(
                f"a gated output needs the registers epilogue, C not transposed and tile_n a "
                f"multiple of 128 (whole gate/up pairs of 64 columns), but got epilogue "
                f"{c.epilogue!r}, store_transposed {c.store_transposed}, tile_n {c.tile_n}"
            )
    _checks.boolean(c.store_transposed, "store_transposed")
    if (
        c.store_transposed
        and c.epilogue == "tma"
        and (c.out_dtype not in ("bf16", "f16") or c.epilogue_chunks != 1)
    ):
        raise ValueError(
            f"a transposed C through the TMA epilogue must be 16-bit in one chunk "
            f"(stmatrix.trans), but got out_dtype {c.out_dtype!r}, epilogue_chunks "
            f"{c.epilogue_chunks}: use the registers epilogue"
        )
    _one_of(c.scheduler, SCHEDULERS, "scheduler")
    if c.scheduler == "split_k":
        _checks.integer(c.splits, "splits", 2, 64)
    elif c.splits != 1:
        raise ValueError(f"splits must be 1 unless scheduler is 'split_k', but got {c.splits}")
    _one_of(c.schedule, ("cooperative", "pingpong"), "schedule")
    _one_of(c.k_order, ("forward", "serpentine"), "k_order")
    if c.schedule == "pingpong" and (c.consumers, c.cluster_m) != (2, 1):
        raise ValueError(
            f"the pingpong schedule takes 2 consumers and cluster_m 1, but got "
            f"consumers={c.consumers}, cluster_m={c.cluster_m}"
        )
    if c.scheduler != "persistent" and c.cluster_m != 1:
        raise ValueError(
            f"cluster_m must be 1 with the {c.scheduler} scheduler (its units are single "
            f"tiles), but got {c.cluster_m}"
        )
    return c


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
    "ping-pong consumers, 64 x 256 tiles (4 stages)": GemmConfig(schedule="pingpong", stages=4),
    "stream-K (128 x 256)": GemmConfig(scheduler="stream_k"),
    "K walked forward on every unit (not serpentine)": GemmConfig(k_order="forward"),
}
