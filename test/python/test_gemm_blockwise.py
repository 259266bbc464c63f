"""The block-scaled fp8 GEMM (DeepSeek-style scales) without a GPU: every
bad call raises before anything is launched, the configuration's limits
are enforced, and its kernels assemble strict-clean without spills, taking
the scales after the other parameters. (The launches run on the GPU:
bench/gemm/blockwise.py.)"""

import re

import pytest
from test_gemm_launch import Array

A = Array((256, 512), "|u1")
B = Array((512, 384), "|u1", strides=(1, 512))  # an (N, K) weight's .T
SA, SB = Array((256, 4), "<f4"), Array((3, 4), "<f4")


def _prepare(a=A, b=B, sa=SA, sb=SB, **kw):
    from nvwgmma.kernel.gemm.blockwise import prepare_blockwise

    return prepare_blockwise(a, b, sa, sb, **kw)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"a": Array((256, 512))}, "a's dtype must be e4m3 or e5m2, but got f16"),
        ({"b": Array((512, 384), "|u1")}, "fp8 operands must be K-major"),
        ({"b": Array((500, 384), "|u1", strides=(1, 500))}, r"a's columns and b's rows must agree \(K\)"),
        ({"sa": Array((256, 3), "<f4")}, "scale_a must be a contiguous 256 x 4 tensor"),
        ({"sb": Array((4, 4), "<f4")}, "scale_b must be a contiguous 3 x 4 tensor"),
        ({"sb": Array((3, 4))}, "scale_b must be f32 on a's device, but got f16"),
        ({"out_dtype": "e4m3"}, "out_dtype must be bf16, f16 or f32"),
        ({"out": Array((256, 383))}, r"out must be bf16 of shape \(256, 384\)"),
    ],
)  # fmt: skip
def test_bad_calls_raise_before_launch(fp8_bytes, kwargs, message):
    with pytest.raises(ValueError, match=message):
        _prepare(**kwargs)


def test_block_scales_need_their_tiles():
    from nvwgmma.kernel.gemm import GemmConfig
    from nvwgmma.kernel.gemm.config import check_config

    for fields in ({"dtype": "bf16"}, {"k_order": "serpentine"}, {"tile_n": 160},
                   {"split_wait": True, "inflight": 1},
                   {"consumer_rows": 128, "consumers": 1}):  # fmt: skip
        config = GemmConfig(dtype="e4m3", tile_n=128, k_order="forward", block_scales=True)
        config = GemmConfig(**{**config.__dict__, **fields})
        with pytest.raises(ValueError, match="block_scales needs fp8 inputs, 128-deep K tiles"):
            check_config(config)


def _configs():
    from dataclasses import replace

    from nvwgmma.kernel.gemm.blockwise import blockwise_config

    base = blockwise_config(4096, 4096, 7168)
    return [base, blockwise_config(4096, 2112, 7168), blockwise_config(128, 24576, 7168),
            replace(base, stages=6, epilogue="registers"), replace(base, cluster_m=2),
            blockwise_config(128, 7168, 16384), blockwise_config(64, 7168, 16384),
            replace(base, inflight=1)]  # fmt: skip


