"""select_config: what it picks for the shapes models run, and that every
configuration it can return builds, passes the strict protocol check and
assembles without spills."""

import functools
import itertools
from dataclasses import replace

import pytest

LLAMA = {"QKV": (6144, 4096), "O": (4096, 4096), "gate/up": (28672, 4096), "down": (4096, 14336)}


def _pick(m, name, **kw):
    from nvwgmma.kernel.gemm import select_config

    n, k = LLAMA[name]
    c = select_config(m, n, k, **kw)
    return (c.tile_m, c.tile_n, c.stages, c.scheduler, c.splits)


@pytest.mark.parametrize(
    "m, name, expected",
    [
        # A full wave of 128 x 256 tiles: the wide tile.
        (2048, "QKV", (128, 256, 3, "persistent", 1)),
        (8192, "down", (128, 256, 3, "persistent", 1)),
        (2048, "gate/up", (128, 256, 3, "persistent", 1)),
        # 28672 = 128 x 224: 128 x 224 tiles fill their waves (97 %) where
        # 128 x 256 (rule 1 at M = 512) and 128 x 128 (rule 3 at M = 128) fill 85 %.
        (512, "gate/up", (128, 224, 3, "persistent", 1)),
        (128, "gate/up", (128, 224, 3, "persistent", 1)),
        # 128 x 192 tiles fill one wave (4 x 32 = 128 of 132 SMs).
        (512, "QKV", (128, 192, 4, "persistent", 1)),
        # Half a wave of 128 x 128 tiles: the narrow one, 6 stages.
        (512, "O", (128, 128, 6, "persistent", 1)),
        (512, "down", (128, 128, 6, "persistent", 1)),
        # Fewer: 64-row tiles, 64 x 64 (13 stages) where those make at most
        # a wave (2 x 64 = 128), else 64 x 128 (8 stages: 96 tiles), split-K
        # to about a wave of parts (here one: no split).
        (128, "QKV", (64, 128, 8, "persistent", 1)),
        (128, "O", (64, 64, 13, "persistent", 1)),
        (128, "down", (64, 64, 13, "persistent", 1)),
    ],
)
def test_select_config_on_llama_projections(m, name, expected):
    assert _pick(m, name) == expected


def test_rule_3_runs_one_warpgroup_per_tile():
    """128 x 128 tiles: one consumer warpgroup computes all 128 rows and
    waits for the previous stage between its two 64-row blocks; the
    two-consumer 128 x 128 stays among the candidates."""
    from nvwgmma.kernel.gemm import candidates, select_config

    for dtype in ("bf16", "e4m3"):
        c = select_config(512, 4096, 4096, dtype=dtype)
        assert (c.tile_m, c.consumers, c.consumer_rows, c.inflight, c.split_wait) == (
            128, 1, 128, 1, True)  # fmt: skip
        two = [x for x in candidates(512, 4096, 4096, dtype=dtype) if x.tile_n == 128]
        assert any(x.consumers == 2 and x.consumer_rows == 64 for x in two)
    # Other rules keep 64-row consumers.
    assert select_config(4096, 4096, 4096).consumer_rows == 64
    assert select_config(128, 4096, 4096).consumer_rows == 64


def test_rule_4_splits_each_stage_in_two_groups():
    """64 x 128 tiles: each stage's K steps in two wgmma groups, the previous
    stage waited for between them; the kernel without it stays a candidate."""
    from nvwgmma.kernel.gemm import candidates, select_config

    for m, n, k in ((128, 6144, 4096), (128, 4096, 14336)):
        c = select_config(m, n, k)
        assert (c.tile_m, c.consumers, c.inflight, c.split_wait) == (64, 1, 1, True)
        assert any(x.tile_m == 64 and not x.split_wait for x in candidates(m, n, k))
    assert not select_config(4096, 4096, 4096).split_wait


def test_the_224_tile_where_it_fills_waves_better():
    from nvwgmma.kernel.gemm import GemmConfig, select_config
    from nvwgmma.kernel.gemm.selector import wave_fill

    # 512 x 28672: 4 x 112 = 448 wide tiles in 4 waves of 132 (84.8 %);
    # 4 x 128 = 512 tiles of 128 x 224 in 4 waves (97.0 %).
    assert round(wave_fill(GemmConfig(), 512, 28672, 1, 132), 3) == 0.848
    assert round(wave_fill(GemmConfig(tile_n=224), 512, 28672, 1, 132), 3) == 0.970
    # Two SMs fewer: 512 tiles take 4 waves of 130 (98.5 %), 448 take 4 (86.2 %).
    assert select_config(512, 28672, 4096, sms=130).tile_n == 224
    # 1000 x 14336: 224 fills 94.7 % against the wide tile's 82.9 % (the
    # cost model, fp8's rates as 16-bit's) -- where rule 3d does not
    # transpose it onto 256 x 144 (56 x 7 = 392 tiles, 98.8 % of 3 waves).
    assert select_config(1000, 14336, 4096, a_major="M").tile_n == 224
    assert select_config(1000, 14336, 4096).tile_n == 144
    assert select_config(1000, 14336, 4096, dtype="e4m3").tile_n == 224
    # 2048 x 28672: both fill 97.0 %: the wide tile's higher rate wins.
    assert select_config(2048, 28672, 4096).tile_n == 256
    # Rule 2 (one wave of 128 x 192) is not second-guessed.
    assert select_config(512, 6144, 4096).tile_n == 192
    # The wave tile keeps the problem's epilogue: f32 C in two chunks of
    # 112 columns (64-byte staging blocks), fp8 inputs.
    c = select_config(512, 28672, 4096, out_dtype="f32")
    assert (c.tile_n, c.epilogue, c.epilogue_chunks) == (224, "tma", 2)
    assert select_config(512, 28672, 4096, dtype="e4m3").tile_n == 224


