"""fp8 GEMM with DeepSeek-V3-style block scales: activations scaled per
1 x 128 group along K, weights per 128 x 128 block, each 128-deep K
block's product promoted into the f32 accumulator with its scales
(GemmConfig.block_scales; the mainloop is gemm.promotion's).

    from nvwgmma.kernel.gemm.blockwise import blockwise_mm
    out = blockwise_mm(x8, w8.T, scale_x, scale_w)
    # x8 (M, K) e4m3 row-major, w8 (N, K) e4m3 (a Linear weight; pass w8.T),
    # scale_x (M, ceil(K / 128)) f32, scale_w (ceil(N / 128), ceil(K / 128)) f32:
    # out[m, n] = sum over K blocks kb of
    #             scale_x[m, kb] * scale_w[n / 128, kb] * (x8[m, kb] . w8[n, kb]), bf16

The scales are row-major and contiguous (DeepGEMM's and torch's layouts
transposed where they differ: pass .contiguous() of the M x K/128 view).
"""

from __future__ import annotations

from dataclasses import replace

from .. import _calls
from .config import GemmConfig
from .launch import _check_aligned, _fail, _map, _matrix, _Tensor, fixup_buffers, load_kernel
from .scheduler import grid_size

__all__ = [
    "blockwise_config",
    "blockwise_mm",
    "blockwise_split",
    "blockwise_tiles",
    "prepare_blockwise",
    "rate_key",
]

BLOCK = 128


# Full-wave throughput of each candidate relative to 128 x 128's, keyed by
# (tile_m, tile_n, cluster_m, inflight), fitted on Llama-3-8B's and -70B's
# projections at M = 256 ... 8192 (bench/gemm/blockwise_fit.py; the results
# file its test names, H200): the wider tile's promotion and scale loads
# come once per 192 columns; three consumers keep the tensor cores busier
# through each other's promotions; 128 x 128 with the next K tile's wgmmas
# in flight while a consumer promotes ran 1.16x the best of the others,
# geomean (0.88-1.31x). (The wide tile on a 2 x 1 cluster fitted 1.04,
# never above the wide tile alone, so it is not a candidate.)
TILE_RATES = {(128, 128, 1, 0): 1.0, (128, 192, 1, 0): 1.1, (192, 128, 1, 0): 1.1,
              (128, 128, 1, 1): 1.24}  # fmt: skip


def rate_key(config: GemmConfig) -> tuple[int, int, int, int]:
    """`config`'s key in TILE_RATES: (tile_m, tile_n, cluster_m, inflight)."""
    return config.tile_m, config.tile_n, config.cluster_m, config.inflight


def blockwise_tiles(dtype: str = "e4m3", out_dtype: str = "bf16") -> list[GemmConfig]:
    """The configurations blockwise_config chooses between, K walked
    forward (the scales' order): two 64-row consumers (each holds its
    running and its fresh accumulator) on 128 x 128 tiles (5 stages of 32
    KiB) or 128 x 192 (4 stages of 40 KiB; B's scales per 64 columns),
    192 x 128 tiles of three consumers (4 stages; 160 registers each), and
    128 x 128 with the next K tile's wgmmas in flight while a consumer
    promotes (inflight 1: a second fresh set, which only the 128-wide tile
    of 64-row consumers holds without spilling)."""
    from .selector import with_tile

    narrow = GemmConfig(dtype=dtype, out_dtype=out_dtype, tile_n=128, consumers=2, stages=5,
                        k_order="forward", block_scales=True)  # fmt: skip
    return [narrow, replace(narrow, tile_n=192, stages=4), with_tile(narrow, 128, consumers=3),
            replace(narrow, inflight=1)]  # fmt: skip


