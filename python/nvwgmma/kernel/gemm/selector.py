"""Which kernel configuration a problem gets: `select_config`, a rule on
the problem's shape and the GPU's SM count, and `candidates`, the short
list the rule chose from (what bench/gemm/shapes.py measures against it
and the autotuner tries).

The rule, in order (tiles counted with ceil-division, times the batch):

0. Decode (16-bit or fp8 inputs, M <= 32 tokens, N >= 256, row-major A -- its tokens, the
   kernel's B, are then K-major): the problem transposed, C^T = W X^T
   (`store_transposed`): the weights are the kernel's M operand and the
   tokens wgmma's N (where 64-row tiles of tokens would be mostly
   padding) -- 128 rows of weights (two consumer warpgroups) by 16 tokens
   up to 16 tokens, 64 rows (one) by 32 above -- with the deepest ring
   that fits, each stage released when its wgmmas are done, their K split
   so that tiles x parts is about a wave (as rule 4; up to 16 tokens, where
   128-row tiles would split, 64 rows by 16 where those make as many units
   or the 128-row parts are short: DECODE_SPLIT_ROWS; 16-bit, also where
   unsplit 128-row units make more than a wave and 64-row ones fill the
   last wave DECODE_WAVE_GAIN fuller), C stored transposed
   (`decode_tile`, `decode_config`). Its second case: from
   33 to 64 tokens, where rules 1-3 pick a 128-row tile (half of it or
   more padding), the transposed 128 x 64 tile of two consumers. Its
   third case: from 65 to 96 tokens (ragged: every row tile pads them to
   128), the transposed 64-row tile of one consumer by the tokens rounded
   up to 16.
Rules 1-3, as the thresholds first set (the cost model below picks the
same on the Llama-3-8B table and replaces them everywhere):

1. At least 0.9 of a wave of 128 x 256 tiles: the 128 x 256 tile,
   data-parallel persistent -- the fastest per tile (one m64n256 wgmma per
   consumer reads the most math per byte of shared memory).
2. Else, 128 x 192 tiles filling 0.9 to 1 wave: the 128 x 192 tile
   (one wave, where 128 x 256 leaves a quarter of the SMs idle and
   128 x 128 needs a second, mostly empty wave).
3. Else, at least half a wave of 128 x 128 tiles: the 128 x 128 tile
   (6 stages), data-parallel: twice the tiles, so most SMs work -- one
   consumer warpgroup of 128 rows (two m64 wgmmas per K step on the same
   B) that waits for the previous stage between its two blocks, so the
   tensor cores never drain (cuBLAS's kernel for these shapes).
   With an epilogue chain (bias, activation, residual, ...) the tile's
   consumers are two warpgroups of 64 rows: beside one warpgroup's two
   accumulators the chain's registers spilled.
3b. Where 128 x 128 tiles make half a wave to a wave (SMs left idle)
   and the 128-row tiles are at least 0.9 full: rule 3's consumer on the
   width among 128, 112, 96 and 80 with the most wave fill times the
   width's rate (NARROW_RATES, relative to 128) -- more tiles in the one
   wave, each shorter (B K-major: an N-major B takes whole 64-column
   atoms; without an epilogue chain).
3c. Ragged M past 128 tokens (16-bit inputs, both operands K-major, a
   16-bit C with 16-byte aligned rows, no epilogue chain), where the cost
   model's tile came from rules 1-3: the transposed problem (as rule 0,
   C^T = W X^T, C through stmatrix.trans and TMA) on a tile of 128 rows of
   weights (two consumers) by the token width (a multiple of 16, 144 to
   240) that pads M the least -- M = 777 in 5 x 160 tokens (800) where
   128-row tiles take 7 x 128 (896) -- where it pads less than 128-row
   tiles and its wave fill times its width's rate (TILE_RATES,
   interpolated) beats the cost model's tile.
3d. Where rule 3c may transpose the problem (whether or not it packs M):
   the transposed tile of 256 rows of weights -- two consumers of 128
   rows, each two m64 wgmmas on the same tokens -- by the token width from
   128 to 192 that fills the waves the most, where its wave fill times
   TRANSPOSED_WIDE_RATE beats both the cost model's tile and rule 3c's --
   777 x 5120 in 20 x 6 = 120 tiles of 256 x 144 (one wave), where
   128 x 256 makes 140 and rule 3c's 128 x 160 makes 200.
4. Else (few output tiles: 128 x 128 tiles under half a wave, or under a
   whole one at M <= 64): 64-row tiles of one consumer
   warpgroup, each stage's wgmmas in two groups with the previous stage
   waited for between them -- 64 x 64 (13 stages) where those make at
   most a wave, else 64 x 128 (8 stages) -- with their K split in S parts
   so that tiles x S is about one wave, each part keeping at least 4 K
   stages (split-K; S = 1: the tiles data-parallel).

Rules 1-3 are one cost model (`_modelled`): wherever 128 x 128 tiles make
at least half a wave (a whole one at M <= 64), the data-parallel tile among 128 x 256, 128 x 224,
128 x 192, rule 3's 128 x 128 and the ping-pong 64 x 256 (two consumers
on tiles of their own) with the most wave fill (output elements over the
tile elements its whole waves hold) times the tile's full-wave
throughput -- TILE_RATES and PINGPONG_RATE for 16-bit inputs, FP8_RATES
for fp8, each fitted on the tuned half of the public shape corpus
(bench/gemm/tile_rates.py). It picks what the thresholds above pick on
the Llama-3-8B table; elsewhere (odd N, ragged M) it weighs a second,
mostly empty wave against a narrower tile instead. 28672 = 128 x 224: the
gate/up projection at M = 512 is 448 tiles of 128 x 256, 3.4 waves whose
last leaves 85 % of the SMs idle, and 512 tiles of 128 x 224, 3.9 waves.
Only tiles TMA can load compete: an N-major B is loaded in 64-column
swizzle atoms, so it takes no 128 x 224.

Stages: as many as fit 227 KiB beside the epilogue's staging.

Why (H200, bench/gemm/shapes.py, paired against torch.matmul and
torch._scaled_mm): at M = 128 the 128 x 256 tile gives the Llama-3-8B
projections 16 to 112 tiles for 132 SMs, and the 128 x 128 tile measured
1.0-1.8x faster there; from a full wave up, the wide tile wins. Rule 1's
0.9: at M = 1000, N = 4096 the 128 tiles of 128 x 256 (0.97 wave) ran
1.08x faster than 256 tiles of 128 x 128. Rule 2: QKV at M = 512 (128
tiles of 128 x 192) ran 1.20x (bf16) and 1.23x (e4m3) faster than
128 x 128 and 1.13x / 1.18x faster than 128 x 256. Where even 128 x 128
tiles leave most SMs idle (QKV, O and down at M = 128), split-K of them
measured 1.16-1.79x faster than rule 3's kernel; rule 4's 64-row tiles
(what cuBLAS runs there: bench/gemm/cublas_kernels.py) then ran faster
still on H100: bf16 QKV 0.81 -> 0.95x torch, O 1.12 -> 1.37, down 1.00 ->
1.09 (docs/performance.md). Rule 3's one-warpgroup consumer (H100,
bench/gemm/variants.py --set rows128, two runs): 1.009 / 1.022x torch on
O at M = 512 where two 64-row consumers ran 0.955 / 0.955x; on down at
M = 512 the two are level (0.913 / 0.936 against 0.892 / 0.946).
The 128 x 224 tile (H100, bench/gemm/power.py, 3 rounds of 1 s windows):
gate/up at M = 512 0.980x torch where 128 x 256 ran 0.922x (467.6 against
419.7 TFLOP/s per GHz; cuBLAS's tile there, 176 x 128 across N, fills its
waves the same way), at M = 128 0.971x where rule 3's tile ran 0.956x; at
M = 2048, where both fill 97 %, 128 x 256 stays ahead (1.025 / 1.003).
Rule 4's 64 x 64 tiles (H100, shapes.py --set corpus-small, 3 rounds:
every 64-row candidate on the 48 shapes of the tuned half in rule 4's
region, bench/results/h100/2026-11-28-0325-gemm-corpus-small.json): the
pick over the best candidate, geomean, bf16 0.847 -> 0.981, e4m3 0.926
-> 0.988, against 64 x 128 tiles everywhere; where 64 x 64 tiles need two
waves (M = 256, N = 4096), 64 x 128 ran 1.10x torch against 0.87.
Rule 4 at M <= 64 up to a wave of 128 x 128 tiles (H100, shapes.py --set
corpus-m64, 3 rounds, the tuned half's 33-64 token shapes where the cost
model picked, bench/results/h100/2026-11-28-0430-gemm-corpus-m64.json):
on the 4 shapes it moves, 0.80-1.00x torch -> 0.94-1.05x (Llama-3.1-70B's
QKV, 64 x 10240 x 8192: 0.798 -> 0.936).
Rule 3b's widths (tuned: H200, shapes.py --set corpus-mid, 50 shapes of
the tuned half where 128 x 128 tiles fill half a wave to a wave, every
width timed, bench/results/h200/2026-11-28-0925-gemm-corpus-mid-widths.json):
the pick at 0.986 of the fastest width, geomean, where 128 x 96 alone
(at most 0.82 of a wave) reached 0.967. Held out (H200, shapes.py --set
heldout-mid / heldout-mid-second / heldout-widths, 89 shapes, the pick
paired with the other widths in one run,
bench/results/h200/2026-11-28-0945-gemm-heldout-*-widths.json): 1.032x
the 96-only rule, geomean, 0.95-1.30x; on heldout-widths, drawn after
the fit (16 shapes), 1.050x, 1.00-1.15x. Qwen2.5-72B's QKV at tp 8
(1024 x 1280 x 8192, fp8): 0.82 -> 0.94x torch on 128 x 80.
Split-K of 128 x 128 in 2 to 6 parts and
stream-K there ran at 0.33-0.77 of the best candidate, geomean (H200,
bench/results/archive/h200/2026-11-28-0611-gemm-corpus-mid-splits.json):
each fix-up cost 3.0-3.7k cycles a unit, and a fuller wave ran at a lower
clock (bench/results/h200/2026-11-28-0625-gemm-fixup-timeline.json).
Rule 4's split wait (H100, shapes.py, 5 rounds, against the same kernel
without it): bf16 QKV / O / down at M = 128 0.969 / 1.433 / 1.068x torch
against 0.954 / 1.432 / 1.039, e4m3 3.29 / 3.22 / 1.10x torch._scaled_mm
against 2.75 / 2.96 / 1.07.
"""