def test_split_k_keeps_parts_long():
    from nvwgmma.kernel.gemm import select_config

    # 7 x 7 x 64: one K stage, nothing to split.
    assert select_config(7, 7, 64).scheduler == "persistent"
    # Rule 4 (a column-major A: rule 0 takes row-major ones at M <= 32).
    # 64 x 2048 x 1024: 32 tiles of 64 x 64 ask for 4 parts; 16 K stages
    # allow 4 of 4.
    c = select_config(64, 2048, 1024, a_major="M")
    assert (c.tile_m, c.tile_n, c.scheduler, c.splits) == (64, 64, "split_k", 4)
    # 64 x 2048 x 512: 8 stages allow only 2 of 4.
    c = select_config(64, 2048, 512, a_major="M")
    assert (c.scheduler, c.splits) == ("split_k", 2)
    # 64 x 2048 x 448: 7 stages, one part of 4: no split.
    assert select_config(64, 2048, 448, a_major="M").scheduler == "persistent"


def test_rule_4_takes_m_64_up_to_a_wave_of_128_row_tiles():
    """At M <= 64 a 128-row tile is half padding: rule 4's 64-row tiles up
    to a whole wave of 128 x 128 tiles (80 for N = 10240, 126 for N =
    16032), the cost model from there (448 for N = 57344); above 64 rows
    rule 4 stops at half a wave."""
    from nvwgmma.kernel.gemm import select_config

    for n, dtype in ((10240, "bf16"), (13824, "bf16"), (16032, "e4m3")):
        c = select_config(64, n, 8192, dtype=dtype, a_major="K")
        assert (c.tile_m, c.tile_n, c.consumers, c.split_wait) == (64, 128, 1, True), n
    assert select_config(64, 57344, 8192).tile_m == 64  # the model's ping-pong tile
    assert select_config(64, 57344, 8192).schedule == "pingpong"
    assert select_config(128, 10240, 8192).tile_m == 128  # 80 tiles: half a wave


def test_rule_3b_takes_the_width_with_the_most_wave_fill_times_its_rate():
    """Under a wave of 128 x 128 tiles (128-row tiles at least 0.9 full),
    rule 3's consumer on the width among 128, 112, 96 and 80 with the most
    wave fill x NARROW_RATES."""
    from nvwgmma.kernel.gemm import candidates, select_config
    from nvwgmma.kernel.gemm.selector import NARROW_RATES

    assert list(NARROW_RATES) == [128, 112, 96, 80]  # ties go to the wider tile
    for dtype in ("bf16", "e4m3"):
        # 256 x 5120: 80 tiles of 128 x 128 (0.61 of 132 SMs), 2 x 64 = 128
        # of 128 x 80 (0.97): 0.97 x 0.76 = 0.74 against 0.61 x 1.
        c = select_config(256, 5120, 14336, dtype=dtype)
        assert (c.tile_m, c.tile_n, c.consumers, c.consumer_rows, c.scheduler) == (
            128, 80, 1, 128, "persistent")  # fmt: skip
        assert c.split_wait and c in candidates(256, 5120, 14336, dtype=dtype)
    # The held-out shape that ran 0.77x torch on 128 x 128: 8 x 16 = 128 tiles of 128 x 80.
    assert select_config(1024, 1280, 8192).tile_n == 80
    # 512 x 3072: 4 x 32 = 128 tiles of 128 x 96 fill 0.97 of a wave; 128 x 80 needs two.
    assert select_config(512, 3072, 4096).tile_n == 96
    # 1024 x 1792: 8 x 16 = 128 tiles of 128 x 112; 96 and 80 need two waves.
    assert select_config(1024, 1792, 5120).tile_n == 112
    # M = 777: the seventh row of 128-row tiles holds 9 rows (0.87 full).
    assert select_config(777, 1536, 5120).tile_n == 128
    assert select_config(768, 1536, 5120).tile_n == 80
    # Nearly a wave of 128 x 128 (512 x 4096: 4 x 32 = 128 tiles) stays.
    assert select_config(512, 4096, 4096).tile_n == 128
    # An N-major B loads whole 64-column atoms; an epilogue chain takes
    # rule 3's two-consumer tile.
    assert select_config(256, 5120, 14336, b_major="N").tile_n == 128
    c = select_config(256, 5120, 14336, fusion=("bias",))
    assert (c.tile_n, c.consumers, c.consumer_rows) == (128, 2, 64)


