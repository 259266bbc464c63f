"""`attention(q, k, v, ...)` on torch tensors or cupy arrays: checks,
4-D strided tensor maps, the kernel (precompiled or compiled on first use,
nvwgmma.kernel.cache), launch on the caller's stream.

    from nvwgmma.kernel.attention import attention
    o = attention(q, k, v, causal=True)               # (batch, seq, heads, head dim)
    o, lse = attention(q, k, v, return_lse=True)      # lse: (batch, heads, seq) f32
    o = attention(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=s)  # varlen:
                                                      # (tokens, heads, head dim)
    o = attention(q8, k8, v8, v_descale=sv)           # fp8 e4m3 in, bf16 out
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import _calls
from ..fastmath import LOG2E
from .common import kernel_family
from .config import AttentionConfig, default_config

__all__ = [
    "Plan", "attention", "kernel_key", "load_kernel", "plan", "precompile", "prepare",
    "shipped_configs", "write_kernel",
]  # fmt: skip


def _signature():
    from .kernel import SIGNATURE

    return SIGNATURE


def _build(config: AttentionConfig):
    from .kernel import build_attention

    return build_attention(config)


# The PTX cache's view of the forward kernel (load_kernel and write_kernel
# are looked up at call time: tests replace them).
_FAMILY = kernel_family(_build, _signature)
kernel_key = _FAMILY.key


def write_kernel(directory: str, config: AttentionConfig) -> str:
    return _FAMILY.write(directory, config)


def load_kernel(config: AttentionConfig):
    return _FAMILY.load(config)


def shipped_configs():
    """Every configuration `attention` can pick: head dims 64/128/256,
    bf16/f16/e4m3, causal or not, dense or varlen, at head dim 256 causal
    both schedulings (by sequence length), and fp8 with V's keys in either
    order."""
    from .config import PERSISTENT_D256_CAUSAL_FROM

    configs = []
    for d in (64, 128, 256):
        for t in ("bf16", "f16", "e4m3"):
            for c in (False, True):
                for v in (False, True):
                    for seq in (None, PERSISTENT_D256_CAUSAL_FROM):
                        config = default_config(d, dtype=t, causal=c, varlen=v, seq=seq)
                        # fp8: V as given (keys contiguous) or copied (keys permuted)
                        for vp in (False, True) if t == "e4m3" else (False,):
                            if config.replace(v_permuted=vp) not in configs:
                                configs.append(config.replace(v_permuted=vp))
    return configs


def precompile(directory: str, configs=None) -> list[str]:
    """The PTX of `configs` (default: every shipped one) and, by default,
    of the fp8 Vᵀ copies (vcopy) they launch and of the backward's kernels
    (attention.backward)."""
    from . import vcopy
    from .backward import launch as backward

    paths = [write_kernel(directory, c) for c in (configs or shipped_configs())]
    if configs:
        return paths
    return (
        paths + [vcopy.write(directory, c) for c in vcopy.CONFIGS] + backward.precompile(directory)
    )


@dataclass(frozen=True)
class Plan:
    """What attention's checks decided (tensors as read by the launcher)."""

    q: object
    k: object
    v: object  # fp8: V with the keys contiguous (the kernel's Vᵀ), or None: copied so
    varlen: bool
    batch: int
    sq: int
    sk: int
    config: AttentionConfig
    cu_q: object = None
    cu_k: object = None
    v_given: object = None  # v as given
    max_k: int = 0  # varlen: the longest key sequence (fp8's Vᵀ copy)


def _fail(message):
    raise ValueError(message)