from __future__ import annotations

from dataclasses import replace

from .config import SHARED_MEMORY_LIMIT, GemmConfig

__all__ = ["candidates", "select_config"]

H100_SMS = 132
# The fewest K stages a split-K part keeps: below it, the fix-up's
# partial traffic outweighs the parallelism bought.
MIN_PART_STAGES = 4
# Rule 3's consumer: one warpgroup computes all 128 rows of the tile.
# Rules 3 and 4: a stage's wgmmas in two groups, the previous stage waited
# for between them, so the tensor cores never drain.
SPLIT_WAIT = dict(inflight=1, split_wait=True)
ONE_WARPGROUP_TILE = dict(consumers=1, consumer_rows=128, **SPLIT_WAIT)


def _rule3_consumer(base: GemmConfig) -> dict:
    """Rule 3's consumer: one warpgroup of 128 rows without an epilogue
    chain; two of 64 rows with one, where the chain's registers (bias,
    residual, activation) beside two m64 accumulators spilled 36-580 bytes
    in ptxas for every input type."""
    return {} if base.fusion else ONE_WARPGROUP_TILE


# The cost model of 16-bit inputs (rules 1-3): each data-parallel tile's
# throughput with its waves full (TFLOP/s on an H100: the median over the
# tuned half of the public shape corpus of achieved TFLOP/s over wave fill,
# bench/results/archive/h100/2026-11-27-0650-gemm-corpus-candidates.json).
# A problem's time is its flops over (wave fill x rate).
TILE_RATES = {256: 727.0, 224: 708.0, 192: 698.0, 128: 651.0}
# The ping-pong 64 x 256 tile's, fitted the same way (its two consumers
# each on a tile of their own: a wave is two tiles per SM). 64-row tiles
# pack a ragged M closer: M = 777 is 13 of them (832 rows) against 7 of
# 128 (896). `python bench/gemm/tile_rates.py` refits every rate.
PINGPONG_RATE = 565.0
# fp8's (e4m3 and e5m2: the same bytes and tiles), "pingpong" for the
# ping-pong tile, from a run timing each of them on 40 shapes of the tuned
# half (bench/results/h100/2026-11-28-0030-gemm-corpus-candidates-fp8.json).
FP8_RATES = {256: 1361.0, 224: 1356.0, 192: 1340.0, 128: 1195.0, "pingpong": 1116.0}


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _base(dtype, out_dtype, a_major, b_major, fusion, c_aligned) -> GemmConfig:
    """The epilogue the problem's output allows (as problem_config)."""
    tma = c_aligned and out_dtype in ("bf16", "f16", "f32")
    return GemmConfig(
        dtype=dtype,
        out_dtype=out_dtype,
        a_major=a_major,
        b_major=b_major,
        fusion=tuple(fusion),
        epilogue="tma" if tma else "registers",
        epilogue_chunks=2 if tma and out_dtype == "f32" else 1,
    )