def test_select_config_follows_the_problem():
    from nvwgmma.kernel.gemm import select_config

    c = select_config(1000, 1001, 1000, out_dtype="f32", c_aligned=False, a_major="M")
    # 8 x 8 tiles of 128 x 128 are under half a wave: 64 x 128, and 9 stages
    # where no C staging takes shared memory.
    assert (c.epilogue, c.out_dtype, c.a_major, c.tile_m, c.tile_n, c.stages) == (
        "registers", "f32", "M", 64, 128, 9)  # fmt: skip
    c = select_config(4096, 4096, 4096, out_dtype="f32")
    assert (c.epilogue, c.epilogue_chunks, c.tile_n) == ("tma", 2, 256)
    c = select_config(4096, 4096, 4096, dtype="e4m3")
    assert (c.dtype, c.out_dtype, c.k_tile) == ("e4m3", "bf16", 128)
    # A batch multiplies the tiles: 16 x (1 x 4) wide tiles is not a wave, 16 x 8 narrow is.
    assert select_config(128, 1024, 1024, batch=16).tile_n == 128
    assert select_config(128, 1024, 1024, batch=64).tile_n == 256
    # Fewer SMs: a wave is fewer tiles.
    assert select_config(512, 4096, 4096, sms=64).tile_n == 256
    # The cost model (16-bit): wave fill x the tile's full-wave rate. At
    # M = 1000, 8 x 16 = 128 wide tiles fill 0.97 of a wave; at M = 896,
    # 7 x 16 = 112 fill 0.85 -- still ahead of 224 narrow tiles in two
    # waves (also 0.85, at a lower rate).
    assert select_config(1000, 4096, 4096).tile_n == 256
    assert select_config(896, 4096, 4096).tile_n == 256
    # 4 x 30 = 120 tiles of 128 x 192 at N = 5760 (0.91 of a wave); at
    # N = 5568, 4 x 29 = 116 (0.88) still beat 128 x 128's second wave.
    assert select_config(512, 5760, 4096).tile_n == 192
    assert select_config(512, 5568, 4096).tile_n == 192
    # fp8 too (its own rates): 116 tiles of 128 x 192 in one wave (0.88
    # full) against 176 of 128 x 128 in two (0.66); the thresholds gave 128.
    assert select_config(512, 5568, 4096, dtype="e4m3").tile_n == 192


def test_cost_model_weighs_wave_fill_against_tile_rate():
    from nvwgmma.kernel.gemm import select_config
    from nvwgmma.kernel.gemm.selector import TILE_RATES, wave_fill

    # Gemma-2-27B's O projection at M = 512 (512 x 4608): 144 tiles of
    # 128 x 128 (two waves, the second 9 % full) lost to cuBLAS at 0.68x;
    # 4 x 24 = 96 tiles of 128 x 192 make one wave.
    c = select_config(512, 4608, 4096)
    assert c.tile_n == 192
    fills = {n: wave_fill(select_config(512, 4608, 4096).__class__(tile_n=n), 512, 4608, 1, 132)
             for n in (192, 256)}  # fmt: skip
    assert fills[192] * TILE_RATES[192] > fills[256] * TILE_RATES[256]
    # The rates order the tiles by math per byte of shared memory.
    assert list(TILE_RATES) == sorted(TILE_RATES, reverse=True)
    assert TILE_RATES[256] > TILE_RATES[224] > TILE_RATES[192] > TILE_RATES[128]


def test_stages_are_as_many_as_fit():
    from nvwgmma.kernel.gemm import select_config

    for c in (select_config(4096, 4096, 4096), select_config(128, 4096, 4096),
              select_config(128, 4096, 4096, out_dtype="f32")):  # fmt: skip
        assert c.shared_memory_bytes <= 227 * 1024
        assert c.stages == 8 or replace(c, stages=c.stages + 1).shared_memory_bytes > 227 * 1024


def test_candidates_start_with_the_choice():
    from nvwgmma.kernel.gemm import candidates, select_config
    from nvwgmma.kernel.gemm.selector import model_tiles

    found = candidates(4096, 4096, 4096)
    assert found[0] == select_config(4096, 4096, 4096)
    assert len(found) == len(set(found))
    assert {c.schedule for c in found} == {"cooperative", "pingpong"}
    assert {c.scheduler for c in found} == {"persistent", "split_k", "stream_k"}
    assert any(c.cluster_m == 2 for c in found)
    # A small problem: no ping-pong or cluster (not a wave of wide tiles).
    small = candidates(128, 4096, 14336)
    assert all(c.schedule == "cooperative" and c.cluster_m == 1 for c in small)
    # QKV at M = 128: 32 tiles of 128 x 192 split in 4 fill 128 of 132 SMs.
    qkv = {(c.tile_n, c.scheduler, c.splits) for c in candidates(128, 6144, 4096)}
    assert {(192, "persistent", 1), (192, "split_k", 4)} <= qkv
    # Enough tiles: the 192 tile data-parallel only.
    assert {c.splits for c in candidates(4096, 4096, 4096) if c.tile_n == 192} == {1}
    # Few 128 x 128 tiles: 64-row tiles (64 x 64 with 13 stages, 64 x 128
    # with 8), split to about a wave where they are few; never at 4096^3.
    o = {(c.tile_m, c.tile_n, c.stages, c.scheduler, c.splits) for c in candidates(128, 4096, 4096)}
    assert {(64, 64, 13, "persistent", 1), (64, 128, 8, "persistent", 1),
            (64, 128, 8, "split_k", 2)} <= o  # fmt: skip
    # No 64-row tile of one consumer at 4096^3: 128-row tiles (one
    # warpgroup's 128 x 128 among them), rule 3d's 256-row tile and the
    # ping-pong 64 x 256.
    assert all(c.tile_m in (128, 256) or c.schedule == "pingpong" for c in found)
    assert {c.name for c in model_tiles(found[0])} <= {c.name for c in found}
    # The 2-CTA cluster of 128 x 128 tiles where they are at most a wave.
    assert any(c.cluster_m == 2 and c.tile_n == 128 for c in candidates(512, 4096, 4096))


