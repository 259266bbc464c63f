"""Named kernel variants on named shapes, against torch.matmul, in one
process: each checked against float64 (shapes.py's bound) and rerun bit for
bit, then timed with torch.matmul in shapes.py's short windows, rounds
interleaved. What is tried before the selector takes it
(docs/performance.md and docs/history.md record the numbers, kept or not).

    # here (nvwgmma built): the PTX of one experiment
    python bench/gemm/variants.py generate .device/variants --set rows128
    # on the GPU (torch; no nvwgmma build)
    python bench/gemm/variants.py run .device/variants
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
from dataclasses import replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

M512 = [(512, 4096, 4096), (512, 4096, 14336), (512, 28672, 4096)]
LARGE = [(2048, 4096, 4096), (4096, 4096, 4096), (8192, 8192, 8192)]
RAGGED = [(1000, 3000, 4096), (200, 4096, 14336), (2048, 1000, 1024)]
GATE_UP = [(128, 28672, 4096), (512, 28672, 4096)]
# Decode layers of the corpus's tuned half (bench/gemm/models.py) that rule
# 0's tiles were never timed on: Qwen2.5-14B down and QKV, Gemma-2-9B gate/up
# and lm_head, Mistral-Nemo-12B O and gate/up (tp 2), Llama-3.2-1B gate/up.
DECODE_LAYERS = ((5120, 13824), (7168, 5120), (28672, 3584), (256000, 3584), (5120, 4096),
                 (14336, 5120), (16384, 2048))  # fmt: skip
DECODE = [(m, n, k) for m in (1, 4, 16) for n, k in DECODE_LAYERS]
DECODE_WIDE = [(m, n, k) for m in (8, 32, 64) for n, k in DECODE_LAYERS]
DECODE_FP8 = [(m, n, k) for m in (1, 8, 16) for n, k in DECODE_LAYERS]
# 33-64 tokens on the tuned half's widest layers (gate/up, lm_head) and a
# few narrower ones, where a 128-row tile of tokens is half padding.
M64_LAYERS = ((28672, 3584), (256000, 3584), (27648, 5120), (152064, 5120), (28672, 5120),
              (128256, 2048), (28672, 8192), (14336, 5120), (16384, 2048), (7168, 5120))  # fmt: skip
M64 = [(m, n, k) for m in (48, 64) for n, k in M64_LAYERS]


def _before_second_case(m, n, k, dtype="bf16"):
    """What select_config picked at 33-64 tokens before rule 0's second
    case: the cost model's tile where that case now takes the problem."""
    from nvwgmma.kernel.gemm.selector import _base, _modelled, select_config

    c = select_config(m, n, k, dtype=dtype, out_dtype="bf16")
    if m > 32 and c.store_transposed:
        return _modelled(_base(dtype, "bf16", "K", "K", (), True), m, n, 1, 132)
    return c


def _decode_variants() -> list:
    """Rule 0's tile as it was (64 x 32) and what might stream the weights
    faster -- the 128 x 16 tile became rule 0's at M <= 16: (label,
    function of (M, N, K) to a configuration, or None where it does not
    apply)."""
    from nvwgmma.kernel.gemm.selector import decode_config

    def split(c, parts):
        return replace(c, scheduler="split_k", splits=parts) if parts > 1 else c

    def then(m, n, k):  # rule 0's tile when this was run
        return decode_config(m, n, k, consumers=1, tokens=32)

    def more_parts(m, n, k):
        c = then(m, n, k)
        return split(c, c.splits + 1 if c.scheduler == "split_k" else 2)

    def tokens16(m, n, k):
        return replace(then(m, n, k), tile_n=16, stages=22) if m <= 16 else None

    return [
        ("rule 0 (chosen)", then),
        ("8 stages", lambda m, n, k: replace(then(m, n, k), stages=8)),
        ("18 stages", lambda m, n, k: replace(then(m, n, k), stages=18)),
        ("64 x 16 tokens, 22 stages", tokens16),
        ("2 consumers (128 x 32)", lambda m, n, k: decode_config(m, n, k, consumers=2, tokens=32)),
        (
            "2 consumers, 128 x 16 tokens, 12 stages",
            lambda m, n, k: decode_config(m, n, k, consumers=2, tokens=16) if m <= 16 else None,
        ),
        ("one more K part", more_parts),
        ("stream-K", lambda m, n, k: replace(then(m, n, k), scheduler="stream_k", splits=1)),
    ]


def _decode_wide_variants() -> list:
    """Weight tiles of 128 rows (two consumers) against the pick, at 8 to
    64 tokens: tokens 16, 32 and 64 wide."""
    from nvwgmma.kernel.gemm.selector import decode_config

    def two(width, fits):
        def make(m, n, k):
            return decode_config(m, n, k, consumers=2, tokens=width) if fits(m) else None

        return make

    def then(m, n, k):  # the pick when this was run
        if m <= 32:
            return decode_config(m, n, k, consumers=1, tokens=32)
        return _before_second_case(m, n, k)

    return [
        ("the pick", then),
        ("2 consumers, 128 x 16 tokens", two(16, lambda m: m <= 16)),
        ("2 consumers, 128 x 32 tokens", two(32, lambda m: m <= 32)),
        ("2 consumers, 128 x 64 tokens", two(64, lambda m: 32 < m <= 64)),
        (
            "1 consumer, 64 x 64 tokens",
            lambda m, n, k: decode_config(m, n, k, consumers=1) if 32 < m <= 64 else None,
        ),
    ]


