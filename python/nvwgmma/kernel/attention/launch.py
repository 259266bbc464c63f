"""`attention(q, k, v, ...)` on torch tensors or cupy arrays: checks,
4-D strided tensor maps, the kernel (precompiled or compiled on first use,
nvwgmma.kernel.cache), launch on the caller's stream.

    from nvwgmma.kernel.attention import attention
    o = attention(q, k, v, causal=True)               # (batch, seq, heads, head dim)
    o, lse = attention(q, k, v, return_lse=True)      # lse: (batch, heads, seq) f32
    o = attention(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=s)  # varlen:
                                                      # (tokens, heads, head dim)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from .config import AttentionConfig, default_config

__all__ = [
    "Plan", "attention", "kernel_key", "load_kernel", "plan", "precompile", "shipped_configs",
    "write_kernel",
]  # fmt: skip

_PRECOMPILE = "python -m nvwgmma.kernel.attention --precompile DIR"


def kernel_key(config: AttentionConfig) -> str:
    from .. import cache
    from .kernel import SIGNATURE

    return cache.key(config.name, (asdict(config), SIGNATURE))


def _build(config):
    from .kernel import build_attention

    return lambda: build_attention(config)


def write_kernel(directory: str, config: AttentionConfig) -> str:
    from .. import cache

    return cache.write(directory, kernel_key(config), _build(config))


def load_kernel(config: AttentionConfig):
    from .. import cache

    return cache.load(kernel_key(config), _build(config), _PRECOMPILE)


def shipped_configs():
    """Every configuration `attention` can pick: head dims 64/128/256,
    bf16/f16, causal or not, dense or varlen."""
    return [
        default_config(d, dtype=t, causal=c, varlen=v)
        for d in (64, 128, 256)
        for t in ("bf16", "f16")
        for c in (False, True)
        for v in (False, True)
    ]


def precompile(directory: str, configs=None) -> list[str]:
    return [write_kernel(directory, c) for c in (configs or shipped_configs())]


@dataclass(frozen=True)
class Plan:
    """What attention's checks decided (tensors as read by the launcher)."""

    q: object
    k: object
    v: object
    varlen: bool
    batch: int
    sq: int
    sk: int
    config: AttentionConfig
    cu_q: object = None
    cu_k: object = None


def _fail(message):
    raise ValueError(message)


def _tensor(value, what):
    from ..gemm.launch import _Tensor

    t = _Tensor(value, what)
    if t.device is None:
        _fail(f"{what} must be on a CUDA device, but got {t.device_name}")
    return t


def _check_strides(t, what):
    if t.strides[-1] != 1:
        _fail(f"{what} must have a contiguous head dimension (stride 1), but got {t.strides}")
    for s in t.strides[:-1]:
        if (s * 2) % 16:
            _fail(f"{what}'s strides must be multiples of 16 bytes for TMA, but got {t.strides}")
    if t.address % 16:
        _fail(f"{what} must be 16-byte aligned for TMA, but got address {t.address:#x}")


