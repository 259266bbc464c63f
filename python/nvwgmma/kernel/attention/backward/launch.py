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

from ..common import kernel_family

__all__ = [
    "attention_backward", "backward_configs", "load_backward", "precompile", "write_backward",
]  # fmt: skip


def _signature():
    from .kernel import SIGNATURE

    return SIGNATURE


def _build(config):
    from .kernel import build_attention_backward

    return build_attention_backward(config)


# The PTX cache's view of the backward kernel.
_FAMILY = kernel_family(_build, _signature)
backward_key, write_backward, load_backward = _FAMILY.key, _FAMILY.write, _FAMILY.load


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
    varlen (tokens, heads, D) with cu_seqlens and lse (Hq, total_q) --
    give max_seqlen_k too: without it the longest key sequence is read from
    cu_seqlens_k, a device synchronisation (and not allowed in a CUDA graph
    capture). dk and dv are summed over the query heads sharing a K/V head.
    bf16 or f16, head dim 64, 128 or 256. The gradients come back
    contiguous in q's dtype.

    dQ sums the contributions of every key block; by default they are added
    in whatever order the blocks finish (dq may differ in its last bits from
    run to run; dk and dv never do). `deterministic` adds them in a fixed
    order, so dq repeats bit for bit -- slower, as blocks wait their turn.
    None (the default): what torch.use_deterministic_algorithms set.

    A call repeating an earlier one's layout (tensors of the same shapes,
    strides, dtypes and devices, addresses as aligned; the same arguments)
    skips the checks and reuses the packed launches, re-pointed at this
    call's tensors, its new gradients and f32 buffers -- a training step's
    new activations included -- so the host's part stays well under the
    kernels' time at 512 tokens. Calls can be captured into CUDA graphs."""
    import torch

    from ... import _calls
    from ..launch import _fail

    for t, name in ((do, "do"), (q, "q"), (k, "k"), (v, "v"), (o, "o"), (lse, "lse")):
        if not isinstance(t, torch.Tensor) or t.device.type != "cuda":
            where = f"a tensor on {t.device}" if isinstance(t, torch.Tensor) else type(t).__name__
            _fail(f"{name} must be a torch tensor on a CUDA device, but got {where}")
    if deterministic is None:
        deterministic = torch.are_deterministic_algorithms_enabled()
    stream = _calls.default_stream(q)
    # TMA's layout for dO, one for dO and O (the preparation reads them with
    # the same strides): contiguous (no copy when they are, as autograd's are).
    do, o = do.contiguous(), o.contiguous()
    # Not cached: varlen without max_seqlen_k (the grid is read from
    # cu_seqlens_k's values).
    cacheable = cu_seqlens_k is None or max_seqlen_k is not None
    inputs = (do, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k)
    key = _calls.layout_key((*inputs, max_seqlen_q, max_seqlen_k, bool(causal), scale,
                             bool(deterministic), config, stream)) if cacheable else None  # fmt: skip
    launch = _calls.reusable(_recent, key, stream)
    if launch is None:
        launch = prepare(do, q, k, v, o, lse, causal=causal, scale=scale,
                         cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k,
                         max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k,
                         deterministic=bool(deterministic), config=config)  # fmt: skip
        dq_acc, dk, dv = _calls.relaunch(launch, inputs)
        _calls.remember(_recent, key, launch, stream)  # after its launch
    else:
        dq_acc, dk, dv = _calls.relaunch(launch, inputs)
    # dQ came out scaled: one conversion (the inputs stay alive until the
    # kernels read them: the caching allocator reuses memory in stream order).
    return dq_acc.to(q.dtype), dk, dv


# Prepared backward launches of recent calls, keyed by everything the
# checks read but the addresses (_calls.layout_key).
_recent: dict = {}