def _m64_variants(dtype: str) -> list:
    """The pick before rule 0's second case against the transposed 128 x 64
    tile (two consumers: the weights on wgmma's M, the tokens its N) and
    the 64 x 64 one."""
    from nvwgmma.kernel.gemm.selector import decode_config

    types = dict(dtype=dtype, out_dtype="bf16")
    return [
        ("the pick", lambda m, n, k: _before_second_case(m, n, k, dtype)),
        ("transposed 128 x 64", lambda m, n, k: decode_config(m, n, k, consumers=2, **types)),
        ("transposed 64 x 64", lambda m, n, k: decode_config(m, n, k, consumers=1, **types)),
    ]


def _m64_heldout(dtype: str) -> list:
    """The held-out half's shapes (both corpus samples) that rule 0's
    second case takes from the cost model: 33-64 tokens on a 128-row tile."""
    import random

    import models
    import shapes
    from nvwgmma.kernel.gemm.selector import select_config

    rows = [row for sample in ("corpus", "corpus-second") for row in shapes.table(dtype, sample)
            if row[0].startswith("[held-out]") and 32 < row[1] <= 64]  # fmt: skip

    def takes(s):
        return select_config(*s, dtype=dtype, out_dtype="bf16").store_transposed

    found = {tuple(row[1:]) for row in rows if takes(row[1:])}
    # and a draw of the held-out models' other layers it takes at 64 tokens
    more = sorted({(m, n, k) for _, half, _, _, m, n, k in models.corpus()
                   if half == "held-out" and m == 64 and (dtype == "bf16" or n % 16 == 0)
                   and takes((m, n, k)) and (m, n, k) not in found})  # fmt: skip
    return sorted(found | set(random.Random(44).sample(more, min(len(more), 16 - len(found)))))


def _m64_heldout_variants(dtype: str) -> list:
    """Rule 0's second case against the cost model's tile it replaced."""
    from nvwgmma.kernel.gemm.selector import select_config

    return [
        ("the pick", lambda m, n, k: select_config(m, n, k, dtype=dtype, out_dtype="bf16")),
        ("the cost model's tile", lambda m, n, k: _before_second_case(m, n, k, dtype)),
    ]


def _layers(half: str, count: int, seed: int, keep=lambda n, k: True) -> list:
    """`count` (N, K) drawn (seeded) from `half`'s layers, every
    tensor-parallel degree, that `keep` holds."""
    import random

    import models

    layers = sorted({(n, k) for _, h, _, _, _, n, k in models.corpus()
                     if h == half and keep(n, k)})  # fmt: skip
    return random.Random(seed).sample(layers, min(count, len(layers)))


def _ragged_shapes(half: str, tokens, count: int, seed: int, dtype: str = "bf16") -> list:
    """`count` (N, K) drawn from `half`'s layers (every tensor-parallel
    degree; N a multiple of 16 for e4m3, as torch._scaled_mm asks), each at
    every M of `tokens`: ragged token counts between 64 and 128, where a
    64- or 128-row tile pads M to 128."""
    layers = _layers(half, count, seed, lambda n, k: dtype == "bf16" or n % 16 == 0)
    return [(m, n, k) for n, k in layers for m in tokens]