def token_map(address: int, box: dict, shape, strides, elem_bytes: int, *, transposed=False):
    """The encoded 4-D tensor map (head dim, heads, tokens, batch) of a
    (batch, tokens, heads, head dim) tensor -- varlen's (tokens, heads, head
    dim) as one batch entry, its stride past the tensor -- or, `transposed`,
    (tokens, head dim, heads, batch): the keys contiguous (fp8's Vᵀ). `box`:
    a kernel meta's box entry; strides in elements."""
    from .. import runtime

    if len(shape) == 3:
        span = -(-max(x * n for x, n in zip(strides, shape)) * elem_bytes // 16) * 16 // elem_bytes
        strides, shape = (span, *strides), (1, *shape)
    sb, ss, sh, sd = (x * elem_bytes for x in strides)
    d = shape[3]
    if transposed:
        sizes, strides = (shape[1], d, shape[2], shape[0]), (sd, sh, sb)
    else:
        sizes, strides = (d, shape[2], shape[1], shape[0]), (sh, ss, sb)
    return runtime.encode_map(address, box["data_type"], sizes=sizes, strides=strides,
                              box=box["box"], swizzle=box["swizzle"])  # fmt: skip


def _tensor(value, what):
    from ..gemm.launch import _Tensor

    t = _Tensor(value, what)
    if t.device is None:
        _fail(f"{what} must be on a CUDA device, but got {t.device_name}")
    return t


def _check_strides(t, what, contiguous=-1, along="head dimension"):
    """TMA's rules for `t`: the `contiguous` axis has stride 1, the others
    are multiples of 16 bytes, the address 16-byte aligned."""
    from ..gemm.launch import _ELEMENT_BYTES

    if t.strides[contiguous] != 1:
        _fail(f"{what} must have a contiguous {along} (stride 1), but got {t.strides}")
    size = _ELEMENT_BYTES[t.dtype]
    for axis, s in enumerate(t.strides):
        if axis != contiguous % len(t.strides) and (s * size) % 16:
            _fail(f"{what}'s strides must be multiples of 16 bytes for TMA, but got {t.strides}")
    if t.address % 16:
        _fail(f"{what} must be 16-byte aligned for TMA, but got address {t.address:#x}")


def attention(q, k, v, *, causal=False, scale=None, cu_seqlens_q=None, cu_seqlens_k=None,
              max_seqlen_q=None, max_seqlen_k=None, out=None, lse=None, return_lse=False,
              stream=None, config=None, q_descale=1.0, k_descale=1.0, v_descale=1.0):  # fmt: skip
    """softmax(Q Kᵀ · scale) V per head, FlashAttention's conventions.

    Dense: q (batch, Sq, Hq, D), k and v (batch, Sk, Hkv, D), any strides
    with the head dim contiguous; Hq a multiple of Hkv (grouped-query /
    multi-query attention). Varlen: q (total_q, Hq, D), k and v (total_k,
    Hkv, D), `cu_seqlens_q`/`cu_seqlens_k` int32 (batch + 1) cumulative
    offsets, `max_seqlen_q` the longest query sequence (`max_seqlen_k`
    the longest key sequence: fp8 needs it). bf16 or f16; D 64,
    128 or 256. fp8: e4m3 torch tensors, O in bf16; the scores are
    scaled by q_descale x k_descale and O by v_descale (the inputs'
    per-tensor quantisation scales); v with its keys contiguous (e.g. a
    (batch, Hkv, D, Sk) tensor transposed to (batch, Sk, Hkv, D)) is read as
    it is, one with its head dim contiguous is first transposed into a
    scratch copy on the stream (fp8 wgmma reads B only K-major).
    `causal` masks key j for query i when j > i + Sk - Sq (bottom-right
    aligned); a query row with no key gets 0 (LSE -inf). `scale`
    defaults to 1/sqrt(D). Returns O (q's shape, contiguous), and
    with `return_lse` the f32 log-sum-exp (batch, Hq, Sq) -- varlen:
    (Hq, total_q). `out` and `lse` may be given preallocated.

    A call repeating an earlier one's layout (tensors of the same shapes,
    strides, dtypes and devices, addresses as aligned; the same arguments)
    skips the checks and reuses the packed launch, re-pointed at this
    call's tensors -- a training step's new activations included (fp8: V's
    transposed copy re-pointed at the new V) -- so the host's part of a
    call stays well under the kernel's time even at 512 tokens.

    The kernel runs on the tensors' device, whichever device is current;
    calls can be captured into CUDA graphs, a first call inside the capture
    too; under torch.compile and torch.export the call becomes the custom
    op `torch.ops.nvwgmma.attention` (nvwgmma.kernel.torch_ops)."""
    if _calls.compiling():  # torch.compile / torch.export: the traceable torch op
        from ..torch_ops import traced_attention

        return traced_attention(q, k, v, causal=causal, scale=scale, cu_seqlens_q=cu_seqlens_q,
                                cu_seqlens_k=cu_seqlens_k, max_seqlen_q=max_seqlen_q,
                                max_seqlen_k=max_seqlen_k, out=out, lse=lse,
                                return_lse=return_lse, stream=stream, config=config,
                                q_descale=q_descale, k_descale=k_descale,
                                v_descale=v_descale)  # fmt: skip
    from .autograd import needs_grad

    if needs_grad(q, k, v):  # training: the differentiable op (attention.autograd)
        if out is not None or lse is not None or config is not None or (
                q_descale, k_descale, v_descale) != (1.0, 1.0, 1.0):  # fmt: skip
            _fail(
                "attention with inputs that require grad takes no out, lse, config or "
                "descales (the backward needs its own saved O and LSE)"
            )
        from .autograd import differentiable_attention

        return differentiable_attention(q, k, v, causal=causal, scale=scale,
                                        cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k,
                                        max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k,
                                        return_lse=return_lse)  # fmt: skip
    s = _calls.stream_of(stream, q)
    inputs = (q, k, v, cu_seqlens_q, cu_seqlens_k)
    key = _calls.layout_key((*inputs, max_seqlen_q, max_seqlen_k, bool(causal), scale, s, config,
                             out, lse, q_descale, k_descale, v_descale))  # fmt: skip
    hit = _calls.reusable(_recent, key, s)
    if hit is None:
        launch, o, lse = prepare(q, k, v, causal=causal, scale=scale, cu_seqlens_q=cu_seqlens_q,
                                 cu_seqlens_k=cu_seqlens_k, max_seqlen_q=max_seqlen_q,
                                 max_seqlen_k=max_seqlen_k, out=out, lse=lse, stream=stream,
                                 config=config, q_descale=q_descale, k_descale=k_descale,
                                 v_descale=v_descale)  # fmt: skip
        launch()
        _calls.remember(_recent, key, launch, s)  # after its launch: others relaunch it
    else:
        o, lse = _calls.relaunch(hit, out, lse, inputs=inputs)
    return (o, lse) if return_lse else o


# Launches of recent calls, keyed by everything the checks read but the
# addresses (_calls.layout_key); the inputs', the output's and the LSE's
# slots (and fp8's V copy's source) are rewritten per call.
_recent: dict = {}


def prepare(q, k, v, *, causal=False, scale=None, cu_seqlens_q=None, cu_seqlens_k=None,
            max_seqlen_q=None, max_seqlen_k=None, out=None, lse=None, stream=None, config=None,
            q_descale=1.0, k_descale=1.0, v_descale=1.0):  # fmt: skip
    """(launch, out, lse): everything `attention` does for this call but
    the launch, which `launch()` repeats on the same tensors, unchecked (a
    loop, a benchmark, a CUDA graph capture); `launch.outputs(out, lse)`
    points it at another O and LSE (new ones where None) and returns them.
    The kernel is loaded for, and launches on, the tensors' device."""
    from .. import runtime

    p = plan(q, k, v, causal=causal, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k,
             max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k, config=config)  # fmt: skip
    descales = [_descale(x, name) for x, name in
                ((q_descale, "q_descale"), (k_descale, "k_descale"), (v_descale, "v_descale"))]  # fmt: skip
    if not p.config.fp8 and descales != [1.0] * 3:
        _fail(f"descales scale fp8 inputs, so q must be e4m3, but got {p.q.dtype}")
    with runtime.on_device(p.q.device):
        return _prepared(p, scale, out, lse, stream, descales)


def _prepared(p, scale, out, lse, stream, descales):
    """prepare's work once the call is checked, in the tensors' context."""
    from .. import runtime
    from ..gemm.launch import _ELEMENT_BYTES, _contiguous
    from .kernel import SIGNATURE

    tq, tk, tv, varlen, batch, sq, sk = p.q, p.k, p.v, p.varlen, p.batch, p.sq, p.sk
    cq, ck = p.cu_q, p.cu_k
    d, hq, hkv = tq.shape[-1], tq.shape[-2], tk.shape[-2]
    kernel, meta = load_kernel(p.config)
    # Output and LSE, contiguous.
    out_dtype = p.config.out_dtype
    new_o = tq.allocator(tq.shape, out_dtype)
    o = out if out is not None else new_o()
    to = _tensor(o, "out")
    if to.shape != tq.shape or to.dtype != out_dtype:
        _fail(f"out must be {out_dtype} of shape {tq.shape}, but got {to.dtype} {to.shape}")
    if p.config.tma_store:
        _check_strides(to, "out")
    tokens_q = tq.shape[0]
    lse_shape = (hq, tokens_q) if varlen else (batch, hq, sq)
    new_lse = tq.allocator(lse_shape, "f32")
    lse = new_lse() if lse is None else lse
    tl = _tensor(lse, "lse")
    if tl.shape != lse_shape or tl.dtype != "f32" or not _contiguous(tl):
        _fail(f"lse must be a contiguous f32 {lse_shape}, but got {tl.dtype} {tl.shape}")
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    on = _calls.stream_of(stream, tq.value)
    v_major = p.config.v_major

    # It reads t's dtype, shape and strides only: the O map's closure, kept
    # by the launch cache, must hold no tensor (a held O or Q keeps its
    # memory from the allocator, so every later call would miss the cache).
    def map_of(t, name, address):
        box = meta["boxes"][name]
        return token_map(address, box, t.shape, t.strides, _ELEMENT_BYTES[t.dtype],
                         transposed=name == "V" and v_major == "K")  # fmt: skip

    copy_v = None
    if p.config.fp8 and tv is None:  # V with its head dim contiguous: a Vᵀ copy
        packed = (ck.address, batch, p.max_k) if varlen else None
        tv, copy_v = _transposed_v(p.v_given, on, p.config.v_permuted, packed)
    # O's map (tma_store) is read with O's box over O's own strides: a new
    # O of the same call is contiguous like the first one checked here.
    maps = [map_of(t, name, t.address) for t, name in ((tq, "Q"), (tk, "K"), (tv, "V"))]
    maps.append(map_of(to, "O", to.address) if p.config.tma_store else maps[0])  # (unread)
    if varlen:
        o_strides = (0, to.strides[0], to.strides[1])
        lse_strides = (0, tokens_q)
    else:
        o_strides = (to.strides[0], to.strides[1], to.strides[2])
        lse_strides = (hq * sq, sq)
    args = [
        *(("map", m) for m in maps),
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
        ("f32", scale * descales[0] * descales[1] * LOG2E),
        ("i32", hq),
        ("i32", batch),
        ("i32", _section(p, d, hq // hkv) if p.config.persistent else 1),
        # The dynamic walk's counters: zero at every launch (the kernel resets them).
        ("u64", runtime.workspace(8, on, "attention tiles") if p.config.dynamic else 0),
        ("f32", descales[2]),
    ]
    grid = (-(-sq // meta["block_m"]), hq, batch)
    if p.config.persistent:  # one CTA per SM (or per unit, when fewer) walks the tiles
        # A static causal walk's units are pairs of query blocks (tiles.paired_tile).
        paired = p.config.causal and not p.config.dynamic
        units = (-(-grid[0] // 2) if paired else grid[0]) * hq * batch
        grid = (min(units, runtime.device_attribute("MULTIPROCESSOR_COUNT")), 1, 1)
    launch = kernel.launcher(grid=grid, block=meta["block"], args=args, stream=on)
    if copy_v is not None:
        launch = _AfterCopy(launch, copy_v)
    # Scratch that calls share: the dynamic walk's counters, V's copy.
    launch.scratch = bool(p.config.dynamic or copy_v is not None)
    # Contiguous outputs: a new O has `to`'s strides when `to` is new or contiguous.
    fresh = out is None or _contiguous(to)
    o_layout = _Layout(to.dtype, to.shape, to.strides)
    o_map = (lambda at: map_of(o_layout, "O", at)) if p.config.tma_store else None
    # A call of this layout on other tensors: its maps and addresses.
    layouts = [(name, _Layout(t.dtype, t.shape, t.strides))
               for t, name in ((tq, "Q"), (tk, "K"), (tv, "V"))]  # fmt: skip
    maps_of = [(f"tm{name}", lambda at, n=name, t=t: map_of(t, n, at)) for name, t in layouts]
    if copy_v is None:
        launch.inputs = _calls.Inputs(launch, SIGNATURE, [*maps_of, ("cuQ", None), ("cuK", None)])
    else:  # the kernel reads V's copy, always in the same place
        from . import vcopy

        launch.inputs = _CopiedV(
            _calls.Inputs(launch, SIGNATURE, [*maps_of[:2], ("cuQ", None), ("cuK", None)]),
            _calls.Inputs(copy_v, vcopy.SIGNATURE, [("src", None), ("cu", None)]))  # fmt: skip
    launch.outputs = _calls.Outputs(launch, SIGNATURE, [
        ("out", "O", new_o if fresh else None, "tmO" if o_map else None, o_map),
        ("lse", "LSE", new_lse, None, None)])  # fmt: skip
    return launch, o, lse


@dataclass(frozen=True)
class _Layout:
    """What a tensor map is encoded from, without the tensor."""

    dtype: str
    shape: tuple
    strides: tuple


def _descale(value, what) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail(f"{what} must be a number, but got {type(value).__name__}")
    if not (math.isfinite(value) and value > 0):
        _fail(f"{what} must be finite and positive, but got {value}")
    return float(value)


def _transposed_v(tv, stream, permuted, packed=None):
    """(the Vᵀ an fp8 kernel reads, a callable refreshing it from `tv` on
    `stream`), viewed as (batch, keys, heads, d): keys contiguous, padded
    with zero keys to 32 (TMA's 16-byte strides; whole permuted groups);
    `permuted`: in every 32 keys, fragment.fp8_key_order's order. `packed`
    (varlen: cu_seqlens_k's address, batch, the longest key sequence):
    sequence b becomes batch entry b, its keys from 0. One pass of the
    vcopy kernel, on the attention kernel's stream."""
    import torch

    from . import vcopy

    if packed is None:
        b, s, h, d = tv.shape
        sb, ss, sh, _ = tv.strides  # bytes: one-byte elements
        cu, longest = 0, s
    else:
        (s, h, d), (ss, sh, _) = tv.shape, tv.strides
        cu, b, longest = packed
        sb = 0
    padded = -(-longest // 32) * 32
    kernel, meta = vcopy.load(vcopy.VCopyConfig(d, permuted, packed is not None))
    storage = torch.empty(b, h, d, padded, dtype=torch.uint8, device=tv.value.device)
    args = [("u64", tv.address), ("u64", storage.data_ptr()), ("i32", s), ("i32", h),
            ("i64", sb), ("i32", ss), ("i32", sh), ("i32", padded), ("u64", cu)]  # fmt: skip
    grid = (-(-padded // meta["keys_per_cta"]), h, b)
    copy = kernel.launcher(grid=grid, block=meta["block"], args=args, stream=stream)
    copy.storage = storage  # alive as long as the launch
    return _tensor(storage.view(tv.value.dtype).permute(0, 3, 1, 2), "v"), copy


class _CopiedV:
    """`launch.inputs(q, k, v, cu_seqlens_q, cu_seqlens_k)` of an fp8 launch
    whose V goes through the Vᵀ copy: Q's and K's maps and cu_seqlens in the
    kernel's parameters; V's address and cu_seqlens_k in the copy's."""

    def __init__(self, kernel, copy):
        self.kernel, self.copy = kernel, copy

    def __call__(self, q, k, v, cu_q, cu_k):
        self.kernel(q, k, cu_q, cu_k)
        self.copy(v, cu_k)


class _AfterCopy:
    """A prepared launch that first refreshes V's transposed copy."""

    def __init__(self, launch, copy):
        self.launch, self.copy = launch, copy

    def set(self, index, value):
        self.launch.set(index, value)

    def __call__(self):
        self.copy()
        self.launch()


def _section(p, d, group):
    """(head, batch) pairs per L2 section of a causal persistent walk."""
    from .. import runtime
    from .tiles import l2_section

    return l2_section(runtime.device_attribute("L2_CACHE_SIZE"), p.sk, d, group)


def plan(q, k, v, *, causal=False, cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None,
         max_seqlen_k=None, config=None) -> Plan:  # fmt: skip
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
    if tq.dtype not in ("bf16", "f16", "e4m3"):
        _fail(f"q must be bf16, f16 or e4m3, but got {tq.dtype}")
    for t in (tq, tk):
        _check_strides(t, t.what)
    v_read = tv
    if tq.dtype == "e4m3" and varlen and max_seqlen_k is None:
        _fail("e4m3 varlen attention needs max_seqlen_k (V's transposed copy is dense)")
    if tq.dtype == "e4m3" and varlen and tv.strides[-1] != 1:
        _fail(f"e4m3 varlen attention takes v with a contiguous head dimension (it is "
              f"copied), but got strides {tv.strides}")  # fmt: skip
    if tq.dtype == "e4m3" and tv.strides[-1] != 1:
        # fp8 reads Vᵀ: the keys (the tokens axis) contiguous.
        _check_strides(tv, "v", contiguous=-3, along="head dimension or keys")
    else:
        _check_strides(tv, "v")  # (fp8: vcopy's 16-byte loads)
        if tq.dtype == "e4m3":
            v_read = None  # attention transposes it
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
    c = config or default_config(d, dtype=tq.dtype, causal=bool(causal), varlen=varlen, seq=sq)
    if config is None and tq.dtype == "e4m3" and v_read is None:
        c = c.replace(v_permuted=True)  # the Vᵀ copy puts the keys in P's register order
    if c.dtype != tq.dtype:
        _fail(f"config.dtype must be q's dtype {tq.dtype}, but got {c.dtype}")
    max_k = int(max_seqlen_k) if varlen and max_seqlen_k is not None else sk
    return Plan(tq, tk, v_read, varlen, batch, sq, sk, c,
                cq if varlen else None, ck if varlen else None, tv, max_k)  # fmt: skip