@pytest.mark.parametrize("config", [
    ("bf16", 192, "persistent", 1, {}), ("bf16", 192, "split_k", 4, {}),
    ("e4m3", 192, "persistent", 1, {}), ("e4m3", 192, "split_k", 2, {}),
    ("bf16", 64, "persistent", 1, {"consumers": 1, "max_stages": 16}),
    ("e4m3", 64, "persistent", 1, {"consumers": 1, "max_stages": 16}),
    ("bf16", 128, "persistent", 1, {"cluster_m": 2}),
    ("e4m3", 128, "persistent", 1, {"cluster_m": 2}),
    *[(dtype, tile_n, "persistent", 1,
       {"consumers": 1, "consumer_rows": 128, "inflight": 1, "split_wait": True})
      for dtype in ("bf16", "e4m3") for tile_n in (80, 112)],
    ("bf16", 144, "persistent", 1, {}), ("e4m3", 144, "persistent", 1, {})],
    ids=lambda c: "-".join(map(str, c[:4])) + "".join(f"-{k}{v}" for k, v in c[4].items()))  # fmt: skip
def test_other_candidates_assemble_cleanly(ctx, config):
    """Candidates the rule does not return (the autotuner may): 128 x 192,
    64 x 64 with 13 stages, the 2-CTA cluster of 128 x 128."""
    from gemm_checks import assert_clean
    from nvwgmma.kernel.gemm import GemmConfig
    from nvwgmma.kernel.gemm.selector import with_tile

    dtype, tile_n, scheduler, splits, changes = config
    base = GemmConfig(dtype=dtype, out_dtype="bf16")
    assert_clean(with_tile(base, tile_n, scheduler=scheduler, splits=splits, **changes))


@functools.cache  # built once: every parametrized case indexes it
def _returnable():
    """Every configuration select_config returns over the shape classes,
    dtype pairings, layouts and C alignments (split-K included)."""
    from nvwgmma.kernel.gemm import selector

    found = []
    pairs = [("bf16", "bf16"), ("f16", "f16"), ("bf16", "f32"), ("e4m3", "bf16"),
             ("bf16", "e4m3")]  # fmt: skip
    shapes = ((4096, 4096, 4096), (512, 6144, 4096), (512, 4096, 4096), (128, 4096, 14336),
              (128, 6144, 4096), (512, 28672, 4096), (777, 5120, 5120),
              (128, 2048, 4096), (256, 5120, 14336), (512, 3072, 4096),
              (1024, 1792, 5120))  # fmt: skip
    for m, n, k in shapes:
        for dtype, out in pairs:
            for aligned in (True, False):
                for a_major, b_major in (("K", "K"), ("M", "K"), ("K", "N"), ("M", "N")):
                    if dtype == "e4m3" and (a_major, b_major) != ("K", "K"):
                        continue
                    c = selector.select_config(m, n, k, dtype=dtype, out_dtype=out,
                                               c_aligned=aligned, a_major=a_major,
                                               b_major=b_major)  # fmt: skip
                    if c not in found:
                        found.append(c)
    return tuple(found)


def test_returnable_configurations_cover_every_rule():
    kinds = {(c.tile_m, c.tile_n, c.scheduler) for c in _returnable()}
    assert kinds == {
        (128, 256, "persistent"),
        (128, 192, "persistent"),
        (128, 128, "persistent"),
        (128, 112, "persistent"),  # rule 3b
        (128, 96, "persistent"),
        (128, 80, "persistent"),
        (128, 224, "persistent"),
        (256, 144, "persistent"),  # rule 3d
        (64, 256, "persistent"),  # ping-pong
        (64, 128, "persistent"),
        (64, 64, "persistent"),
        (64, 64, "split_k"),
    }


@pytest.mark.parametrize("index", range(len(_returnable())))
def test_returnable_configuration_assembles_cleanly(ctx, index):
    from gemm_checks import assert_clean

    assert_clean(_returnable()[index])