def attention(q, k, v, *, causal=False, scale=None, cu_seqlens_q=None, cu_seqlens_k=None,
              max_seqlen_q=None, out=None, lse=None, return_lse=False, stream=None,
              config=None):  # fmt: skip
    """softmax(Q Kᵀ · scale) V per head, FlashAttention's conventions.

    Dense: q (batch, Sq, Hq, D), k and v (batch, Sk, Hkv, D), any strides
    with the head dim contiguous; Hq a multiple of Hkv (grouped-query /
    multi-query attention). Varlen: q (total_q, Hq, D), k and v (total_k,
    Hkv, D), `cu_seqlens_q`/`cu_seqlens_k` int32 (batch + 1) cumulative
    offsets, `max_seqlen_q` the longest query sequence. bf16 or f16; D 64,
    128 or 256. `causal` masks key j for query i when j > i + Sk - Sq
    (bottom-right aligned); a query row with no key gets 0 (LSE -inf).
    `scale` defaults to 1/sqrt(D). Returns O (like q, contiguous), and
    with `return_lse` the f32 log-sum-exp (batch, Hq, Sq) -- varlen:
    (Hq, total_q). `out` and `lse` may be given preallocated."""
    from .. import runtime
    from ..gemm.launch import _stream

    p = plan(q, k, v, causal=causal, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k,
             max_seqlen_q=max_seqlen_q, config=config)  # fmt: skip
    tq, tk, tv, varlen, batch, sq, sk = p.q, p.k, p.v, p.varlen, p.batch, p.sq, p.sk
    cq, ck = p.cu_q, p.cu_k
    d, hq, hkv = tq.shape[-1], tq.shape[-2], tk.shape[-2]
    kernel, meta = load_kernel(p.config)
    # Output and LSE, contiguous.
    o = out if out is not None else tq.empty(tq.shape, tq.dtype)
    to = _tensor(o, "out")
    if to.shape != tq.shape or to.dtype != tq.dtype:
        _fail(f"out must be {tq.dtype} of shape {tq.shape}, but got {to.dtype} {to.shape}")
    if p.config.tma_store:
        _check_strides(to, "out")
    tokens_q = tq.shape[0]
    lse_shape = (hq, tokens_q) if varlen else (batch, hq, sq)
    lse = tq.empty(lse_shape, "f32") if lse is None else lse
    tl = _tensor(lse, "lse")
    if tl.shape != lse_shape or tl.dtype != "f32" or tl.strides[-1] != 1:
        _fail(f"lse must be a contiguous f32 {lse_shape}, but got {tl.dtype} {tl.shape}")
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    on = _stream(stream, tq)
    maps = []
    # O's map (tma_store) is read with Q's box over O's own strides.
    mapped = [(tq, "Q"), (tk, "K"), (tv, "V")] + ([(to, "O")] if p.config.tma_store else [])
    for t, name in mapped:
        box = meta["boxes"][name]
        if varlen:
            sizes = (d, t.shape[1], t.shape[0], 1)
            strides = (t.strides[1] * 2, t.strides[0] * 2, t.strides[0] * 2 * t.shape[0])
        else:
            sizes = (d, t.shape[2], t.shape[1], t.shape[0])
            strides = (t.strides[2] * 2, t.strides[1] * 2, t.strides[0] * 2)
        maps.append(runtime.tensor_map(t.address, box["data_type"], sizes=sizes,
                                       strides=strides, box=box["box"],
                                       swizzle=box["swizzle"]))  # fmt: skip
    if varlen:
        o_strides = (0, to.strides[0], to.strides[1])
        lse_strides = (0, tokens_q)
    else:
        o_strides = (to.strides[0], to.strides[1], to.strides[2])
        lse_strides = (hq * sq, sq)
    if not p.config.tma_store:
        maps.append(0)
    args = [
        *(("u64", m) for m in maps),
        ("u64", to.address),
        ("u64", tl.address),
        ("u64", cq.address if varlen else 0),
        ("u64", ck.address if varlen else 0),
        ("i32", sq),
        ("i32", sk),
        ("i32", hq // hkv),
        ("i64", o_strides[0]),
        ("i32", o_strides[1]),
        ("i32", o_strides[2]),
        ("i64", lse_strides[0]),
        ("i32", lse_strides[1]),
        ("f32", scale * 1.4426950408889634),
        ("i32", hq),
        ("i32", batch),
        ("i32", _section(p, d, hq // hkv) if p.config.persistent else 1),
        # The dynamic walk's counters: zero at every launch (the kernel resets them).
        ("u64", runtime.workspace(8, on, "attention tiles") if p.config.dynamic else 0),
    ]
    grid = (-(-sq // meta["block_m"]), hq, batch)
    if p.config.persistent:  # one CTA per SM (or per tile, when fewer) walks the tiles
        tiles = grid[0] * hq * batch
        grid = (min(tiles, runtime.device_attribute("MULTIPROCESSOR_COUNT")), 1, 1)
    kernel.launch(grid=grid, block=meta["block"], args=args, stream=on)
    return (o, lse) if return_lse else o


def _section(p, d, group):
    """(head, batch) pairs per L2 section of a causal persistent walk."""
    from .. import runtime
    from .tiles import l2_section

    return l2_section(runtime.device_attribute("L2_CACHE_SIZE"), p.sk, d, group)


def plan(q, k, v, *, causal=False, cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None,
         config=None) -> Plan:  # fmt: skip
    """attention's checks (each a ValueError before anything is loaded or
    launched) and what they decide: the tensors, varlen, batch, Sq, Sk and
    the configuration."""
    tq, tk, tv = _tensor(q, "q"), _tensor(k, "k"), _tensor(v, "v")
    varlen = cu_seqlens_q is not None or cu_seqlens_k is not None
    rank = 3 if varlen else 4
    for t in (tq, tk, tv):
        if len(t.shape) != rank:
            layout = "(tokens, heads, head dim)" if varlen else "(batch, seq, heads, head dim)"
            _fail(f"{t.what} must be {layout}, but got shape {t.shape}")
        if t.dtype != tq.dtype:
            _fail(f"{t.what} must have q's dtype {tq.dtype}, but got {t.dtype}")
        if t.device != tq.device:
            _fail(f"{t.what} must be on q's device {tq.device_name}, but got {t.device_name}")
    if tq.dtype not in ("bf16", "f16"):
        _fail(f"q must be bf16 or f16, but got {tq.dtype}")
    for t in (tq, tk, tv):  # 2-byte elements from here on
        _check_strides(t, t.what)
    d = tq.shape[-1]
    if d not in (64, 128, 256) or tk.shape[-1] != d or tv.shape[-1] != d:
        _fail(f"the head dim must be 64, 128 or 256 for q, k and v, but got "
              f"{tq.shape[-1]}, {tk.shape[-1]}, {tv.shape[-1]}")  # fmt: skip
    if tk.shape != tv.shape:
        _fail(f"k and v must have one shape, but got {tk.shape} and {tv.shape}")
    hq, hkv = tq.shape[-2], tk.shape[-2]
    if hkv == 0 or hq % hkv:
        _fail(f"q's heads must be a multiple of k's heads, but got {hq} and {hkv}")
    if varlen:
        if cu_seqlens_q is None or cu_seqlens_k is None or max_seqlen_q is None:
            _fail("varlen attention needs cu_seqlens_q, cu_seqlens_k and max_seqlen_q")
        cq, ck = _tensor(cu_seqlens_q, "cu_seqlens_q"), _tensor(cu_seqlens_k, "cu_seqlens_k")
        for t in (cq, ck):
            if t.dtype not in ("int32", "<i4") or len(t.shape) != 1 or t.strides[0] != 1:
                _fail(f"{t.what} must be a contiguous int32 vector, but got {t.dtype} {t.shape}")
        if cq.shape != ck.shape or cq.shape[0] < 2:
            _fail(f"cu_seqlens must hold batch + 1 offsets each, but got {cq.shape}, {ck.shape}")
        batch, sq, sk = cq.shape[0] - 1, int(max_seqlen_q), 0
    else:
        batch, sq, sk = tq.shape[0], tq.shape[1], tk.shape[1]
        if tk.shape[0] != batch:
            _fail(f"k must have q's batch {batch}, but got {tk.shape[0]}")
    if sq == 0 or batch == 0 or (not varlen and sk == 0):
        _fail(f"the problem must not be empty, but got batch {batch}, Sq {sq}, Sk {sk}")
    c = config or default_config(d, dtype=tq.dtype, causal=bool(causal), varlen=varlen)
    return Plan(tq, tk, tv, varlen, batch, sq, sk, c,
                cq if varlen else None, ck if varlen else None)  # fmt: skip