def prepare(do, q, k, v, o, lse, *, causal=False, scale=None, cu_seqlens_q=None,
            cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None, deterministic=False,
            config=None):  # fmt: skip
    """attention_backward's checks and packed launches for this call's
    layout: a `_Backward`, whose `outputs(inputs)` points the launches at a
    call's (do, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k) and at new
    gradients and f32 buffers, and whose call launches the preparation
    pass and the backward kernel on q's current stream."""
    import torch

    from ... import runtime
    from ..launch import _fail, plan
    from .config import default_backward_config

    p = plan(q, k, v, causal=causal, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k,
             max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k)  # fmt: skip
    if p.q.dtype not in ("bf16", "f16"):
        _fail(f"the backward takes bf16 or f16, but got {p.q.dtype}")
    d = q.shape[-1]
    for t, name in ((do, "do"), (o, "o")):
        if tuple(t.shape) != tuple(q.shape) or t.dtype != q.dtype or t.device != q.device:
            _fail(f"{name} must be {q.dtype} of q's shape {tuple(q.shape)} on {q.device}, but got "
                  f"{t.dtype} {tuple(t.shape)} on {t.device}")  # fmt: skip
    hq = q.shape[-2]
    lse_shape = (hq, q.shape[0]) if p.varlen else (p.batch, hq, p.sq)
    if tuple(lse.shape) != lse_shape or lse.dtype != torch.float32 or lse.device != q.device:
        _fail(f"lse must be float32 of shape {lse_shape} on {q.device}, but got {lse.dtype} "
              f"{tuple(lse.shape)} on {lse.device}")  # fmt: skip
    c = config or default_backward_config(d, dtype=p.q.dtype, causal=bool(causal),
                                          varlen=p.varlen).replace(deterministic=deterministic)  # fmt: skip
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    with runtime.on_device(q.device.index):
        return _prepared(c, p, do, q, k, v, o, lse, scale)