@functools.cache  # built once: every parametrized case indexes it
def _returnable_fused():
    """What select_config returns with an epilogue chain -- a residual;
    bias and GELU; alpha, bias, GELU, residual and beta; fp8 output's
    scale -- on every rule's shapes, C aligned or not."""
    from nvwgmma.kernel.gemm import selector
    from nvwgmma.kernel.gemm.launch import fusion_chain

    found = []
    shapes = ((4096, 4096, 4096), (512, 4096, 4096), (256, 5120, 14336), (128, 4096, 14336),
              (777, 5120, 5120), (16, 4096, 4096))  # fmt: skip
    for (dtype, out), aligned, (m, n, k) in itertools.product(
        (("bf16", "bf16"), ("f16", "f16"), ("bf16", "f32"), ("e4m3", "bf16"), ("bf16", "e4m3")),
        (True, False), shapes):  # fmt: skip
        loaded = "f32" if out == "f32" else "bf16"
        chains = [dict(residual=loaded), dict(bias=loaded, activation="gelu"),
                  dict(alpha=True, bias=loaded, activation="gelu", residual=loaded, beta=True)]  # fmt: skip
        if out == "e4m3":
            chains = [dict(scale=True), dict(bias=loaded, activation="gelu", scale=True)]
        for chain in chains:
            c = selector.select_config(m, n, k, dtype=dtype, out_dtype=out, c_aligned=aligned,
                                       fusion=tuple(fusion_chain(**chain)))  # fmt: skip
            if c not in found:
                found.append(c)
    return tuple(found)


def test_an_epilogue_chain_takes_two_consumers():
    """Rule 3's one-warpgroup tile spilled with an epilogue chain: with
    one, 128 x 128 tiles have two 64-row consumers and rule 3b stands
    aside."""
    from nvwgmma.kernel.gemm import select_config
    from nvwgmma.kernel.gemm.launch import fusion_chain

    plain = select_config(512, 4096, 4096)
    fused = select_config(512, 4096, 4096, fusion=tuple(fusion_chain(bias="bf16")))
    assert (plain.tile_n, plain.consumers, plain.consumer_rows) == (128, 1, 128)
    assert (fused.tile_n, fused.consumers, fused.consumer_rows) == (128, 2, 64)
    assert select_config(256, 5120, 14336).tile_n == 80
    residual = tuple(fusion_chain(residual="bf16"))
    assert select_config(256, 5120, 14336, fusion=residual).consumer_rows == 64
    assert all(c.consumer_rows == 64 or c.tile_m == 64 for c in _returnable_fused())


@pytest.mark.parametrize("index", range(len(_returnable_fused())))
def test_returnable_fused_configuration_assembles_cleanly(ctx, index):
    from gemm_checks import assert_clean

    assert_clean(_returnable_fused()[index])


def test_performance_md_table_is_what_the_rule_picks():
    """docs/performance.md's selector table: each cell is select_config's
    tile and stages, and its split-K (in parentheses, once verified)."""
    import pathlib

    from nvwgmma.kernel.gemm import select_config

    text = (pathlib.Path(__file__).parents[2] / "docs" / "performance.md").read_text()
    table = text.split("<!-- selector-table:begin -->")[1].split("<!-- selector-table:end -->")[0]
    rows = [r for r in table.strip().splitlines()[2:]]
    assert len(rows) == 4
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        m = int(cells[0])
        for cell, (n, k) in zip(cells[1:], LLAMA.values()):
            c = select_config(m, n, k)
            expected = f"{c.tile_m}x{c.tile_n} s{c.stages}"
            if c.scheduler == "split_k":
                expected += f" (split-K {c.splits})"
            assert cell == expected, (m, n, k, cell)


def test_an_n_major_b_takes_whole_swizzle_atoms():
    """TMA loads an N-major B in 64-column swizzle atoms: the 128 x 224 tile
    the cost model prefers there (3.5 atoms) is refused by check_config and
    passed over by the selector (it crashed the kernel build before)."""
    from nvwgmma.kernel.gemm import GemmConfig, selector
    from nvwgmma.kernel.gemm.config import check_config

    with pytest.raises(
        ValueError, match=r"tile_n must be a multiple of 64 with B N-major .*got 224"
    ):
        check_config(GemmConfig(tile_n=224, b_major="N"))
    assert selector.select_config(1000, 1032, 264, batch=3).tile_n == 224
    c = selector.select_config(1000, 1032, 264, batch=3, a_major="M", b_major="N")
    assert check_config(c) is c and c.tile_n == 256