def blockwise_config(m: int, n: int, k: int, *, dtype: str = "e4m3", out_dtype: str = "bf16",
                     sms: int = 132, rates=None) -> GemmConfig:  # fmt: skip
    """Of blockwise_tiles, the one whose wave fill on `sms` SMs times its
    rate (`rates`: rate_key -> rate, default TILE_RATES; a candidate it
    leaves out is not chosen) is highest, the first of equals. N = 2112 at
    M = 4096: 544 tiles of 128 x 128 in 5 waves (0.80 full) promoting
    beside the next K tile (x 1.24) against 374 of 192 x 128 in 3 (0.89, x
    1.1) and 352 of 128 x 192 in 3 (0.89, x 1.1).

    Where 128 x 128 tiles are under half a wave (few tokens: M = 128 on
    N = 7168 is 56 of them for 132 SMs), `blockwise_split`'s instead."""
    from .selector import wave_fill

    split = blockwise_split(m, n, k, dtype=dtype, out_dtype=out_dtype, sms=sms)
    if split is not None:
        return split
    rates = TILE_RATES if rates is None else rates
    tiles = [c for c in blockwise_tiles(dtype, out_dtype) if rate_key(c) in rates]
    return max(tiles, key=lambda c: wave_fill(c, m, n, 1, sms) * rates[rate_key(c)])


def blockwise_split(m: int, n: int, k: int, *, dtype: str = "e4m3", out_dtype: str = "bf16",
                    sms: int = 132) -> GemmConfig | None:  # fmt: skip
    """Where 128 x 128 tiles fill under half of a wave: 128-column tiles
    of 64 rows (one consumer) at M <= 64, 128 rows above, their K split
    so that tiles x parts is about a wave, each part keeping at least 4
    K blocks (the bf16 selector's rule 4: selector._split_to_a_wave); the
    parts' promoted f32 sums are added in a fixed order. None where the
    tiles are not that few, or K too short to split. (Its parts promoting
    beside the next K tile, inflight 1, ran level: 1.008x geomean on the
    Llama-3 rows at 16-128 tokens, bench/gemm/blockwise_fit.py --small.)"""
    from .selector import _split_to_a_wave, with_tile

    if 2 * _ceil(m, 128) * _ceil(n, 128) >= sms:
        return None
    narrow = blockwise_tiles(dtype, out_dtype)[0]
    if m <= 64:  # as many stages as fit beside the staging
        narrow = with_tile(narrow, narrow.tile_n, consumers=1, max_stages=16)
    return _split_to_a_wave(narrow, m, n, k, 1, sms)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def prepare_blockwise(a, b, scale_a, scale_b, *, out=None, out_dtype="bf16", stream=None,
                      config=None):  # fmt: skip
    """(launch, out) for a blockwise_mm call: checked once, `launch()`
    repeats it."""
    from .. import runtime

    ta, tb = _Tensor(a, "a"), _Tensor(b, "b")
    for t in (ta, tb):
        if t.device is None:
            _fail(f"{t.what} must be on a CUDA device, but got {t.device_name}")
        if t.dtype not in ("e4m3", "e5m2"):
            _fail(f"{t.what}'s dtype must be e4m3 or e5m2, but got {t.dtype}")
    if tb.device != ta.device or tb.dtype != ta.dtype:
        _fail(f"b must be a's dtype on a's device, but got {tb.dtype} on {tb.device_name}")
    if len(ta.shape) != 2 or len(tb.shape) != 2:
        _fail(f"a and b must be 2-D, but got shapes {ta.shape} and {tb.shape}")
    _, m, k, a_row, a_lead, _ = _matrix(ta)
    _, k_b, n, b_row, b_lead, _ = _matrix(tb)
    if not a_row or b_row:
        _fail("fp8 operands must be K-major (wgmma transposes only 16-bit ones): a row-major "
              "(M, K) and b a weight's transpose (w.T of an (N, K) row-major w)")  # fmt: skip
    if k_b != k or min(m, n, k) < 1:
        _fail(f"a's columns and b's rows must agree (K), but got a {ta.shape} and b {tb.shape}")
    _check_aligned("a", ta.address, a_lead, ta.dtype, k)
    _check_aligned("b", tb.address, b_lead, tb.dtype, k)
    kb = _ceil(k, BLOCK)
    for t, what, shape in (
        (scale_a, "scale_a", (m, kb)),
        (scale_b, "scale_b", (_ceil(n, BLOCK), kb)),
    ):
        s = _Tensor(t, what)
        if s.device != ta.device or s.dtype != "f32":
            _fail(f"{what} must be f32 on a's device, but got {s.dtype} on {s.device_name}")
        if tuple(s.shape) != shape or tuple(s.strides) != (shape[1], 1):
            _fail(f"{what} must be a contiguous {shape[0]} x {shape[1]} tensor, but got shape "
                  f"{s.shape}, strides {s.strides}")  # fmt: skip
    sa, sb = _Tensor(scale_a, "scale_a"), _Tensor(scale_b, "scale_b")
    if out_dtype not in ("bf16", "f16", "f32"):
        _fail(f"out_dtype must be bf16, f16 or f32, but got {out_dtype!r}")
    new_out = ta.allocator((m, n), out_dtype)
    if out is None:
        out = new_out()
    tc = _Tensor(out, "out")
    if tc.dtype != out_dtype or tc.shape != (m, n) or tc.device != ta.device:
        _fail(f"out must be {out_dtype} of shape {(m, n)} on {ta.device_name}, but got "
              f"{tc.dtype} of shape {tc.shape} on {tc.device_name}")  # fmt: skip
    aligned = (n * {"bf16": 2, "f16": 2, "f32": 4}[out_dtype]) % 16 == 0
    if (m > 1 and tc.strides != (n, 1)) or tc.address % 16:
        _fail(f"out must be contiguous and 16-byte aligned, but got strides {tc.strides}")
    stream = _calls.stream_of(stream, ta.value)
    with runtime.on_device(ta.device):
        sms = runtime.device_attribute("MULTIPROCESSOR_COUNT")
        if config is None:
            config = blockwise_config(m, n, k, dtype=ta.dtype, out_dtype=out_dtype, sms=sms)
            if not aligned:
                config = replace(config, epilogue="registers")
        if not config.block_scales or config.dtype != ta.dtype or config.out_dtype != out_dtype:
            _fail(f"config must be a block-scaled {ta.dtype} -> {out_dtype} configuration, but "
                  f"got {config.name}")  # fmt: skip
        kernel, meta = load_kernel(config)
        boxes = meta["boxes"]
        tm_a = _map(ta.address, ta.dtype, a_lead, 0, m, k, 1, boxes["A"])
        tm_b = _map(tb.address, tb.dtype, b_lead, 0, n, k, 1, boxes["B"])
        tm_c = (_map(tc.address, out_dtype, n, m * n, m, n, 1, boxes["C"])
                if config.epilogue == "tma" else tm_a)  # fmt: skip
        grid = grid_size(meta, m, n, k, sms)
        scratch, flags = fixup_buffers(meta, m, n, k, grid, 1, stream)
        args = runtime.named_args(
            meta["signature"], tmA=tm_a, tmB=tm_b, C=tc.address, tmC=tm_c, M=m, N=n, K=k,
            batch=1, bias=tc.address, R=tc.address, alpha=1.0, beta=0.0, scale=1.0,
            workspace=scratch, flags=flags, scale_a=sa.address, scale_b=sb.address)  # fmt: skip
        launch = kernel.launcher(grid=(grid, 1, 1), block=tuple(meta["block"]), args=args,
                                 stream=stream)  # fmt: skip
        launch.scratch = bool(scratch or flags)
    return launch, out


