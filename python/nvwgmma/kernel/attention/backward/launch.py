"""`attention_backward(do, q, k, v, o, lse, ...)` on torch tensors: the
gradients of `attention` with respect to q, k and v.

    o, lse = attention(q, k, v, causal=True, return_lse=True)
    dq, dk, dv = attention_backward(do, q, k, v, o, lse, causal=True)

Three steps on the tensors' stream: the preparation kernel (D =
rowsum(dO * O), the LSE in log2 units laid out per query block, dQ's f32
buffer zeroed where the backward adds); the backward kernel (dK and dV
written, dQ times the softmax scale added into the buffer); the buffer
converted to q's dtype (torch).
"""

from __future__ import annotations

import math
from functools import lru_cache

__all__ = [
    "attention_backward", "backward_configs", "load_backward", "precompile", "write_backward",
]  # fmt: skip

_PRECOMPILE = "python -m nvwgmma.kernel.attention --precompile DIR"


@lru_cache(maxsize=256)
def backward_key(config) -> str:
    from ... import cache
    from .kernel import SIGNATURE

    return cache.config_key(config, SIGNATURE)


def _build(config):
    from .kernel import build_attention_backward

    return lambda: build_attention_backward(config)


def write_backward(directory: str, config) -> str:
    from ... import cache

    return cache.write(directory, backward_key(config), _build(config))


def load_backward(config):
    from ... import cache

    return cache.load(backward_key(config), _build(config), _PRECOMPILE)


def backward_configs():
    """Every configuration `attention_backward` can pick."""
    from .config import default_backward_config

    return [default_backward_config(d, dtype=t, causal=c, varlen=v).replace(deterministic=x)
            for d in (64, 128, 256) for t in ("bf16", "f16") for c in (False, True)
            for v in (False, True) for x in (False, True)]  # fmt: skip


def precompile(directory: str) -> list[str]:
    """The PTX of every backward configuration and of the preparation
    pass each launches."""
    from . import prepare

    configs = backward_configs()
    paths = [write_backward(directory, c) for c in configs]
    kinds = sorted({(c.head_dim, c.dtype, c.varlen) for c in configs})
    return paths + [prepare.write(directory, prepare.PrepareConfig(*k)) for k in kinds]


def attention_backward(do, q, k, v, o, lse, *, causal=False, scale=None, cu_seqlens_q=None,
                       cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None,
                       deterministic=None, config=None):  # fmt: skip
    """(dq, dk, dv) of O = attention(q, k, v, causal, scale, ...) for the
    output gradient `do`, given the forward's O and its f32 log-sum-exp
    (`attention(..., return_lse=True)`). Shapes as `attention`'s: dense
    q (batch, Sq, Hq, D), k and v (batch, Sk, Hkv, D), lse (batch, Hq, Sq);
    varlen (tokens, heads, D) with cu_seqlens and lse (Hq, total_q). dk and
    dv are summed over the query heads sharing a K/V head. bf16 or f16,
    head dim 64, 128 or 256. The gradients come back contiguous in q's dtype.

    dQ sums the contributions of every key block; by default they are added
    in whatever order the blocks finish (dq may differ in its last bits from
    run to run; dk and dv never do). `deterministic` adds them in a fixed
    order, so dq repeats bit for bit -- slower, as blocks wait their turn.
    None (the default): what torch.use_deterministic_algorithms set."""
    import torch

    from ... import runtime
    from ..launch import _fail, plan
    from .config import default_backward_config

    p = plan(q, k, v, causal=causal, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k,
             max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k)  # fmt: skip
    if p.q.dtype not in ("bf16", "f16"):
        _fail(f"the backward takes bf16 or f16, but got {p.q.dtype}")
    d = q.shape[-1]
    if d not in (64, 128, 256):
        _fail(f"the backward takes head dim 64, 128 or 256, but got {d}")
    for t, name in ((do, "do"), (o, "o")):
        if tuple(t.shape) != tuple(q.shape) or t.dtype != q.dtype or t.device != q.device:
            _fail(f"{name} must be {q.dtype} of q's shape {tuple(q.shape)} on {q.device}, but got "
                  f"{t.dtype} {tuple(t.shape)} on {t.device}")  # fmt: skip
    hq = q.shape[-2]
    lse_shape = (hq, q.shape[0]) if p.varlen else (p.batch, hq, p.sq)
    if tuple(lse.shape) != lse_shape or lse.dtype != torch.float32 or lse.device != q.device:
        _fail(f"lse must be float32 of shape {lse_shape} on {q.device}, but got {lse.dtype} "
              f"{tuple(lse.shape)} on {lse.device}")  # fmt: skip
    if deterministic is None:
        deterministic = torch.are_deterministic_algorithms_enabled()
    c = config or default_backward_config(d, dtype=p.q.dtype, causal=bool(causal),
                                          varlen=p.varlen).replace(deterministic=bool(deterministic))  # fmt: skip
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    with runtime.on_device(q.device.index):
        return _run(c, p, do, q, k, v, o, lse, scale)