def with_tile(config: GemmConfig, tile_n: int, *, max_stages: int = 8, **changes) -> GemmConfig:
    """`config` with a `tile_n` wide tile (m128 unless `changes` say
    otherwise) and as many stages, up to `max_stages`, as fit; three
    consumers take attention's 3-consumer registers (32 and 160) unless
    `changes` name them."""
    c = replace(config, tile_n=tile_n, **changes)
    if c.consumers == 3 and not {"consumer_regs", "producer_regs"} & changes.keys():
        c = replace(c, producer_regs=32, consumer_regs=160)  # 512 shared by four warpgroups
    for stages in range(max_stages, 1, -1):
        candidate = replace(c, stages=stages)
        if candidate.shared_memory_bytes <= SHARED_MEMORY_LIMIT:
            return candidate
    raise ValueError(f"no stage count fits shared memory for {c.name}")


def _tiles(config: GemmConfig, m: int, n: int, batch: int) -> int:
    """Output tiles of `config` on a batch of M x N problems."""
    return batch * _ceil(m, config.tile_m) * _ceil(n, config.tile_n)


def wave_fill(config: GemmConfig, m: int, n: int, batch: int, sms: int) -> float:
    """The fraction of the tile elements `config`'s waves hold that are
    output elements: M x N over whole waves of tiles (a ping-pong CTA
    holds two tiles at once)."""
    per_wave = sms * (2 if config.schedule == "pingpong" else 1)
    waves = _ceil(_tiles(config, m, n, batch), per_wave)
    return batch * m * n / (waves * per_wave * config.tile_m * config.tile_n)


def tile_rate(config: GemmConfig) -> float:
    """The cost model's full-wave rate of a data-parallel tile."""
    pingpong = config.schedule == "pingpong"
    if config.dtype in ("e4m3", "e5m2"):
        return FP8_RATES["pingpong" if pingpong else config.tile_n]
    return PINGPONG_RATE if pingpong else TILE_RATES[config.tile_n]


def _buildable(c: GemmConfig) -> bool:
    """Whether TMA can load `c`'s tiles (an N-major B takes no 128 x 224
    tile: 224 columns are not whole 64-column swizzle atoms)."""
    from .config import partial_atoms

    return partial_atoms(c) is None


def _chain_beside_wide_accumulators_spills(base: GemmConfig) -> bool:
    """Whether an epilogue chain meets the accumulators in registers past
    what 192- to 256-wide tiles leave free: stored from registers (C not
    16-byte aligned, fp8 C) or as f32. There ptxas spilled 8-864 bytes on
    tiles 192 to 256 wide (ping-pong's too) and none on 128 x 128 of two
    consumers; a bf16 or f16 C through TMA stays clean at every width."""
    return bool(base.fusion) and (base.epilogue == "registers" or base.out_dtype == "f32")