def _transposed(consumers: int, dtype: str = "bf16"):
    """Rule 0's transposed path on `consumers` warpgroups of weights by the
    tokens rounded up to 16 (at least 16): a function of (M, N, K)."""
    from nvwgmma.kernel.gemm.selector import decode_config

    return lambda m, n, k: decode_config(m, n, k, dtype=dtype, out_dtype="bf16",
                                         consumers=consumers, tokens=max(16, -(-m // 16) * 16))  # fmt: skip


def _ragged_variants(dtype: str = "bf16") -> list:
    """The pick against the transposed path with the tokens, rounded up to
    16, on wgmma's N: 128 rows of weights (two consumers) or 64 (one); and
    what rule 0 left to the other rules before its third case."""
    from nvwgmma.kernel.gemm import selector

    types = dict(dtype=dtype, out_dtype="bf16")

    def without_third_case(m, n, k):
        ragged, selector.DECODE_RAGGED_M = selector.DECODE_RAGGED_M, selector.DECODE_WIDE_M
        try:
            return selector.select_config(m, n, k, **types)
        finally:
            selector.DECODE_RAGGED_M = ragged

    return [
        ("the pick", lambda m, n, k: selector.select_config(m, n, k, **types)),
        ("transposed 128 x M/16", _transposed(2, dtype)),
        ("transposed 64 x M/16", _transposed(1, dtype)),
        ("without rule 0's third case", without_third_case),
    ]


def _m777_variants() -> list:
    """At a ragged M of 777 (7 rows of 128-row tiles, the last 7 % full;
    13 of 64): the pick against each data-parallel tile, the ping-pong,
    stream-K and a 2 x 1 cluster of 128 x 256 (not yet a rule: data for
    one)."""
    from nvwgmma.kernel.gemm.selector import _base, select_config, with_tile

    base = _base("bf16", "bf16", "K", "K", (), True)
    return [
        ("the pick", select_config),
        ("128 x 256", with_tile(base, 256)),
        ("128 x 224", with_tile(base, 224)),
        ("128 x 192", with_tile(base, 192)),
        ("ping-pong 64 x 256", with_tile(base, 256, schedule="pingpong")),
        ("128 x 256 stream-K", with_tile(base, 256, scheduler="stream_k")),
        ("128 x 256, 2 x 1 cluster", replace(with_tile(base, 256), cluster_m=2)),
    ]


def _transposed_store_variants() -> list:
    """Rule 0's tiles with C stored through stmatrix.trans and TMA (the
    pick) against the same tiles storing C from registers element by
    element (what they did before), and the transposed tiles of one and
    two consumers at the tokens rounded up to 16."""
    from nvwgmma.kernel.gemm.selector import select_config, with_tile

    def from_registers(m, n, k):
        c = select_config(m, n, k)
        if not c.store_transposed:
            return None
        return with_tile(replace(c, epilogue="registers"), c.tile_n, max_stages=16)

    return [
        ("the pick", select_config),
        ("the pick, C from registers", from_registers),
        ("transposed 64 x M/16", _transposed(1)),
        ("transposed 128 x M/16", _transposed(2)),
    ]


def _ragged_wide_variants() -> list:
    """Ragged M from 128 tokens up: the pick against the transposed
    problem on two-consumer tiles of 128 rows of weights by the token width
    that packs M tightest (777 in 5 x 160), by 256 and by 128, C through
    stmatrix.trans and TMA (data for a rule)."""
    from nvwgmma.kernel.gemm.selector import _base, packed_tokens, select_config, with_tile

    base = replace(_base("bf16", "bf16", "K", "K", (), True), store_transposed=True)
    return [
        ("the pick", select_config),
        ("transposed 128 x packed", lambda m, n, k: with_tile(base, packed_tokens(m))),
        ("transposed 128 x 256", with_tile(base, 256)),
        ("transposed 128 x 128", with_tile(base, 128)),
        ("128 x 128", with_tile(_base("bf16", "bf16", "K", "K", (), True), 128)),
    ]


def _rows256_tile(tokens=None, **changes):
    """The transposed problem on 256 rows of weights (two consumers of 128
    rows, cuBLAS's 128 x 272 turned over: as many tile elements in one
    wgmma N block each) by `tokens`, or by rule 3d's width: a function of
    (M, N, K)."""
    from nvwgmma.kernel.gemm.selector import TRANSPOSED_WIDE_TOKENS, _base, filling_wide_tile

    base = replace(_base("bf16", "bf16", "K", "K", (), True), store_transposed=True, **changes)
    widths = [tokens] if tokens else TRANSPOSED_WIDE_TOKENS
    return lambda m, n, k: filling_wide_tile(base, m, n, 1, 132, widths)


def _rows256_variants() -> list:
    """Ragged M past 128 tokens: the pick against the transposed 256-row
    tiles (TMA store, the same with split wait, C from registers with a
    fourth stage, and 256 x 128), rule 3c's 128-row tile and the
    ping-pong 64 x 256 (data for a rule)."""
    from nvwgmma.kernel.gemm.selector import (
        SPLIT_WAIT,
        _base,
        select_config,
        transposed_tile,
        with_tile,
    )

    base = _base("bf16", "bf16", "K", "K", (), True)
    return [
        ("the pick", select_config),
        ("transposed 256 x filling", _rows256_tile()),
        ("transposed 256 x filling, split wait", _rows256_tile(**SPLIT_WAIT)),
        ("transposed 256 x filling, C from registers", _rows256_tile(epilogue="registers")),
        ("transposed 256 x 128", _rows256_tile(128)),
        ("transposed 128 x packed (rule 3c)", lambda m, n, k: transposed_tile(m, base)),
        ("ping-pong 64 x 256", with_tile(base, 256, schedule="pingpong")),
    ]


def _waves_shapes(half: str, tokens, seed: int, count: int, better: bool = True) -> list:
    """`count` of `half`'s layers (seeded) where rule 0's unsplit 128-row
    tiles make more than a wave and 64-row tiles fill the last one at
    least 0.05 better (`better`; else less than that), at every M of
    `tokens`."""
    from nvwgmma.kernel.gemm.selector import _last_wave, _units, decode_config, select_config

    def keep(n, k):
        rows128 = decode_config(16, n, k, consumers=2)  # rule 0's 128 rows
        rows64 = decode_config(16, n, k, consumers=1)
        return (select_config(16, n, k).store_transposed and rows128.scheduler == "persistent"
                and _units(rows128, n, 16, 1) > 132
                and (_last_wave(rows64, n, 16, 1, 132) >= _last_wave(rows128, n, 16, 1, 132) + 0.05)
                == better)  # fmt: skip

    return [(m, n, k) for n, k in _layers(half, count, seed, keep) for m in tokens]


def _decode_waves_variants() -> list:
    """Rule 0's 128-row tile against 64 rows where its unsplit units make
    more than a wave (a finer last wave)."""
    from nvwgmma.kernel.gemm.selector import decode_config, select_config

    return [
        ("the pick", select_config),
        ("64 rows of weights", lambda m, n, k: decode_config(m, n, k, consumers=1)),
    ]


def _decode_128(m, n, k):
    from nvwgmma.kernel.gemm.selector import decode_config

    return decode_config(m, n, k, consumers=2)


def _heldout_3d_variants() -> list:
    from nvwgmma.kernel.gemm import selector

    def before_3d(m, n, k):
        """What select_config picked before rule 3d."""
        wide, selector.wide_transposed_tile = selector.wide_transposed_tile, lambda *a: None
        try:
            return selector.select_config(m, n, k)
        finally:
            selector.wide_transposed_tile = wide

    return [("the pick", selector.select_config), ("before rule 3d", before_3d)]


def _moved(shapes, variants) -> list:
    """The shapes where the first two variants pick different kernels."""
    (_, pick), (_, before) = variants[:2]
    return [shape for shape in shapes if pick(*shape) != before(*shape)]


def _heldout_3c_variants() -> list:
    from nvwgmma.kernel.gemm.selector import select_config

    return [("the pick", select_config), ("before rule 3c", _before_3c)]


def _before_3c(m, n, k):
    """What select_config picked before rule 3c: the cost model's tile
    where rule 3c now transposes the problem."""
    from nvwgmma.kernel.gemm.selector import _base, _modelled, select_config

    c = select_config(m, n, k)
    if m > 128 and c.store_transposed:
        return _modelled(_base("bf16", "bf16", "K", "K", (), True), m, n, 1, 132)
    return c


def _decode_next_variants() -> list:
    """Rule 0's 128 x 16 tile against larger weight tiles by 16 tokens
    (cuBLAS streams 256 x 8 in 6 stages) and the tokens multicast to a 2 x 1
    cluster (data-parallel picks only: a cluster takes no split)."""
    from nvwgmma.kernel.gemm.selector import (
        _split_to_a_wave,
        decode_config,
        select_config,
        with_tile,
    )

    def pick(m, n, k):
        return select_config(m, n, k) if m <= 16 else None

    def rows256(m, n, k):  # decode_config's tile on 128-row consumers, split again
        if m > 16:
            return None
        c = replace(decode_config(m, n, k), scheduler="persistent", splits=1)
        c = with_tile(c, 16, max_stages=16, consumer_rows=128, consumers=2)
        return _split_to_a_wave(c, n, m, k, 1, 132) or c

    def clustered(make):
        def made(m, n, k):
            c = make(m, n, k)
            return replace(c, cluster_m=2) if c and c.scheduler == "persistent" else None

        return made

    return [
        ("the pick (128 x 16)", pick),
        ("256 x 16, two consumers of 128 rows", rows256),
        (
            "192 x 16, three consumers",
            lambda m, n, k: decode_config(m, n, k, consumers=3) if m <= 16 else None,
        ),
        ("128 x 16, 2 x 1 cluster", clustered(pick)),
        ("256 x 16, 2 x 1 cluster", clustered(rows256)),
    ]


def _decode_fp8_variants() -> list:
    """Rule 0's tiles on e4m3 inputs (bf16 out): the pick, 64 x 32 (one
    consumer) and 128 x 32 (two)."""
    from nvwgmma.kernel.gemm.selector import decode_config, select_config

    fp8 = dict(dtype="e4m3", out_dtype="bf16")
    return [
        ("the pick", lambda m, n, k: select_config(m, n, k, **fp8)),
        (
            "1 consumer, 64 x 32 tokens",
            lambda m, n, k: decode_config(m, n, k, consumers=1, tokens=32, **fp8),
        ),
        (
            "2 consumers, 128 x 32 tokens",
            lambda m, n, k: decode_config(m, n, k, consumers=2, tokens=32, **fp8),
        ),
    ]


def _pdl_variants() -> list:
    """Rule 0's pick launched plainly and as a programmatic dependent
    launch, back to back and after a copy into the activations (a kernel
    the GEMM depends on, as a norm before it). (The trigger points and the
    L2 prefetch tried beside these: results/h200/...-2007-gemm-pdl-trigger.json.)"""
    from nvwgmma.kernel.gemm.selector import select_config

    return [
        ("pick, plain launch", select_config, {"plain": True}),
        ("pick, PDL", select_config),
        ("after a copy: plain launch", select_config, {"plain": True, "after_copy": True}),
        ("after a copy: PDL", select_config, {"after_copy": True}),
    ]


def _inflight_variants(dtype: str = "bf16") -> list:
    """Rule 0's transposed tiles releasing each stage when its wgmmas are
    done, and one iteration later (the next stage's wgmmas issued before
    the wait), with the stage's wgmmas in one group or two (split wait)."""
    from nvwgmma.kernel.gemm.selector import select_config

    def pick(m, n, k):
        return select_config(m, n, k, dtype=dtype, out_dtype="bf16")

    def released(inflight, **fields):
        def make(m, n, k):
            c = pick(m, n, k)
            return replace(c, inflight=inflight, **fields) if c.store_transposed else None

        return make

    return [("pick", pick), ("inflight 0", released(0, split_wait=False)),
            ("inflight 1", released(1, split_wait=False)),
            ("inflight 1, split wait", released(1, split_wait=True))]  # fmt: skip


def _fill_shapes(half: str, tokens, count: int, seed: int) -> list:
    """`count` (N, K) layers of `half` whose rule 0 units (as split before
    the fill rule) fill under 0.9 of their waves at 16 tokens, at each of
    `tokens`."""
    from nvwgmma.kernel.gemm.selector import _last_wave, _split_to_a_wave, decode_config

    def underfilled(n, k):
        tile = replace(decode_config(16, n, k, consumers=2), scheduler="persistent", splits=1)
        return _last_wave(_split_to_a_wave(tile, n, 16, k, 1, 132) or tile, n, 16, 1, 132) < 0.9

    return [(m, n, k) for m in tokens for n, k in _layers(half, count, seed, underfilled)]


def _split_to_fill(config, m, n, k, batch, sms, slack):
    """`config` with K split into the fewest parts whose units fill the
    SMs' waves within `slack` of the best any part count reaches (each part
    at least MIN_PART_STAGES stages); None where that is one part. (Tried
    for rule 0 and not kept: results/h200/2026-11-28-2013-gemm-decode-fill.json.)"""
    from nvwgmma.kernel.gemm.selector import MIN_PART_STAGES, _tiles, unit_fill

    tiles = _tiles(config, m, n, batch)
    most = max(1, -(-k // config.k_tile) // MIN_PART_STAGES)

    def fill(parts):
        return unit_fill(tiles * parts, sms)

    best = max(fill(parts) for parts in range(1, most + 1))
    splits = min(parts for parts in range(1, most + 1) if fill(parts) >= best - slack)
    return replace(config, scheduler="split_k", splits=splits) if splits >= 2 else None


def _fill_variants() -> list:
    """Rule 0's K split to a wave against the split filling the waves
    (the fewest parts within 0.03 of the best fill, and the best)."""
    from nvwgmma.kernel.gemm.selector import _split_to_a_wave, decode_config, decode_tile

    def tile(m, n, k):  # rule 0's tile as it was (its consumers named: no 64-row split)
        c = decode_config(m, n, k, consumers=decode_tile(m)[0])
        return replace(c, scheduler="persistent", splits=1)

    def to_a_wave(m, n, k):
        return _split_to_a_wave(tile(m, n, k), n, m, k, 1, 132) or tile(m, n, k)

    def filled(slack):
        return lambda m, n, k: (
            _split_to_fill(tile(m, n, k), n, m, k, 1, 132, slack) or tile(m, n, k)
        )

    return [("split to a wave (rule 0 before)", to_a_wave), ("fill, slack 0.03", filled(0.03)),
            ("fill, slack 0", filled(0.0))]  # fmt: skip


def _streamk_variants() -> list:
    """Rule 0's pick against its tile on stream-K (every SM the same share
    of the weights' K stages) and, at 16 tokens, on one consumer (64 weight
    rows: twice the tiles), split to a wave."""
    from nvwgmma.kernel.gemm.selector import decode_config, select_config

    def streamed(m, n, k):
        return replace(select_config(m, n, k), scheduler="stream_k", splits=1)

    def one_consumer(m, n, k):
        return decode_config(m, n, k, consumers=1) if m <= 16 else None

    return [
        ("pick", select_config),
        ("stream-K", streamed),
        ("64 rows, split to a wave", one_consumer),
    ]


def _split_rows_shapes(dtype: str, count: int, seed: int) -> list:
    """`count` (N, K) layers of the tuned half where rule 0's 128-row
    tiles split K at 16 tokens (whole 16-byte rows for fp8), at 1, 8 and
    16 tokens."""
    from nvwgmma.kernel.gemm.selector import decode_config

    def splits(n, k):
        return decode_config(16, n, k, consumers=2).splits > 1 and (
            dtype == "bf16" or (n % 16 == 0 and k % 16 == 0)
        )

    return [(m, n, k) for m in (1, 8, 16) for n, k in _layers("tuned", count, seed, splits)]


def _split_rows_variants(dtype: str) -> list:
    """Rule 0's 128-row tile split to a wave against the pick (64 rows
    there, DECODE_SPLIT_ROWS)."""
    from nvwgmma.kernel.gemm.selector import decode_config, select_config

    return [("128 rows, split (rule 0 before)",
             lambda m, n, k: decode_config(m, n, k, dtype=dtype, consumers=2)),
            ("pick", lambda m, n, k: select_config(m, n, k, dtype=dtype, out_dtype="bf16"))]  # fmt: skip


# Rule 0's tuning shapes (shapes.py "decode": Llama-3-8B) at 1, 16 and 64
# tokens, and the tuned half's decode layers at 8.
PDL = [(m, n, k) for m in (1, 16, 64)
       for n, k in ((6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336))] + [
       (8, n, k) for n, k in DECODE_LAYERS]  # fmt: skip


def experiments() -> dict:
    """name -> (shapes, [(label, GemmConfig, or a function of (M, N, K) to
    one or None)][, input dtype: bf16 unless given])."""
    from nvwgmma.kernel.gemm import GemmConfig
    from nvwgmma.kernel.gemm.selector import _base, with_tile

    base = _base("bf16", "bf16", "K", "K", (), True)
    narrow = with_tile(base, 128)
    # One warpgroup per 128 rows: two m64 wgmmas per K step on the same B.
    rows = dict(consumer_rows=128)
    split = dict(consumer_rows=128, inflight=1, split_wait=True)
    one = dict(consumers=1, **split)
    return {
        # 128 x 128 tiles where they are one wave (O and down at M = 512).
        "rows128": (
            M512,
            [
                ("128x128 s6, 2 consumers (chosen)", narrow),
                ("128x128, 1 consumer of 128 rows", with_tile(base, 128, consumers=1, **rows)),
                ("  + wait_group 1", with_tile(base, 128, consumers=1, inflight=1, **rows)),
                ("  + split wait", with_tile(base, 128, consumers=1, **split)),
                (
                    "  + split wait, 2x1 cluster",
                    with_tile(base, 128, consumers=1, cluster_m=2, **split),
                ),  # fmt: skip
                (
                    "ping-pong 128x128, split wait",
                    with_tile(base, 128, schedule="pingpong", **split),
                ),
            ],
        ),
        # The wide tile against 128-row consumers at large shapes.
        "large": (
            LARGE,
            [
                ("128x256 s3 (chosen)", with_tile(base, 256)),
                ("256x128, 2 consumers of 128 rows, split wait", with_tile(base, 128, **split)),
                (
                    "ping-pong 128x128, split wait",
                    with_tile(base, 128, schedule="pingpong", **split),
                ),
            ],
        ),
        # Tiles whose width is no multiple of 64 (C staged in 64-byte swizzled
        # blocks): 28672 = 128 x 224, so 128 x 224 tiles fill whole waves
        # where 128 x 256 leave 15 % of the SMs idle in the last.
        "tile224": (
            GATE_UP,
            [
                ("128x256 s3 (chosen at M = 512)", with_tile(base, 256)),
                ("1 consumer of 128 rows (chosen at M = 128)", with_tile(base, 128, **one)),
                ("128x224 s3", with_tile(base, 224)),
                ("128x224 s3, split wait", with_tile(base, 224, inflight=1, split_wait=True)),
            ],
        ),
        # Correctness of widths that are no multiple of 64, on ragged shapes.
        "narrow_n_ragged": (
            RAGGED,
            [
                ("128x224 s3", GemmConfig(tile_n=224)),
                (
                    "128x224 f32 out, 2 chunks",
                    GemmConfig(tile_n=224, out_dtype="f32", epilogue_chunks=2),
                ),
                (
                    "128x160 s4 split-K 2",
                    GemmConfig(tile_n=160, stages=4, scheduler="split_k", splits=2),
                ),
                ("64x96 s8, 1 consumer", GemmConfig(tile_n=96, consumers=1, stages=8)),
                ("128x224 stream-K", GemmConfig(tile_n=224, scheduler="stream_k")),
            ],
        ),
        # Correctness of every 128-row schedule and fix-up on ragged shapes.
        "ragged": (
            RAGGED,
            [
                ("1 consumer of 128 rows", GemmConfig(tile_n=128, consumers=1, stages=6, **rows)),
                (
                    "  split-K 3",
                    GemmConfig(
                        tile_n=128, consumers=1, stages=6, scheduler="split_k", splits=3, **rows
                    ),
                ),  # fmt: skip
                (
                    "256x128 stream-K",
                    GemmConfig(tile_n=128, stages=4, scheduler="stream_k", **rows),
                ),
                (
                    "256x128 split-K 2, split wait",
                    GemmConfig(tile_n=128, stages=4, scheduler="split_k", splits=2, **split),
                ),  # fmt: skip
                (
                    "ping-pong stream-K, split wait",
                    GemmConfig(
                        tile_n=128, stages=6, schedule="pingpong", scheduler="stream_k", **split
                    ),
                ),  # fmt: skip
                (
                    "1 consumer, registers epilogue",
                    GemmConfig(tile_n=128, consumers=1, stages=6, epilogue="registers", **rows),
                ),  # fmt: skip
                (
                    "1 consumer, 2x1 cluster, split wait",
                    GemmConfig(tile_n=128, consumers=1, stages=6, cluster_m=2, **split),
                ),  # fmt: skip
                ("64x128 s8 (rule 4)", GemmConfig(tile_n=128, consumers=1, stages=8)),
            ],
        ),
        # Rule 0's weight streaming at M <= 16 on the H200 (bf16).
        "decode": (DECODE, _decode_variants()),
        "decode-wide": (DECODE_WIDE, _decode_wide_variants()),
        "decode-fp8": (DECODE_FP8, _decode_fp8_variants(), "e4m3"),
        # Rule 0's next step at M <= 16 (timed, not kept).
        "decode-next": (DECODE + DECODE_WIDE[:7], _decode_next_variants()),
        "m64": (M64, _m64_variants("bf16")),
        "m64-fp8": (M64, _m64_variants("e4m3"), "e4m3"),
        # 65-127 tokens: tuned on the tuned half at 77, 96 and 112 tokens;
        # held out: the other models at 77, 90 and 120.
        "m65": (_ragged_shapes("tuned", (77, 96, 112), 10, 65), _ragged_variants()),
        "m65-heldout": (_ragged_shapes("held-out", (77, 90, 120), 12, 66), _ragged_variants()),
        "m65-fp8": (
            _ragged_shapes("tuned", (77, 96, 112), 10, 65, "e4m3"),
            _ragged_variants("e4m3"),
            "e4m3",
        ),
        "m65-heldout-fp8": (
            _ragged_shapes("held-out", (77, 90, 120), 12, 66, "e4m3"),
            _ragged_variants("e4m3"),
            "e4m3",
        ),
        # Ragged M = 777 on the tuned half (data for a rule, none yet).
        "m777": (_ragged_shapes("tuned", (777,), 12, 77), _m777_variants()),
        # Rule 0's transposed C through stmatrix.trans and TMA, on the tuned
        # half: at 77-112 tokens, 48 and 64, and decode.
        "transposed-store": (
            _ragged_shapes("tuned", (77, 96, 112), 10, 65) + M64[::2] + DECODE[::2],
            _transposed_store_variants(),
        ),
        # Ragged M past 128 on the tuned half: the transposed problem's
        # tiles packing the tokens (data for a rule).
        "ragged-wide": (
            _ragged_shapes("tuned", (300, 530, 777), 8, 78),
            _ragged_wide_variants(),
        ),
        # Ragged M past 128 on the tuned half: 256-row transposed tiles
        # (data for a rule).
        "rows256": (_ragged_shapes("tuned", (530, 777, 1300), 10, 93), _rows256_variants()),
        "rows256-whole": (
            _ragged_shapes("tuned", (256, 512, 1024, 2048, 4096), 8, 94),
            _rows256_variants()[:3],
        ),
        # Rule 0 at M <= 16 where 128-row units make more than a wave:
        # 64-row ones fill the last wave better (tuned half; data for a rule).
        "decode-waves": (_waves_shapes("tuned", (1, 8, 16), 96, 10), _decode_waves_variants()),
        # Held out: the rule it gave, on the other models' such layers.
        "decode-waves-heldout": (
            _waves_shapes("held-out", (1, 8, 16), 98, 10),
            [_decode_waves_variants()[0], ("128 rows (before)", _decode_128)],
        ),  # fmt: skip
        "decode-waves-level": (
            _waves_shapes("tuned", (1, 16), 97, 10, better=False),
            _decode_waves_variants(),
        ),
        # Held out: rule 3d judged on the other models at ragged M and whole.
        "rows256-heldout": (
            _moved(
                _ragged_shapes("held-out", (250, 450, 650, 777, 1300, 1024, 2048), 8, 95),
                _heldout_3d_variants(),
            ),
            _heldout_3d_variants(),
        ),  # fmt: skip
        # Held out: rule 3c judged on the other models at other ragged M.
        "ragged-wide-heldout": (
            _ragged_shapes("held-out", (250, 450, 650, 777, 1300), 8, 79),
            _heldout_3c_variants(),
        ),
        # Programmatic dependent launch and the L2 prefetch before its
        # wait, on the tuned half's decode shapes.
        "pdl": (PDL, _pdl_variants()),
        # Rule 0's tiles with a stage's wgmmas left in flight, tuned shapes.
        "decode-inflight": (PDL, _inflight_variants()),
        "decode-inflight-fp8": (PDL, _inflight_variants("e4m3"), "e4m3"),
        # Rule 0's K split filling the waves, on the tuned half's layers
        # whose units filled under 0.9 of them.
        "decode-fill": (_fill_shapes("tuned", (4, 16, 32, 64), 7, 90), _fill_variants()),
        "decode-split-rows": (_split_rows_shapes("bf16", 8, 91), _split_rows_variants("bf16")),
        "decode-split-rows-fp8": (
            _split_rows_shapes("e4m3", 8, 92),
            _split_rows_variants("e4m3"),
            "e4m3",
        ),  # fmt: skip
        "decode-streamk": (
            _fill_shapes("tuned", (1, 16, 64), 7, 90)
            + [(16, n, k) for n, k in ((6144, 4096), (4096, 14336))],
            _streamk_variants(),
        ),  # fmt: skip
        # Held out: judged once rule 0's second case was fixed.
        "m64-heldout": (_m64_heldout("bf16"), _m64_heldout_variants("bf16")),
        "m64-heldout-fp8": (_m64_heldout("e4m3"), _m64_heldout_variants("e4m3"), "e4m3"),
    }


@contextlib.contextmanager
def _launches(plain: bool):
    """Launches prepared inside are plain (NVWGMMA_PDL=0) or not."""
    before = os.environ.get("NVWGMMA_PDL")
    os.environ["NVWGMMA_PDL"] = "0" if plain else "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["NVWGMMA_PDL"]
        else:
            os.environ["NVWGMMA_PDL"] = before


def _after_copy(a, source, launch):
    """`launch` after a copy of `source` into its activations `a`: a kernel
    it depends on, just before it in the stream."""

    def run():
        a.copy_(source)
        launch()

    return run


def generate(out_dir: str, name: str) -> None:
    from nvwgmma.kernel.gemm.launch import kernel_key, write_kernel

    shapes, kernels, *dtype = experiments()[name]
    plan = {"experiment": name, "shapes": shapes, "dtype": (dtype or ["bf16"])[0], "kernels": []}
    for label, config, *options in kernels:
        keys = []
        for shape in shapes:
            c = config(*shape) if callable(config) else config
            if c is not None:
                write_kernel(os.path.join(out_dir, "ptx"), c)
            keys.append(None if c is None else kernel_key(c))
        plan["kernels"].append({"label": label, "keys": keys, **(options or [{}])[0]})
    with open(os.path.join(out_dir, "plan.json"), "w") as f:
        json.dump(plan, f, indent=1)
    print(name, len(shapes), "shapes,", len(kernels), "kernels")


def run(out_dir: str, rounds: int) -> int:
    import torch
    from run import _gpu_info, _interleaved, failures, write_results
    from shapes import PEAK_BANDWIDTH, _config_of, bound, launched, problem

    torch.backends.cuda.matmul.allow_tf32 = False
    info = _gpu_info()
    print(info, flush=True)
    plan = json.load(open(os.path.join(out_dir, "plan.json")))
    peak = next((v for key, v in PEAK_BANDWIDTH.items() if key in info["gpu"]), None)
    rows, failed = [], 0
    fp8 = plan.get("dtype") == "e4m3"
    base = "torch._scaled_mm" if fp8 else "torch.matmul"
    one = torch.ones((), device="cuda")
    for i, (m, n, k) in enumerate(plan["shapes"]):
        a, w, check = problem(m, n, k, fp8=fp8)
        impls = {base: (lambda a=a, w=w: torch._scaled_mm(a, w.T, scale_a=one, scale_b=one,
                                                          out_dtype=torch.bfloat16))
                 if fp8 else (lambda a=a, w=w: torch.matmul(a, w.T))}  # fmt: skip
        source = a.clone()
        if any(kernel.get("after_copy") for kernel in plan["kernels"]):
            impls[base + " after a copy"] = _after_copy(a, source, impls[base])
        checks = {}
        for kernel in plan["kernels"]:
            if kernel["keys"][i] is None:  # the variant does not apply here
                continue
            meta = json.load(open(os.path.join(out_dir, "ptx", kernel["keys"][i] + ".json")))
            with _launches(plain=kernel.get("plain", False)):
                launch, error, same = launched(a, w, _config_of(meta), check, rerun=True)
            if kernel.get("after_copy"):  # checked again, reading what the copy wrote
                out, launch = launch.out, _after_copy(a, source, launch)
                out.fill_(float("nan"))
                launch()
                error = max(error, check(out))
            ok = error <= bound(k, meta["config"]["out_dtype"]) and same
            failed += not ok
            checks[kernel["label"]] = {"error": error, "rerun_identical": same, "ok": ok}
            impls[kernel["label"]] = launch
        ms, per = _interleaved(impls, rounds=rounds)
        print(f"{m}x{n}x{k}: {base} {ms[base] * 1e3:.1f} us", flush=True)
        for label, r in checks.items():
            # As shapes.py: the median of each round's paired ratio.
            paired = base + " after a copy" if label.startswith("after a copy") else base
            ratio = statistics.median(t / o for o, t in zip(per[label], per[paired]))
            r.update(us=ms[label] * 1e3, ratio=ratio)
            if peak and not fp8:  # the bytes of A, B and C over the time, 16-bit
                r["hbm"] = (m * k + n * k + m * n) * 2 / (r["us"] * 1e-6) / peak
            print(f"  {'ok ' if r['ok'] else 'BAD'} {label:48s} {r['us']:8.1f} us  {ratio:.3f}x"
                  + (f"  hbm {r['hbm']:.2f}" if "hbm" in r else ""), flush=True)  # fmt: skip
        rows.append({"shape": [m, n, k], "baseline": base, "torch_us": ms[base] * 1e3,
                     "kernels": checks})  # fmt: skip
        write_results(out_dir, "variants-results.json",
                      {"info": info, "experiment": plan["experiment"], "rows": rows})  # fmt: skip
    return failures(failed)


def main(argv=None) -> int:
    from run import mode_parser

    parser = mode_parser(__doc__)
    parser.add_argument("--set", default="rows128", help="generate: the experiment")
    parser.add_argument("--rounds", type=int, default=3, help="run: timing rounds")
    args = parser.parse_args(argv)
    if args.mode == "generate":
        generate(args.dir, args.set)
        return 0
    from shapes import use_kernels

    use_kernels(args.dir)
    return run(args.dir, args.rounds)


if __name__ == "__main__":
    sys.exit(main())