def _run(c, p, do, q, k, v, o, lse, scale):
    import torch

    from ... import runtime
    from ...fastmath import LOG2E
    from ...gemm.launch import _ELEMENT_BYTES
    from ..launch import token_map
    from . import prepare

    kernel, meta = load_backward(c)
    bm = c.block_m
    # One layout for both (the preparation reads them with the same strides),
    # TMA's for dO: contiguous (no copy when they are, as autograd's are).
    do, o = do.contiguous(), o.contiguous()
    hq, hkv, d = q.shape[-2], k.shape[-2], q.shape[-1]
    padded = -(-p.sq // bm) * bm
    # D, LSE in log2 units (batch, Hq, padded) and dQ's f32 buffer, laid out
    # like q over whole query blocks (a varlen sequence's last block adds
    # zeros into the next one's rows), zeroed where the kernel adds.
    rows = {"dtype": torch.float32, "device": q.device}
    lse2, dd = (torch.empty((p.batch, hq, padded), **rows) for _ in range(2))
    if p.varlen:
        dq_acc = torch.empty((1, q.shape[0] + bm, hq, d), **rows)
        o_strides, lse_strides = (0, *do.stride()[:2]), (0, lse.stride(0))
    else:
        dq_acc = torch.empty((p.batch, padded, hq, d), **rows)
        o_strides, lse_strides = do.stride()[:3], lse.stride()[:2]
    stream = torch.cuda.current_stream(q.device).cuda_stream
    prep, prep_meta = prepare.load(prepare.PrepareConfig(d, p.q.dtype, p.varlen))
    cq = p.cu_q.address if p.varlen else 0
    prep.launcher(grid=(padded // prepare.ROWS, hq, p.batch), block=prep_meta["block"], args=[
        ("u64", do.data_ptr()), ("u64", o.data_ptr()), ("u64", lse.data_ptr()),
        ("u64", lse2.data_ptr()), ("u64", dd.data_ptr()), ("u64", dq_acc.data_ptr()),
        ("u64", cq), ("i32", p.sq), ("i32", padded), ("i32", bm), ("i32", hq),
        ("i64", o_strides[0]), ("i32", o_strides[1]), ("i32", o_strides[2]),
        ("i64", lse_strides[0]), ("i32", lse_strides[1]),
        # varlen: every sequence in dQacc's one batch entry, at its offset
        ("i64", 0 if p.varlen else dq_acc.stride(0)), ("i32", dq_acc.stride(1)),
        ("i32", dq_acc.stride(2)),
    ], stream=stream)()  # fmt: skip
    # deterministic: each dQ block's turn counter, from 0 at every launch
    sem = (torch.zeros(p.batch * hq * (padded // bm), dtype=torch.int32, device=q.device)
           if c.deterministic else None)  # fmt: skip
    dk = torch.empty(k.shape, dtype=q.dtype, device=q.device)
    dv = torch.empty(v.shape, dtype=q.dtype, device=q.device)
    kv_strides = (0, *dk.stride()[:2]) if p.varlen else dk.stride()[:3]

    def map_of(t, name):
        e = 4 if name == "dQ" else _ELEMENT_BYTES[p.q.dtype]
        return token_map(t.data_ptr(), meta["boxes"][name], tuple(t.shape), tuple(t.stride()), e)

    def rows_map(t):
        b, h, n = t.shape
        return runtime.encode_map(t.data_ptr(), "FLOAT32", sizes=(n, h, b),
                                  strides=(n * 4, h * n * 4), box=meta["boxes"]["row"]["box"],
                                  swizzle="none")  # fmt: skip

    ck = p.cu_k.address if p.varlen else 0
    longest_k = p.max_k if p.varlen else p.sk
    if p.varlen and not longest_k:
        longest_k = int((p.cu_k.value[1:] - p.cu_k.value[:-1]).max())
    args = [
        ("map", map_of(q, "Q")),
        ("map", map_of(k, "K")),
        ("map", map_of(v, "K")),
        ("map", map_of(do, "Q")),
        ("map", rows_map(lse2)),
        ("map", rows_map(dd)),
        ("map", map_of(dq_acc, "dQ")),
        ("u64", dk.data_ptr()),
        ("u64", dv.data_ptr()),
        ("u64", cq),
        ("u64", ck),
        ("i32", p.sq),
        ("i32", p.sk),
        ("i32", hq // hkv),
        ("i64", kv_strides[0]),
        ("i32", kv_strides[1]),
        ("i32", kv_strides[2]),
        ("f32", scale * LOG2E),
        ("f32", scale),
        ("u64", sem.data_ptr() if sem is not None else 0),
        ("i32", hq),
        ("i32", padded // bm),
    ]
    grid = (-(-longest_k // c.block_n), hkv, p.batch)
    kernel.launcher(grid=grid, block=meta["block"], args=args, stream=stream)()
    # dQ came out scaled: one conversion (the inputs stay alive until the
    # kernels read them: the caching allocator reuses memory in stream order).
    dq = dq_acc[0, : q.shape[0]] if p.varlen else dq_acc[:, : p.sq]
    return dq.to(q.dtype), dk, dv