def model_tiles(base: GemmConfig) -> list[GemmConfig]:
    """The data-parallel tiles the cost model weighs, on `base`'s
    epilogue and layouts: 128 x 256, 224, 192, 128 x 128 of one
    warpgroup, and the ping-pong 64 x 256 (those TMA can load); 128 x 128
    of two consumers alone where a wider tile's chain would spill."""
    if _chain_beside_wide_accumulators_spills(base):
        return [with_tile(base, 128, **_rule3_consumer(base))]
    tiles = [with_tile(base, tile_n, **(_rule3_consumer(base) if tile_n == 128 else {}))
             for tile_n in TILE_RATES]  # fmt: skip
    tiles.append(with_tile(base, 256, schedule="pingpong"))
    return [c for c in tiles if _buildable(c)]


def _modelled(base: GemmConfig, m, n, batch, sms) -> GemmConfig:
    """The tile of `model_tiles` the cost model predicts fastest: the most
    wave fill times the tile's full-wave rate (`tile_rate`)."""
    return max(model_tiles(base), key=lambda c: wave_fill(c, m, n, batch, sms) * tile_rate(c))


def _units(config: GemmConfig, m, n, batch) -> int:
    """Work units of `config` on the problem: tiles times K parts."""
    return _tiles(config, m, n, batch) * (config.splits if config.scheduler == "split_k" else 1)


def unit_fill(units: int, sms: int) -> float:
    """How full the SMs' waves of `units` work units are."""
    return units / (_ceil(units, sms) * sms)


def _last_wave(config: GemmConfig, m, n, batch, sms) -> float:
    """The wave fill of `config`'s units (rule 0's)."""
    return unit_fill(_units(config, m, n, batch), sms)