def _prepared(c, p, do, q, k, v, o, lse, scale):
    import torch

    from ... import runtime
    from ...fastmath import LOG2E
    from ...gemm.launch import _ELEMENT_BYTES
    from ..launch import token_map
    from . import prepare as prep

    kernel, meta = load_backward(c)
    bm = c.block_m
    hq, hkv, d = q.shape[-2], k.shape[-2], q.shape[-1]
    padded = -(-p.sq // bm) * bm
    if p.varlen:
        acc_shape = (1, q.shape[0] + bm, hq, d)
        o_strides, lse_strides = (0, *do.stride()[:2]), (0, lse.stride(0))
    else:
        acc_shape = (p.batch, padded, hq, d)
        o_strides, lse_strides = do.stride()[:3], lse.stride()[:2]
    acc_strides = (acc_shape[1] * hq * d, hq * d, d, 1)  # contiguous
    stream = torch.cuda.current_stream(q.device).cuda_stream
    prep_kernel, prep_meta = prep.load(prep.PrepareConfig(d, p.q.dtype, p.varlen))
    cq = p.cu_q.address if p.varlen else 0
    prep_launch = prep_kernel.launcher(grid=(padded // prep.ROWS, hq, p.batch),
                                       block=prep_meta["block"], args=[
        ("u64", do.data_ptr()), ("u64", o.data_ptr()), ("u64", lse.data_ptr()),
        ("u64", 0), ("u64", 0), ("u64", 0),  # LSE2, D, dQacc: per call
        ("u64", cq), ("i32", p.sq), ("i32", padded), ("i32", bm), ("i32", hq),
        ("i64", o_strides[0]), ("i32", o_strides[1]), ("i32", o_strides[2]),
        ("i64", lse_strides[0]), ("i32", lse_strides[1]),
        # varlen: every sequence in dQacc's one batch entry, at its offset
        ("i64", 0 if p.varlen else acc_strides[0]), ("i32", acc_strides[1]),
        ("i32", acc_strides[2]),
    ], stream=stream)  # fmt: skip
    kv_strides = (0, k.shape[1] * d, d) if p.varlen else (k.shape[1] * hkv * d, hkv * d, d)
    element = _ELEMENT_BYTES[p.q.dtype]

    def map_of(t, name):
        box, shape, strides = meta["boxes"][name], tuple(t.shape), tuple(t.stride())
        return lambda address: token_map(address, box, shape, strides, element)

    input_maps = [map_of(t, name) for t, name in ((q, "Q"), (k, "K"), (v, "K"), (do, "Q"))]

    row_box = meta["boxes"]["row"]["box"]

    def rows_map(address):
        n = padded
        return runtime.encode_map(address, "FLOAT32", sizes=(n, hq, p.batch),
                                  strides=(n * 4, hq * n * 4), box=row_box, swizzle="none")  # fmt: skip

    def acc_map(address):
        return token_map(address, meta["boxes"]["dQ"], acc_shape, acc_strides, 4)

    ck = p.cu_k.address if p.varlen else 0
    longest_k = p.max_k if p.varlen else p.sk
    if p.varlen and not longest_k:
        longest_k = int((p.cu_k.value[1:] - p.cu_k.value[:-1]).max())
    args = [
        *(("map", m(t.data_ptr())) for m, t in zip(input_maps, (q, k, v, do))),
        ("map", rows_map(0)),  # LSE2, D, dQacc: per call
        ("map", rows_map(0)),
        ("map", acc_map(0)),
        ("u64", 0),  # dK, dV: per call
        ("u64", 0),
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
        ("u64", 0),  # the deterministic order's counters: per call
        ("i32", hq),
        ("i32", padded // bm),
    ]
    grid = (-(-longest_k // c.block_n), hkv, p.batch)
    launch = kernel.launcher(grid=grid, block=meta["block"], args=args, stream=stream)
    counters = p.batch * hq * (padded // bm) if c.deterministic else 0
    # dQ's rows of the buffer: varlen's one batch entry, or the first Sq
    rows = (0, slice(0, q.shape[0])) if p.varlen else (slice(None), slice(0, p.sq))
    return _Backward(prep_launch, launch, *_slots(prep_launch, launch, input_maps, rows_map,
                                                  acc_map),
                     (p.batch, hq, padded), acc_shape, tuple(k.shape), q.dtype, q.device,
                     counters, rows)  # fmt: skip


def _slots(prep_launch, launch, input_maps, rows_map, acc_map):
    """(the preparation's, the backward kernel's) _calls.Inputs over every
    per-call tensor's parameter, in _Backward.outputs's order; `input_maps`:
    address -> map of Q, K, V, dO; `rows_map` of LSE2 and D, `acc_map` of
    dQ's buffer."""
    from ... import _calls
    from . import prepare
    from .kernel import SIGNATURE

    prep_slots = _calls.Inputs(prep_launch, prepare.SIGNATURE, [
        (name, None) for name in ("dO", "O", "LSE", "cuQ", "lse2", "D", "dQacc")])  # fmt: skip
    main_slots = _calls.Inputs(launch, SIGNATURE, [
        *zip(("tmQ", "tmK", "tmV", "tmdO"), input_maps), ("cuQ", None), ("cuK", None),
        ("tmLSE", rows_map), ("tmD", rows_map), ("tmdQ", acc_map), ("dK", None), ("dV", None),
        ("sem", None)])  # fmt: skip
    return prep_slots, main_slots


class _Backward:
    """The packed launches of one checked backward layout.
    `outputs(inputs)` points both launches at a call's tensors (do, q, k,
    v, o, lse, cu_seqlens_q, cu_seqlens_k: addresses and tensor maps) and
    at its new buffers -- D and the LSE in log2 units, dQ's f32 buffer, dK,
    dV, the deterministic order's counters -- returning (dQ's rows of the
    buffer, dK, dV); calling it launches the preparation pass, then the
    backward kernel. No memory is kept between calls: no scratch that a
    CUDA graph replay and an eager call could share."""

    scratch = False

    def __init__(self, prep, main, prep_slots, main_slots, rows_shape, acc_shape, kv_shape,
                 dtype, device, counters, dq_rows):  # fmt: skip
        self.prep, self.main = prep, main
        self.prep_slots, self.main_slots = prep_slots, main_slots
        self.rows_shape, self.acc_shape, self.kv_shape = rows_shape, acc_shape, kv_shape
        self.dtype, self.device, self.counters, self.dq_rows = dtype, device, counters, dq_rows

    def outputs(self, inputs):
        import torch

        do, q, k, v, o, lse, cu_q, cu_k = inputs
        f32 = {"dtype": torch.float32, "device": self.device}
        lse2, dd = torch.empty(self.rows_shape, **f32), torch.empty(self.rows_shape, **f32)
        dq_acc = torch.empty(self.acc_shape, **f32)
        dk = torch.empty(self.kv_shape, dtype=self.dtype, device=self.device)
        dv = torch.empty(self.kv_shape, dtype=self.dtype, device=self.device)
        # deterministic: each dQ block's turn, from 0 at every launch
        sem = (torch.zeros(self.counters, dtype=torch.int32, device=self.device)
               if self.counters else None)  # fmt: skip
        self.prep_slots(do, o, lse, cu_q, lse2, dd, dq_acc)
        self.main_slots(q, k, v, do, cu_q, cu_k, lse2, dd, dq_acc, dk, dv, sem)
        return dq_acc[self.dq_rows], dk, dv

    def __call__(self):
        self.prep()
        self.main()