def test_select_config_runs_without_the_native_package():
    """On a GPU host without an nvwgmma build (the pure-Python runtime with
    precompiled PTX) the selector must not reach the lattice: every layout,
    the 128 x 224 rule included."""
    import subprocess
    import sys

    code = """
import sys
for name in ("nvwgmma._mlir_libs", "nvwgmma.dialects._nvwgmma_enum_gen", "nvwgmma.lattice"):
    sys.modules[name] = None
from nvwgmma.kernel.gemm import selector
for a, b in (("K", "K"), ("M", "N"), ("K", "N")):
    print(selector.select_config(1000, 1032, 264, batch=3, a_major=a, b_major=b).tile_n)
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["224", "256", "256"]


@functools.cache  # built once: every parametrized case indexes it
def _decode_returnable():
    """Rule 0's configurations (bf16 and fp8): data-parallel and split
    about a wave, on Llama-3-8B's projections and a 5120 x 8192 layer --
    128 or 64 rows of weights by 16 tokens up to 16 tokens, 64 by 32 up to
    32 -- its second case, 128 by 64 at 64 tokens, and its third, 64 by
    the tokens rounded up to 16 at 65-96 tokens."""
    from nvwgmma.kernel.gemm import selector

    found = []
    for dtype in ("bf16", "e4m3"):
        for m in (1, 16, 17, 32):
            for n, k in (*LLAMA.values(), (5120, 8192)):
                c = selector.select_config(m, n, k, dtype=dtype, out_dtype="bf16")
                tiles = ((128, 16), (64, 16)) if m <= 16 else ((64, 32),)
                assert c.store_transposed and (c.tile_m, c.tile_n) in tiles, (dtype, m, n, k)
                if c not in found:
                    found.append(c)
        # the second case (its tiles make a wave or more: never split)
        for n, k in ((28672, 4096), (17920, 5120)):
            c = selector.select_config(64, n, k, dtype=dtype, out_dtype="bf16")
            assert c.store_transposed and (c.tile_m, c.tile_n) == (128, 64), (dtype, n, k)
            if c not in found:
                found.append(c)
        # the third case, split about a wave and data-parallel
        for m, n, k, tokens in ((77, 4096, 4096, 80), (65, 28672, 4096, 80),
                                (96, 4096, 4096, 96), (90, 28672, 4096, 96)):  # fmt: skip
            c = selector.select_config(m, n, k, dtype=dtype, out_dtype="bf16")
            assert c.store_transposed and (c.tile_m, c.tile_n) == (64, tokens), (dtype, m, n, k)
            if c not in found:
                found.append(c)
    return tuple(found)


@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
def test_rule_zero_takes_64_weight_rows_where_128_split_k(dtype):
    """Up to 16 tokens, rule 0's 128 weight rows where they fill a wave
    unsplit; 64 rows, split to a wave in turn, where 128-row tiles split K
    and 64 rows make as many units or the 128-row parts are short (at most
    DECODE_SHORT_PART stages); else the 128-row split; 64 rows too where
    unsplit 128-row units make more than a wave and 64-row ones fill the
    last one DECODE_WAVE_GAIN fuller (16-bit). A caller's
    `consumers` is kept."""
    from nvwgmma.kernel.gemm.selector import DECODE_SHORT_PART, decode_config, select_config

    def pick(m, n, k):
        c = select_config(m, n, k, dtype=dtype, out_dtype="bf16")
        return c.tile_m, c.tile_n, c.scheduler, c.splits

    assert pick(16, 28672, 4096) == (128, 16, "persistent", 1)  # 224 tiles: no split
    # 297 units of 128 rows fill 0.75 of their 3 waves, 594 of 64 rows 0.90
    # of 5: 64 rows, 16-bit (fp8 was not measured there)
    wide = (64 if dtype == "bf16" else 128, 16, "persistent", 1)
    assert pick(16, 38016, 5120) == wide
    assert pick(1, 57344, 8192) == wide  # 448 units (0.85) against 896 (0.97)
    assert pick(16, 64128, 8192) == (128, 16, "persistent", 1)  # 0.95 either way
    assert pick(16, 6144, 4096) == (64, 16, "persistent", 1)  # 96 units either way
    assert pick(1, 8192, 8192) == (64, 16, "persistent", 1)  # 128 units either way
    assert pick(16, 4096, 14336) == (64, 16, "split_k", 2)  # 128 units either way
    # 120 units against 80: 64 rows where the parts have at most
    # DECODE_SHORT_PART stages, else the 128-row split
    k = 2 * DECODE_SHORT_PART * (64 if dtype == "bf16" else 128)
    assert pick(16, 5120, k) == (64, 16, "persistent", 1)
    assert pick(16, 5120, 2 * k) == (128, 16, "split_k", 3)
    assert pick(32, 6144, 4096)[:2] == (64, 32)
    kept = decode_config(16, 6144, 4096, dtype=dtype, consumers=2)
    assert (kept.tile_m, kept.scheduler, kept.splits) == (128, "split_k", 2)


@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
def test_rule_zero_takes_33_to_64_tokens_from_128_row_tiles(dtype):
    """Rule 0's second case: at 33-64 tokens where the cost model's tile
    has 128 rows, the transposed 128 x 64 tile of two consumers; where it
    picks 64-row tiles (the ping-pong, rule 4), those stay; past 96
    tokens (65-96: the third case), or with a column-major A, the cost
    model's tile."""
    from nvwgmma.kernel.gemm.selector import select_config

    def pick(m, n, k, **kw):
        return select_config(m, n, k, dtype=dtype, out_dtype="bf16", **kw)

    for m, n, k in ((64, 28672, 4096), (33, 26624, 16384), (48, 76032, 8192)):
        c = pick(m, n, k)
        assert c.store_transposed and (c.tile_m, c.tile_n, c.consumers) == (128, 64, 2), (m, n)
    assert pick(64, 256000, 3584).schedule == "pingpong"
    assert not pick(64, 7168, 5120).store_transposed and pick(64, 7168, 5120).tile_m == 64
    assert not pick(97, 28672, 4096).store_transposed
    if dtype == "bf16":  # fp8 takes a K-major A only
        assert not pick(64, 28672, 4096, a_major="M").store_transposed