def test_blockwise_config_weighs_wave_fill_by_tile_rate():
    """The candidate with the highest wave fill x rate (128 x 128 promoting
    beside the next K tile: 1.24; 128 x 192 and 192 x 128 of three
    consumers: 1.1): at M = 4096 the overlapped 128 x 128 everywhere; at
    M = 128, under half a wave of 128 x 128 tiles, the split (N <= 7168),
    else 128 x 192 on N = 24576 (0.97 full x 1.1 against 0.73 x 1.24 for
    192 tiles of 128 x 128) and the overlapped 128 x 128 on N = 32768 (256
    tiles, 0.97). Without the overlapped tile's rate, 128 x 192 at 2112
    (0.89 of 3 waves x 1.1, level with 192 x 128's and first of them,
    against 128 x 128's 0.80 of 5); with 128 x 128's alone, 128 x 128."""
    from nvwgmma.kernel.gemm.blockwise import blockwise_config

    picks = {(m, n): (c.tile_m, c.tile_n, c.consumers, c.inflight)
             for m in (128, 4096) for n in (2112, 4096, 7168, 24576, 32768)
             for c in [blockwise_config(m, n, 7168)]}  # fmt: skip
    narrow, wide, overlapped = (128, 128, 2, 0), (128, 192, 2, 0), (128, 128, 2, 1)
    assert picks == {
        **{(128, n): narrow for n in (2112, 4096, 7168)},
        (128, 24576): wide,
        (128, 32768): overlapped,
        **{(4096, n): overlapped for n in (2112, 4096, 7168, 24576, 32768)},
    }
    assert blockwise_config(4096, 2112, 7168).stages == 5
    serial = {(128, 128, 1, 0): 1.0, (128, 192, 1, 0): 1.1, (192, 128, 1, 0): 1.1}
    assert blockwise_config(4096, 2112, 7168, rates=serial).tile_n == 192
    only = {(128, 128, 1, 0): 1.0, (128, 192, 1, 0): 1.08}
    assert blockwise_config(4096, 2112, 7168, rates=only).tile_n == 192
    assert blockwise_config(4096, 2112, 7168, rates={(128, 128, 1, 0): 1.0}).tile_n == 128


def test_few_tiles_split_k_to_about_a_wave():
    """Under half a wave of 128 x 128 tiles: K split so that tiles x parts
    is about a wave (each part at least 4 K blocks), 64-row tiles at
    M <= 64; from half a wave up, or with K too short to split, none."""
    from nvwgmma.kernel.gemm.blockwise import blockwise_config, blockwise_split

    picks = {(m, n, k): (c.tile_m, c.tile_n, c.scheduler, c.splits)
             for m, n, k in ((128, 7168, 16384), (128, 4096, 7168), (128, 2112, 7168),
                             (64, 7168, 16384), (16, 4096, 7168))
             for c in [blockwise_config(m, n, k)]}  # fmt: skip
    assert picks == {
        (128, 7168, 16384): (128, 128, "split_k", 2),  # 56 tiles x 2
        (128, 4096, 7168): (128, 128, "split_k", 4),  # 32 x 4
        (128, 2112, 7168): (128, 128, "split_k", 7),  # 17 x 7, 8 K blocks each
        (64, 7168, 16384): (64, 128, "split_k", 2),
        (16, 4096, 7168): (64, 128, "split_k", 4),
    }
    assert blockwise_split(128, 24576, 1536) is None  # 192 tiles: data-parallel
    assert blockwise_split(128, 4096, 512) is None  # 4 K blocks: nothing to split
    assert blockwise_config(128, 4096, 512).scheduler == "persistent"


def test_the_fitted_rates_are_the_ones_in_use():
    """bench/gemm/blockwise_fit.py's fit of its results file gives
    TILE_RATES."""
    import json
    import pathlib
    import sys

    root = pathlib.Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "bench" / "gemm"))
    from blockwise_fit import fitted_rates
    from nvwgmma.kernel.gemm.blockwise import TILE_RATES

    data = json.loads(
        (root / "bench/results/h200/2026-11-28-1748-blockwise-tiles-fit-overlap.json").read_text()
    )
    assert fitted_rates(data["rows"]) == pytest.approx(TILE_RATES)


@pytest.mark.parametrize("index", range(len(_configs())))
def test_block_scaled_kernels_assemble_cleanly(ctx, index):
    """Strict-checked, 0 spills; the scales are the last two parameters,
    each K tile's product is waited for (wait_group 0) in the loop and
    promoted by FMAs."""
    from gemm_checks import assert_clean
    from nvwgmma.kernel.gemm.kernel import BLOCK_SCALE_PARAMS

    meta, ptx = assert_clean(_configs()[index])
    assert meta["signature"][-2:] == [list(p) for p in BLOCK_SCALE_PARAMS]
    assert "wgmma.wait_group.sync.aligned 0" in ptx
    # The promotion: one FMA per accumulator register (64 of a 64 x 128 block).
    assert len(re.findall(r"\bfma\.rn\.f32", ptx)) >= 64