def _split_to_a_wave(config: GemmConfig, m, n, k, batch, sms) -> GemmConfig | None:
    """`config` with K split so that tiles x parts is about a wave, each
    part keeping at least MIN_PART_STAGES K stages; None below 2 parts."""
    splits = min(sms // _tiles(config, m, n, batch), _ceil(k, config.k_tile) // MIN_PART_STAGES)
    return replace(config, scheduler="split_k", splits=splits) if splits >= 2 else None


# Rule 3b: where 128 x 128 tiles leave SMs idle (under a wave), the width
# of rule 3's consumer among 128, 112, 96 and 80 with the most wave fill
# times its rate relative to 128 x 128 -- narrower tiles put more of the
# SMs to work, each a shorter tile, at a lower rate per tile element
# (shared memory feeds the tensor cores less math per byte). cuBLAS fills
# such waves with 80- to 144-wide tiles (bench/gemm/cublas_kernels.py).
# The rates: a grid fit on the tuned half's region (shapes.py --set
# corpus-mid, 50 rows, every width timed; H200,
# bench/results/h200/2026-11-28-0925-gemm-corpus-mid-widths.json), the
# middle of the plateau where the pick's geomean to the fastest width is
# 0.986 (the 96-only rule it replaces: 0.967). Where the last row of
# 128-row tiles is mostly padding (M = 77, 777) the 128-wide tile ran
# ahead of every narrower one.
NARROW_RATES = {128: 1.0, 112: 0.92, 96: 0.84, 80: 0.76}
NARROW_MIN_ROWS = 0.9


def _narrow(base: GemmConfig, m, n, batch, sms) -> GemmConfig | None:
    """Rule 3b's tile, or None where it does not apply or 128 wide wins (an
    N-major B loads whole 64-column swizzle atoms: no 80- to 112-wide tile;
    an epilogue chain takes rule 3's two-consumer tile, `_rule3_consumer`)."""
    if base.b_major != "K" or base.fusion or batch * _ceil(m, 128) * _ceil(n, 128) >= sms:
        return None
    if m < NARROW_MIN_ROWS * 128 * _ceil(m, 128):  # 128-row tiles under 0.9 full
        return None
    widths = [with_tile(base, tile_n, **ONE_WARPGROUP_TILE) for tile_n in NARROW_RATES]
    best = max(widths, key=lambda c: wave_fill(c, m, n, batch, sms) * NARROW_RATES[c.tile_n])
    return best if best.tile_n != 128 else None


# Rule 3c: from this many tokens, the transposed problem packs a ragged M
# (rule 0's cases take fewer). Tuned half (H200, bench/gemm/variants.py
# --set ragged-wide, 8 layers of the tuned models at 300, 530 and 777
# tokens, bench/results/h200/2026-11-28-1728-gemm-ragged-wide.json): the
# packed transposed tile against the pick measured as the cost model
# predicts it with the width's rate as a row tile's (predicted 1.07-1.16x
# where it is taken, measured 1.02-1.12x; where waves or a short K made it
# lose, 0.75-0.94x, it is not taken). 128 x 256 tokens (0.41-0.80x torch)
# and 128 x 128 (0.60-0.97x) lose to it everywhere.
TRANSPOSED_MIN_M = 129
TRANSPOSED_DTYPES = ("bf16", "f16")


def packed_tokens(m: int) -> int:
    """Rule 3c's token width: the multiple of 16 from 144 to 256 whose
    tiles pad M the least, the wider of a tie (128 never pads less than
    one of them)."""
    return min(range(256, 143, -16), key=lambda t: _ceil(m, t) * t)


def width_rate(tile_n: int) -> float:
    """TILE_RATES at any width from 128 to 256, linear between the fitted
    ones."""
    if tile_n in TILE_RATES:
        return TILE_RATES[tile_n]
    below = max(w for w in TILE_RATES if w < tile_n)
    above = min(w for w in TILE_RATES if w > tile_n)
    share = (tile_n - below) / (above - below)
    return TILE_RATES[below] + (TILE_RATES[above] - TILE_RATES[below]) * share


def transposed_tile(m: int, base: GemmConfig, packs: bool = True) -> GemmConfig | None:
    """Rule 3c's configuration for M tokens on `base` (the problem's own
    epilogue and layouts), or None where the rule does not take it: its
    tokens must pad less than 128-row tiles do (what it was measured
    buying; whole 128s leave it nothing to pack) -- unless `packs` is
    false (rule 3d asks only whether the problem may be transposed)."""
    tokens = packed_tokens(m)
    if (
        m < TRANSPOSED_MIN_M
        or (packs and _ceil(m, tokens) * tokens >= _ceil(m, 128) * 128)
        or base.dtype not in TRANSPOSED_DTYPES
        or (base.a_major, base.b_major) != ("K", "K")
        or base.fusion
        or base.epilogue != "tma"
        or base.out_dtype not in ("bf16", "f16")
    ):
        return None
    # Both operands K-major: so are the transposed problem's.
    return with_tile(replace(base, store_transposed=True), tokens)


# Rule 3d: the transposed problem on 256 rows of weights -- two consumers
# of 128 rows, each two m64 wgmmas on the same tokens (cuBLAS's 128 x 272
# of tokens by weights, turned over) -- by the token width from 128 to 192
# whose tiles fill the waves the most: 20 x 6 = 120 tiles of 256 x 144 for
# M x N = 777 x 5120, one wave, where 128-row tiles make 140 to 200. Its
# full-wave rate, fitted on the tuned half (H200, bench/gemm/variants.py
# --set rows256 and rows256-whole, 70 shapes of 18 tuned layers at 256 to
# 4096 tokens, bench/results/h200/2026-11-28-2227-gemm-rows256.json and
# ...-2232-gemm-rows256-whole.json): from 680 to 720 every shape it takes
# runs as fast as or faster than the tile it replaces; 700, the middle,
# takes 12 of the 70 at 1.00-1.19x (777 x 5120 x 14336: 0.85 -> 1.00x
# torch.matmul), 1.019x and 1.004x geomean over the two sets. With C from
# registers (a fourth stage) it ran 0.93x the TMA store; with split wait,
# level.
TRANSPOSED_WIDE_RATE = 700.0
TRANSPOSED_WIDE_TOKENS = range(192, 127, -16)


def wide_transposed_tile(m: int, n: int, base: GemmConfig, batch: int = 1,
                         sms: int = H100_SMS) -> GemmConfig | None:  # fmt: skip
    """Rule 3d's configuration (see TRANSPOSED_WIDE_RATE), or None where
    its inputs, layouts, C or a chain rule it out (as rule 3c's)."""
    if transposed_tile(m, base, packs=False) is None:
        return None
    return filling_wide_tile(replace(base, store_transposed=True), m, n, batch, sms)


def filling_wide_tile(base: GemmConfig, m, n, batch, sms, widths=TRANSPOSED_WIDE_TOKENS):
    """`base` (transposed) on 256 rows of weights by the token width of
    `widths` whose tiles fill the waves the most (the widest of a tie)."""
    tiles = [with_tile(base, t, consumers=2, consumer_rows=128) for t in widths]
    return max(tiles, key=lambda c: wave_fill(c, n, m, batch, sms))


def _transposed_if_faster(picked, base, m, n, batch, sms) -> GemmConfig | None:
    """Rule 3c's or 3d's tile where the cost model predicts it faster than
    `picked` (and than the other)."""
    best, predicted = None, wave_fill(picked, m, n, batch, sms) * tile_rate(picked)
    packed = transposed_tile(m, base)
    wide = wide_transposed_tile(m, n, base, batch, sms)
    for tile, rate in ((packed, packed and width_rate(packed.tile_n)),
                       (wide, TRANSPOSED_WIDE_RATE)):  # fmt: skip
        # The transposed problem: N rows (the weights) by M columns (tokens).
        if tile is not None and wave_fill(tile, n, m, batch, sms) * rate > predicted:
            best, predicted = tile, wave_fill(tile, n, m, batch, sms) * rate
    return best


def _few_tiles(m: int, n: int, batch: int, sms: int) -> bool:
    """Rule 4's region: 128 x 128 tiles fill under half a wave -- or under
    a whole one at M <= 64, where a 128-row tile is half padding or more."""
    tiles = batch * _ceil(m, 128) * _ceil(n, 128)
    return 2 * tiles < sms or (m <= 64 and tiles < sms)


def _out_default(dtype, out_dtype):
    if out_dtype is not None:
        return out_dtype
    return "bf16" if dtype in ("e4m3", "e5m2") else dtype


# Rule 0: at most this many tokens (rows of A) take the transposed path,
# where N has at least DECODE_MIN_N columns to give the weights' rows. At
# M = 64 there is no padding left to save: the 64-row tiles of rules 3-4
# ran faster on 3 of the 4 Llama-3-8B projections (H100,
# bench/results/h100/2026-11-27-0042-gemm-decode-candidates.json).
DECODE_M, DECODE_MIN_N = 32, 256
# The inputs rule 0 takes. fp8 (e4m3; e5m2 has the same bytes and tiles)
# joined after a run timing rule 0's tiles against rule 4 on Llama-3-8B's
# projections at M <= 32: 1.80x against 1.53x torch._scaled_mm geomean,
# worst 0.96 against 0.84 (bench/results/h100/2026-11-27-1336-gemm-decode-fp8-candidates.json).
DECODE_DTYPES = ("bf16", "f16", "e4m3", "e5m2")
# Up to this many tokens rule 0's tile is 128 rows of weights by 16 tokens
# (two consumers): each stage brings 16 KiB of weights beside 2 KiB of
# tokens, where 64 x 32 brought 8 KiB beside 4 KiB. cuBLAS streams these
# with 128 x 8 and 256 x 8 tiles (H200, bench/gemm/cublas_kernels.py).
# Tuned half (H200, bench/gemm/variants.py --set decode and decode-wide,
# 28 decode layers of Qwen2.5-14B, Gemma-2-9B, Mistral-Nemo-12B and
# Llama-3.2-1B at 1, 4, 8 and 16 tokens): 1.14x torch.matmul geomean
# (worst 0.99) where 64 x 32 ran 1.01x (worst 0.77); e4m3 at 1, 8 and 16
# tokens 1.77x torch._scaled_mm (worst 0.98) against 1.56x (worst 0.89).
# At 32 tokens 128 x 32 was level with 64 x 32 (1.064 against 1.045x,
# worst 0.93 against 0.96). Held out (the corpus's second held-out sample,
# bench/results/h200/2026-11-28-1236-gemm-corpus-heldout-second-decode.json):
# bf16 at M <= 16 0.882 -> 0.970 at the 10th percentile, worst 0.858 ->
# 0.955; e4m3 worst 0.909 -> 0.996.
DECODE_NARROW_M = 16
# ... except where its 128-row tiles are too few for a wave and split K:
# there 64 rows of weights (one consumer, 16 stages), split to a wave in
# turn, where they make as many units (CTAs) or the 128-row parts are
# short (at most DECODE_SHORT_PART K stages, where a fix-up weighs most):
# half the K parts, each streaming twice the K. Tuned half (H200,
# programmatic launches, bench/gemm/variants.py --set decode-streamk and
# decode-split-rows[-fp8], ...-2015-gemm-decode-streamk.json,
# ...-2018-gemm-decode-split-rows.json, ...-2018-gemm-decode-split-rows-fp8.json):
# as many units, 1.02-1.18x the 128-row split (fp8 0.96-1.16x); parts
# of 7-10 stages, 1.10-1.43x with fewer units; parts of 21 stages or more
# with fewer units (5120 x 4096-7168: 120 units against 80), 0.91-1.04x,
# left on 128 rows. 64 rows where 128-row tiles fill a wave unsplit:
# 0.96-0.99x (left); stream-K of the 128-row tile 0.82-1.0x.
DECODE_SPLIT_ROWS = 64
DECODE_SHORT_PART = 16  # K stages
# ... and, 16-bit, where its 128-row units (unsplit) make more than a wave
# and 64-row ones fill the last wave at least DECODE_WAVE_GAIN fuller,
# 64 rows: the last wave's idle SMs are half as long. Tuned half (H200,
# variants.py --set decode-waves and decode-waves-level, 18 layers at 1,
# 8 and 16 tokens, ...-2247-gemm-decode-waves.json,
# ...-2249-gemm-decode-waves-level.json): where the fill gains 0.05 or
# more (0.56 -> 0.75 on 19008 x 5120, 0.85 -> 0.97 on 57344 x 8192),
# 1.012x geomean (0.988-1.042); where it gains less, 128 rows ran ahead
# (64 rows at 0.987x, 0.954-0.999).
DECODE_WAVE_GAIN = 0.05
# Where C leaves through TMA, those tiles release their stages as rule 4's
# do (SPLIT_WAIT): one iteration late, each stage's wgmmas in two groups,
# so a consumer never waits for the wgmmas it just issued. Tuned shapes
# (H200, variants.py --set decode-inflight[-fp8],
# ...-2038-gemm-decode-inflight.json, ...-2040-gemm-decode-inflight-fp8.json):
# bf16 1.017x geomean over releasing each stage when its wgmmas are done
# (0.996-1.092; 64-row tiles 1.07-1.09), e4m3 1.006x (level). From
# registers, a group left in flight had ptxas serialise the transposed
# store's persistent kernels (C7514): those release at once (inflight 0).


# Rule 0's second case: from 33 to this many tokens, where the cost model
# picks a 128-row tile (half of it or more padding), the transposed
# 128 x 64 tile of two consumers instead. Tuned half (H200,
# bench/gemm/variants.py --set m64 / m64-fp8, 10 layers of the tuned
# models at 48 and 64 tokens,
# bench/results/h200/2026-11-28-1247-gemm-m64-tiles.json and
# ...-1248-gemm-m64-tiles-fp8.json): on the 8 rows where the cost model
# took 128 x 224 (the gate/up widths, 27648-28672) bf16 0.90 -> 1.02x
# torch.matmul and e4m3 0.90 -> 1.00x; where it took the ping-pong
# 64 x 256 or rule 4's 64-row tiles those stayed as fast or faster.
# cuBLAS runs 256 x 64 and 80 x 64 tiles of weights by tokens there
# (2026-11-28-1224-gemm-cublas-kernels-decode.json).
DECODE_WIDE_M = 64


# Rule 0's third case: from 65 to this many tokens, the transposed tile of
# 64 rows of weights (one consumer) by the tokens rounded up to 16, where a
# 64- or 128-row tile of tokens pads them to 128. Tuned half (H200,
# bench/gemm/variants.py --set m65 / m65-fp8, 10 layers of the tuned models
# at 77, 96 and 112 tokens, bench/results/h200/2026-11-28-1503-gemm-m65.json
# and ...-1504-gemm-m65-fp8.json): at 77 tokens 1.21x the pick geomean (worst 1.00),
# e4m3 1.13x; at 96 level (1.005x, 1.001x); at 112 0.87x. The transposed
# tile runs at about 0.75 of a row tile's rate, so it wins while the
# tokens round to 80 or fewer (128 / 80 x 0.75 = 1.2); two consumers
# (128 x 80) ran 1.16x and 1.04x at 77. With C through stmatrix.trans and
# TMA the same tiles at 96 tokens ran 1.05x the pick, bf16 and e4m3
# (worst 0.95 and 0.78; ...-1726-gemm-transposed-store.json,
# ...-1748-gemm-m65-fp8-tma.json), and at 112 still lost (0.83-0.95x):
# the case reaches 96. Held out at 90 tokens (...-1755-gemm-m65-heldout-tma.json,
# ...-1756-gemm-m65-heldout-fp8-tma.json): 1.066x the tile it replaced
# (bf16, 0.93-1.45x), 1.029x (e4m3, 0.85-1.39x).
DECODE_RAGGED_M = 96


def _decodes(m: int, n: int, a_major: str, dtype: str, limit: int = DECODE_M) -> bool:
    """Whether rule 0 can take the problem (up to `limit` tokens)."""
    return m <= limit and n >= DECODE_MIN_N and a_major == "K" and dtype in DECODE_DTYPES


def decode_tile(m: int) -> tuple[int, int]:
    """Rule 0's (consumers, tokens) at M tokens: 128 rows of weights (two
    consumers) by 16 tokens up to 16, 64 rows by 32 up to 32, 128 by 64
    up to 64 (rule 0's second case), 64 by M rounded up to 16 past that
    (its third)."""
    if m <= DECODE_NARROW_M:
        return 2, 16
    if m > DECODE_WIDE_M:
        return 1, _ceil(m, 16) * 16
    return (1, 32) if m <= DECODE_M else (2, 64)


def decode_config(m: int, n: int, k: int, *, dtype: str = "bf16", out_dtype: str | None = None,
                  a_major: str = "K", b_major: str = "K", batch: int = 1, fusion=(),
                  c_aligned: bool = True, sms: int = H100_SMS, consumers: int | None = None,
                  tokens: int | None = None) -> GemmConfig:  # fmt: skip
    """Rule 0's configuration for an M x N x K problem (in the caller's
    terms): the kernel computes the N x M transpose (launch.swapped), C
    stored transposed through stmatrix.trans and TMA where it is 16-bit
    with 16-byte aligned rows, else from registers. `consumers` and
    `tokens` override `decode_tile`'s."""
    from .config import transposed_majors
    from .fusion import transposed_chain

    out_dtype = _out_default(dtype, out_dtype)
    tma = c_aligned and out_dtype in ("bf16", "f16")
    base = replace(_base(dtype, out_dtype, *transposed_majors(a_major, b_major),
                         transposed_chain(fusion), tma), store_transposed=True)  # fmt: skip
    rule_consumers, rule_tokens = decode_tile(m)
    tile = with_tile(base, tokens or rule_tokens, consumers=consumers or rule_consumers,
                     max_stages=16)  # fmt: skip
    split = _split_to_a_wave(tile, n, m, k, batch, sms)
    picked = split or tile
    if split is not None and consumers is None and m <= DECODE_NARROW_M:
        half = with_tile(base, tokens or rule_tokens, consumers=DECODE_SPLIT_ROWS // 64,
                         max_stages=16)  # fmt: skip
        half = _split_to_a_wave(half, n, m, k, batch, sms) or half
        short = _ceil(k, split.k_tile) <= DECODE_SHORT_PART * split.splits
        if short or _units(half, n, m, batch) >= _units(split, n, m, batch):
            picked = half
    elif (split is None and consumers is None and m <= DECODE_NARROW_M
          and dtype in TRANSPOSED_DTYPES and _units(tile, n, m, batch) > sms):  # fmt: skip
        half = with_tile(base, tokens or rule_tokens, consumers=DECODE_SPLIT_ROWS // 64,
                         max_stages=16)  # fmt: skip
        if (
            _last_wave(half, n, m, batch, sms)
            >= _last_wave(tile, n, m, batch, sms) + DECODE_WAVE_GAIN
        ):
            picked = half
    if tma and m <= DECODE_NARROW_M:
        picked = replace(picked, **SPLIT_WAIT)
    return picked


def select_config(m: int, n: int, k: int, *, dtype: str = "bf16", out_dtype: str | None = None,
                  a_major: str = "K", b_major: str = "K", batch: int = 1, fusion=(),
                  c_aligned: bool = True, sms: int = H100_SMS) -> GemmConfig:  # fmt: skip
    """The configuration for a batch of M x N x K problems on a GPU with
    `sms` SMs (see the module docstring for the rule)."""
    out_dtype = _out_default(dtype, out_dtype)

    def decode():
        return decode_config(m, n, k, dtype=dtype, out_dtype=out_dtype, a_major=a_major,
                             b_major=b_major, batch=batch, fusion=fusion, c_aligned=c_aligned,
                             sms=sms)  # fmt: skip

    if _decodes(m, n, a_major, dtype) or (
        m > DECODE_WIDE_M and _decodes(m, n, a_major, dtype, DECODE_RAGGED_M)
    ):
        return decode()  # rule 0 and its third case
    base = _base(dtype, out_dtype, a_major, b_major, fusion, c_aligned)
    if not _few_tiles(m, n, batch, sms):
        narrow = _narrow(base, m, n, batch, sms)
        if narrow is not None:
            return narrow
        picked = _modelled(base, m, n, batch, sms)
        if picked.tile_m == 128 and _decodes(m, n, a_major, dtype, DECODE_WIDE_M):
            return decode()  # rule 0's second case: a 128-row tile of at most 64 tokens
        return _transposed_if_faster(picked, base, m, n, batch, sms) or picked
    # Rule 4: 64-row tiles (one consumer, a deep ring), 64 columns wide
    # where those fit one wave, else 128, their K split so that tiles x
    # parts is about a wave.
    small = with_tile(base, 64, consumers=1, max_stages=16, **SPLIT_WAIT)
    if _tiles(small, m, n, batch) > sms:
        small = with_tile(base, 128, consumers=1, max_stages=16, **SPLIT_WAIT)
    return _split_to_a_wave(small, m, n, k, batch, sms) or small


def candidates(m: int, n: int, k: int, *, dtype: str = "bf16", out_dtype: str | None = None,
               a_major: str = "K", b_major: str = "K", batch: int = 1, fusion=(),
               c_aligned: bool = True, sms: int = H100_SMS) -> list[GemmConfig]:  # fmt: skip
    """Configurations worth trying on this problem, the rule's choice
    first: both tiles and the 128 x 224 data-parallel (and, where the
    cost model picks, every tile it weighs, and where 128 x 128 tiles
    fill under a wave rule 3b's 112, 96 and 80 wide tiles), split-K in 2
    and 4 parts, stream-K on both tiles, the 128 x 192 tile (data-parallel, and split about a wave
    where its tiles are few: 6144 / 192 = 32 tiles x 4 parts fill 128 of
    132 SMs, where 128 x 128 makes 48 x 2 = 96 or 48 x 4 = 192), where
    128 x 128 tiles are under a wave the 64 x 64 and 64 x 128 tiles (each
    also split about a wave) and, from 256 rows, the 2 x 1 cluster of
    128 x 128, and, from a full wave of wide tiles up, ping-pong and the
    2 x 1 cluster of 128 x 256, and rules 3c's and 3d's transposed tiles
    (each only where it applies)."""
    out_dtype = _out_default(dtype, out_dtype)
    chosen = select_config(m, n, k, dtype=dtype, out_dtype=out_dtype, a_major=a_major,
                           b_major=b_major, batch=batch, fusion=fusion, c_aligned=c_aligned,
                           sms=sms)  # fmt: skip
    base = _base(dtype, out_dtype, a_major, b_major, fusion, c_aligned)
    k_stages = _ceil(k, base.k_tile)
    found = [chosen, with_tile(base, 256), with_tile(base, 128), with_tile(base, 224)]
    if 2 * batch * _ceil(m, 128) * _ceil(n, 128) >= sms:  # the cost model's tiles apply
        found += model_tiles(base)
        if base.b_major == "K" and batch * _ceil(m, 128) * _ceil(n, 128) < sms:
            found += [
                with_tile(base, tile_n, **ONE_WARPGROUP_TILE)
                for tile_n in NARROW_RATES
                if tile_n != 128
            ]  # rule 3b's widths
    if _decodes(m, n, a_major, dtype, DECODE_RAGGED_M):
        tokens = max(32, decode_tile(m)[1])  # at M <= 16 the 32-token tiles it replaced
        for consumers in (1, 2):  # the tiles rule 0 weighed
            found.append(decode_config(m, n, k, dtype=dtype, out_dtype=out_dtype,
                                       a_major=a_major, b_major=b_major, batch=batch,
                                       fusion=fusion, c_aligned=c_aligned, sms=sms,
                                       consumers=consumers, tokens=tokens))  # fmt: skip
        small = with_tile(base, 128, consumers=1, max_stages=16, **SPLIT_WAIT)
        found.append(_split_to_a_wave(small, m, n, k, batch, sms) or small)
    for splits in (2, 4):
        if k_stages >= 2 * splits:
            found.append(with_tile(base, 128, scheduler="split_k", splits=splits))
    found += [
        with_tile(base, 256, scheduler="stream_k"),
        with_tile(base, 128, scheduler="stream_k"),
        with_tile(base, 192),
    ]
    found.append(_split_to_a_wave(with_tile(base, 192), m, n, k, batch, sms))
    # 64-row tiles (one consumer) with deep rings: where 128-row tiles are
    # few, what cuBLAS picks at M <= 128 (64 x 64, 13 stages, on the O
    # projection at M = 128: bench/gemm/cublas_kernels.py), each also in
    # rule 4's stage order (split wait).
    if batch * _ceil(m, 128) * _ceil(n, 128) < sms:
        for tile_n in (64, 128):
            narrow = with_tile(base, tile_n, consumers=1, max_stages=16)
            waited = replace(narrow, **SPLIT_WAIT)  # rule 4's stage order
            found += [narrow, _split_to_a_wave(narrow, m, n, k, batch, sms), waited,
                      _split_to_a_wave(waited, m, n, k, batch, sms)]  # fmt: skip
    if m >= 256 and batch * _ceil(m, 128) * _ceil(n, 128) <= sms:
        found.append(replace(with_tile(base, 128), cluster_m=2))
    found.append(transposed_tile(m, base))  # rule 3c's, where it applies
    found.append(wide_transposed_tile(m, n, base, batch, sms))  # rule 3d's
    if batch * _ceil(m, 128) * _ceil(n, 256) >= sms:
        found.append(with_tile(base, 256, schedule="pingpong"))
        if m >= 256:
            found.append(replace(with_tile(base, 256), cluster_m=2))
    unique = []
    for c in found:
        if c is not None and c not in unique:
            unique.append(c)
    return unique