@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
def test_rule_zero_takes_65_to_96_tokens_on_one_consumer(dtype):
    """Rule 0's third case: 65-96 tokens (padded to 128 by any row tile)
    on the transposed 64-row tile of one consumer by the tokens rounded up
    to 16, whatever the cost model would pick; 97 tokens, a column-major A
    or N under 256 do not take it."""
    from nvwgmma.kernel.gemm.selector import select_config

    def pick(m, n, k, **kw):
        return select_config(m, n, k, dtype=dtype, out_dtype="bf16", **kw)

    for m, n, k in ((65, 28672, 4096), (77, 5120, 3072), (80, 128256, 16384), (77, 4096, 512)):
        c = pick(m, n, k)
        assert c.store_transposed and (c.tile_m, c.tile_n, c.consumers) == (64, 80, 1), (m, n)
    for m in (81, 90, 96):
        c = pick(m, 5120, 3072)
        assert c.store_transposed and (c.tile_m, c.tile_n, c.consumers) == (64, 96, 1), m
    assert not pick(97, 5120, 3072).store_transposed
    assert not pick(77, 128, 4096).store_transposed
    if dtype == "bf16":
        assert not pick(77, 5120, 3072, a_major="M").store_transposed


def test_rule_zero_takes_fp8_decode_too():
    kinds = {(c.dtype, c.scheduler) for c in _decode_returnable()}
    assert kinds == {("bf16", "persistent"), ("bf16", "split_k"), ("e4m3", "persistent"),
                     ("e4m3", "split_k")}  # fmt: skip


@pytest.mark.parametrize("index", range(len(_decode_returnable())))
def test_decode_configuration_assembles_cleanly(ctx, index):
    from gemm_checks import assert_clean

    assert_clean(_decode_returnable()[index])


@pytest.mark.parametrize("blockwise", [False, True])
def test_three_consumer_tiles_fit_the_register_file(ctx, blockwise):
    """with_tile's three consumers share 512 registers per thread with the
    producer (232 each assembled cleanly and hung on the GPU)."""
    from gemm_checks import assert_clean
    from nvwgmma.kernel.gemm.blockwise import blockwise_tiles
    from nvwgmma.kernel.gemm.selector import decode_config, with_tile

    if blockwise:
        config = with_tile(blockwise_tiles()[0], 128, consumers=3)
    else:
        config = decode_config(16, 8192, 8192, consumers=3)
    assert (config.consumers, config.producer_regs, config.consumer_regs) == (3, 32, 160)
    assert_clean(config)


def test_packed_tokens_pad_the_least():
    from nvwgmma.kernel.gemm.selector import packed_tokens, width_rate

    # 777 in 5 x 160 (800), 300 in 2 x 160 (320), 530 in 3 x 192 (576, the
    # wider of 4 x 144), 129 in one 144, 1000 in 7 x 144; whole 256s stay 256
    # (and rule 3c leaves them, as every 256: they pad no less than 128-row
    # tiles, so it returns 144 to 240).
    assert [packed_tokens(m) for m in (777, 300, 530, 129, 512, 1000)] == [160, 160, 192, 144,
                                                                          256, 144]  # fmt: skip
    assert width_rate(160) == pytest.approx((651.0 + 698.0) / 2)
    assert width_rate(224) == 708.0


def test_rule_3c_transposes_a_ragged_m_where_the_model_says_so():
    """Rule 3c: 300 and 777 tokens on wide layers take the transposed
    128 x 160 tile (530: 128 x 192) where rule 3d's 256-row tile fills
    its waves less; where its waves lose (777 x 3456: 135
    tiles for 132 SMs), or the inputs, layouts, C or a chain rule it out,
    the cost model's tile stays."""
    from nvwgmma.kernel.gemm.launch import fusion_chain
    from nvwgmma.kernel.gemm.selector import select_config

    for m, n, k, width in ((300, 38016, 5120, 160), (777, 29568, 5120, 160),
                           (530, 27648, 5120, 192)):  # fmt: skip
        c = select_config(m, n, k, sms=132)
        assert c.store_transposed and c.epilogue == "tma", (m, n)
        assert (c.tile_m, c.tile_n, c.consumers) == (128, width, 2), (m, n)
    for m, n, k, kw in ((777, 3456, 5120, {}), (128, 65536, 5120, {}),
                        (300, 65536, 5120, dict(dtype="e4m3", out_dtype="bf16")),
                        (300, 65536, 5120, dict(a_major="M")),
                        (300, 65536, 5120, dict(c_aligned=False)),
                        (300, 65536, 5120, dict(out_dtype="f32")),
                        (300, 65536, 5120, dict(fusion=fusion_chain(bias="bf16")))):  # fmt: skip
        assert not select_config(m, n, k, sms=132, **kw).store_transposed, (m, n, kw)


@pytest.mark.parametrize("width,dtype", [(w, "bf16") for w in range(144, 241, 16)] +
                         [(160, "f16"), (240, "f16")])  # fmt: skip
def test_rule_3c_tiles_assemble_cleanly(ctx, width, dtype):
    from gemm_checks import assert_clean
    from nvwgmma.kernel.gemm.selector import _base, packed_tokens, transposed_tile

    m = next(m for m in range(129, 4096) if packed_tokens(m) == width and m % 128)
    config = transposed_tile(m, _base(dtype, dtype, "K", "K", (), True))
    assert config.tile_n == width and config.store_transposed
    assert_clean(config)