def blockwise_mm(a, b, scale_a, scale_b, *, out=None, out_dtype="bf16", stream=None,
                 config=None):  # fmt: skip
    """out = a @ b with DeepSeek-style block scales (the module docstring);
    returns out.

    a        (M, K) e4m3 or e5m2, row-major
    b        (K, N) of a's type, K-major: an (N, K) weight's .T
    scale_a  (M, ceil(K / 128)) f32, contiguous: per row and 128-wide K block
    scale_b  (ceil(N / 128), ceil(K / 128)) f32, contiguous: per 128 x 128 block
    out      (M, N) contiguous storage; default: a new tensor
    out_dtype  bf16 (default), f16 or f32

    Under torch.compile and torch.export the call becomes the custom op
    `torch.ops.nvwgmma.blockwise_mm` (nvwgmma.kernel.torch_ops).
    """
    if _calls.compiling():  # torch.compile / torch.export: the traceable torch op
        from ..torch_ops import traced_blockwise_mm

        return traced_blockwise_mm(a, b, scale_a, scale_b, out=out, out_dtype=out_dtype,
                                   stream=stream, config=config)  # fmt: skip
    launch, out = prepare_blockwise(a, b, scale_a, scale_b, out=out, out_dtype=out_dtype,
                                    stream=stream, config=config)  # fmt: skip
    launch()
    return out