def test_rule_3d_transposes_onto_256_rows_where_the_model_says_so():
    """Rule 3d: 777 x 5120 takes the transposed 256 x 144 tile (20 x 6 =
    120 tiles, one wave; rule 3c's 128 x 160 makes 200, 128 x 256 140),
    1300 x 4096 256 x 176; where a row tile fills its waves better (530 x
    5120 in 128 x 192, 4096 x 4096), or the inputs, layouts, C or a chain
    rule it out, it is not taken."""
    from nvwgmma.kernel.gemm.launch import fusion_chain
    from nvwgmma.kernel.gemm.selector import select_config

    for m, n, k, width in ((777, 5120, 14336, 144), (777, 5120, 17920, 144),
                           (1300, 4096, 14336, 176), (2048, 3072, 5120, 192)):  # fmt: skip
        c = select_config(m, n, k, sms=132)
        assert c.store_transposed and c.epilogue == "tma", (m, n)
        assert (c.tile_m, c.tile_n, c.consumers, c.consumer_rows) == (256, width, 2, 128), (m, n)
    for m, n, k, kw in ((530, 5120, 14336, {}), (4096, 4096, 4096, {}),
                        (777, 5120, 14336, dict(dtype="e4m3", out_dtype="bf16")),
                        (777, 5120, 14336, dict(b_major="N")),
                        (777, 5120, 14336, dict(c_aligned=False)),
                        (777, 5120, 14336, dict(out_dtype="f32")),
                        (777, 5120, 14336, dict(fusion=fusion_chain(bias="bf16")))):  # fmt: skip
        assert select_config(m, n, k, sms=132, **kw).consumer_rows != 128 or not select_config(
            m, n, k, sms=132, **kw).store_transposed, (m, n, kw)  # fmt: skip


@pytest.mark.parametrize("width,dtype", [(w, "bf16") for w in range(128, 193, 16)] +
                         [(144, "f16")])  # fmt: skip
def test_rule_3d_tiles_assemble_cleanly(ctx, width, dtype):
    from dataclasses import replace

    from gemm_checks import assert_clean
    from nvwgmma.kernel.gemm.selector import _base, with_tile

    base = replace(_base(dtype, dtype, "K", "K", (), True), store_transposed=True)
    assert_clean(with_tile(base, width, consumers=2, consumer_rows=128))


def test_the_fitted_rates_are_the_ones_in_use():
    """bench/gemm/tile_rates.py's refit of the candidates runs (16-bit and
    fp8) gives every rate of the cost model."""
    import json
    import pathlib
    import sys

    from nvwgmma.kernel.gemm.selector import FP8_RATES, PINGPONG_RATE, TILE_RATES

    root = pathlib.Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "bench" / "gemm"))
    from tile_rates import FP8_RUN, RUN, fitted_rates

    fitted = {name.removeprefix("gemm_bf16_bf16_"): round(rate)
              for name, rate in fitted_rates(json.loads(pathlib.Path(RUN).read_text())).items()}  # fmt: skip
    assert fitted["64x256x64_s4_tma_pingpong"] == PINGPONG_RATE
    assert fitted["128x128x64_s6_tma_wg128_w1_split_wait"] == TILE_RATES[128]
    for n in (192, 224, 256):
        assert fitted[f"128x{n}x64_s{4 if n == 192 else 3}_tma"] == TILE_RATES[n]
    fp8 = {name.removeprefix("gemm_e4m3_bf16_"): round(rate) for name, rate in fitted_rates(
        json.loads((root / FP8_RUN).read_text())).items()}  # fmt: skip
    assert fp8["64x256x128_s4_tma_pingpong"] == FP8_RATES["pingpong"]
    assert fp8["128x128x128_s6_tma_wg128_w1_split_wait"] == FP8_RATES[128]
    for n in (192, 224, 256):
        assert fp8[f"128x{n}x128_s{4 if n == 192 else 3}_tma"] == FP8_RATES[n]


def test_ping_pong_packs_a_ragged_m():
    """M = 777 (Qwen2.5-32B's O at tp 4 x 5120): 13 ping-pong tiles of 64
    rows x 20 columns = 260 fit one wave of two per SM (fill 0.92, x 565),
    where 128-row tiles make 7 x 27 of 128 x 192 in two waves (0.61, x 698:
    the pick before, 0.78-0.83x cuBLAS on the tuned half where ping-pong ran
    0.83-0.87x) or 7 x 40 of 128 x 128 in three (0.61); at M = 768, 6 x 20 tiles
    of 128 x 256 make one wave 0.91 full, and win."""
    from nvwgmma.kernel.gemm import GemmConfig, select_config
    from nvwgmma.kernel.gemm.selector import wave_fill

    pingpong = GemmConfig(schedule="pingpong")
    assert round(wave_fill(pingpong, 777, 5120, 1, 132), 2) == 0.92
    assert round(wave_fill(GemmConfig(tile_n=192), 777, 5120, 1, 132), 2) == 0.61
    # (Both operands K-major, rule 3d transposes it onto 256 x 144.)
    c = select_config(777, 5120, 5120, b_major="N")
    assert (c.schedule, c.tile_m, c.tile_n) == ("pingpong", 64, 256)
    assert select_config(768, 5120, 5120).tile_n == 256
    assert select_config(768, 5120, 5120).schedule == "cooperative"
    # fp8 likewise (0.92 x 1116 against 0.61 x 1340).
    assert select_config(777, 5120, 5120, dtype="e4m3").schedule == "pingpong"
