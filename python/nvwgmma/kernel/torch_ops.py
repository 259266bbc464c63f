"""`matmul`, `grouped_mm` and `attention` as torch custom ops, for torch.compile,
torch.export and CUDA-graph capture by inductor (mode="reduce-overhead").

    import nvwgmma.kernel.torch_ops  # registers the ops
    y = torch.ops.nvwgmma.matmul(x, w.T, bias, "gelu", None, None, None, None, None, None)
    o, lse = torch.ops.nvwgmma.attention(q, k, v, True, None, None, None, None, None,
                                         1.0, 1.0, 1.0, None)

Calling `nvwgmma.kernel.gemm.matmul` / `grouped_mm` or
`nvwgmma.kernel.attention.attention` inside a compiled or exported function
needs none of this: they hand the
call to these ops while torch traces. Each op is functional (it writes
only its new outputs) and has a fake implementation that gives the
outputs' shapes and dtypes without a GPU, so the tracer never runs a
kernel. Schemas:

    nvwgmma::matmul(Tensor a, Tensor b, Tensor? bias, str? activation,
        Tensor? residual, str? out_dtype, float? alpha, float? beta,
        float? scale, str? config) -> Tensor
    nvwgmma::grouped_mm(Tensor a, Tensor b, Tensor? offs, Tensor? counts,
        str? out_dtype, str? config, Tensor? bias=None, str? activation=None,
        str? gate=None, Tensor? scale_a=None, Tensor? scale_b=None) -> Tensor
        (scale_a and scale_b: scaled_grouped_mm's fp8 row-wise scales)
    nvwgmma::blockwise_mm(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b,
        str? out_dtype, str? config) -> Tensor
    nvwgmma::attention(Tensor q, Tensor k, Tensor v, bool causal,
        float? scale, Tensor? cu_seqlens_q, Tensor? cu_seqlens_k,
        int? max_seqlen_q, int? max_seqlen_k, float q_descale,
        float k_descale, float v_descale, str? config) -> (Tensor, Tensor)
        (differentiable in q, k and v through:)
    nvwgmma::attention_backward(Tensor do, Tensor q, Tensor k, Tensor v,
        Tensor o, Tensor lse, bool causal, float? scale, Tensor? cu_seqlens_q,
        Tensor? cu_seqlens_k, int? max_seqlen_q, int? max_seqlen_k)
        -> (Tensor, Tensor, Tensor)

`config` is the token of a GemmConfig / AttentionConfig (`config_token`);
the op runs on torch's current stream of the inputs' device.
"""

from __future__ import annotations

import torch

__all__ = [
    "config_token",
    "traced_attention",
    "traced_blockwise_mm",
    "traced_grouped_mm",
    "traced_matmul",
]

_configs: dict = {}  # token -> configuration


# Traced as a constant: Dynamo calls it and takes the string.
@torch.compiler.assume_constant_result
def config_token(config) -> str | None:
    """The string a configuration is passed to the ops by (None: the
    default configuration)."""
    if config is None:
        return None
    token = f"{type(config).__name__}:{config!r}"
    _configs[token] = config
    return token


def _config(token):
    if token is None:
        return None
    if token not in _configs:
        raise ValueError(
            f"config must be a token of config_token() in this process, but got {token!r}"
        )
    return _configs[token]


_FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)


# Defined and implemented through torch.library.Library (the CUDA dispatch
# key) rather than the custom_op decorator: its wrapper cost about 100 us of
# host time per call on an H100's host, more than a decode-sized kernel.
_LIBRARY = torch.library.Library("nvwgmma", "DEF")
_LIBRARY.define(
    "matmul(Tensor a, Tensor b, Tensor? bias, str? activation, Tensor? residual, "
    "str? out_dtype, float? alpha, float? beta, float? scale, str? config) -> Tensor"
)
_LIBRARY.define(
    "grouped_mm(Tensor a, Tensor b, Tensor? offs, Tensor? counts, str? out_dtype, "
    "str? config, Tensor? bias=None, str? activation=None, str? gate=None, "
    "Tensor? scale_a=None, Tensor? scale_b=None) -> Tensor"
)
_LIBRARY.define(
    "blockwise_mm(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, str? out_dtype, "
    "str? config) -> Tensor"
)
_LIBRARY.define(
    "attention(Tensor q, Tensor k, Tensor v, bool causal, float? scale, "
    "Tensor? cu_seqlens_q, Tensor? cu_seqlens_k, int? max_seqlen_q, int? max_seqlen_k, "
    "float q_descale, float k_descale, float v_descale, str? config) -> (Tensor, Tensor)"
)
_LIBRARY.define(
    "attention_backward(Tensor do, Tensor q, Tensor k, Tensor v, Tensor o, Tensor lse, "
    "bool causal, float? scale, Tensor? cu_seqlens_q, Tensor? cu_seqlens_k, "
    "int? max_seqlen_q, int? max_seqlen_k) -> (Tensor, Tensor, Tensor)"
)


def _matmul(a, b, bias, activation, residual, out_dtype, alpha, beta, scale, config):
    from .gemm.launch import matmul

    return matmul(a, b, bias=bias, activation=activation, residual=residual,
                  out_dtype=out_dtype, alpha=alpha, beta=beta, scale=scale,
                  config=_config(config))  # fmt: skip


@torch.library.register_fake("nvwgmma::matmul", lib=_LIBRARY)
def _(a, b, bias, activation, residual, out_dtype, alpha, beta, scale, config):
    if a.dim() not in (2, 3) or b.dim() not in (2, 3):
        raise ValueError(f"a and b must be 2-D or 3-D, but got shapes {a.shape} and {b.shape}")
    torch._check(a.shape[-1] == b.shape[-2], lambda: "a's columns and b's rows must agree (K)")
    from .gemm.config import OUTPUTS
    from .gemm.launch import torch_dtype

    if out_dtype is not None and out_dtype not in OUTPUTS:
        raise ValueError(f"out_dtype must be one of {', '.join(OUTPUTS)}, but got {out_dtype!r}")
    dtype = torch_dtype(out_dtype) if out_dtype else torch.bfloat16 if a.dtype in _FP8 else a.dtype
    shape = (*a.shape[:-1], b.shape[-1])
    return a.new_empty(shape, dtype=dtype)


def _grouped_mm(a, b, offs, counts, out_dtype, config, bias=None, activation=None, gate=None,
                scale_a=None, scale_b=None):  # fmt: skip
    from .gemm.grouped import prepare_grouped

    launch, out = prepare_grouped(a, b, offs=offs, counts=counts, out_dtype=out_dtype,
                                  config=_config(config), bias=bias, activation=activation,
                                  gate=gate, scale_a=scale_a, scale_b=scale_b)  # fmt: skip
    if launch is not None:
        launch()
    return out


@torch.library.register_fake("nvwgmma::grouped_mm", lib=_LIBRARY)
def _(a, b, offs, counts, out_dtype, config, bias=None, activation=None, gate=None, scale_a=None,
      scale_b=None):  # fmt: skip
    if b.dim() != 3:
        raise ValueError(f"b must be 3-D (groups x K x N), but got shape {tuple(b.shape)}")
    if offs is not None and counts is not None:
        raise ValueError("grouped_mm needs offs= or counts=, exactly one, but got both")
    if a.dim() != (2 if offs is not None else 3):
        raise ValueError(f"a must be {'2-D' if offs is not None else '3-D'}, but got shape "
                         f"{tuple(a.shape)}")  # fmt: skip
    torch._check(a.shape[-1] == b.shape[-2], lambda: "a's columns and b's rows must agree (K)")
    from .gemm.launch import torch_dtype

    if (scale_a is None) != (scale_b is None):
        raise ValueError("fp8 row-wise scaling needs scale_a and scale_b, both, but got one")
    default = torch.bfloat16 if a.dtype in _FP8 else a.dtype
    dtype = torch_dtype(out_dtype) if out_dtype else default
    n = b.shape[-1] // 2 if gate is not None else b.shape[-1]
    return a.new_empty((*a.shape[:-1], n), dtype=dtype)


def _blockwise_mm(a, b, scale_a, scale_b, out_dtype, config):
    from .gemm.blockwise import prepare_blockwise

    launch, out = prepare_blockwise(a, b, scale_a, scale_b, out_dtype=out_dtype or "bf16",
                                    config=_config(config))  # fmt: skip
    launch()
    return out


@torch.library.register_fake("nvwgmma::blockwise_mm", lib=_LIBRARY)
def _(a, b, scale_a, scale_b, out_dtype, config):
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"a and b must be 2-D, but got shapes {a.shape} and {b.shape}")
    torch._check(a.shape[-1] == b.shape[-2], lambda: "a's columns and b's rows must agree (K)")
    from .gemm.launch import torch_dtype

    return a.new_empty((a.shape[0], b.shape[1]), dtype=torch_dtype(out_dtype or "bf16"))


def _attention(q, k, v, causal, scale, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
               q_descale, k_descale, v_descale, config):  # fmt: skip
    from .attention.launch import attention

    return attention(q, k, v, causal=causal, scale=scale, cu_seqlens_q=cu_seqlens_q,
                     cu_seqlens_k=cu_seqlens_k, max_seqlen_q=max_seqlen_q,
                     max_seqlen_k=max_seqlen_k, return_lse=True, config=_config(config),
                     q_descale=q_descale, k_descale=k_descale, v_descale=v_descale)  # fmt: skip


@torch.library.register_fake("nvwgmma::attention", lib=_LIBRARY)
def _(q, k, v, causal, scale, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
      q_descale, k_descale, v_descale, config):  # fmt: skip
    varlen = cu_seqlens_q is not None
    if q.dim() != (3 if varlen else 4):
        layout = "(tokens, heads, head dim)" if varlen else "(batch, seq, heads, head dim)"
        raise ValueError(f"q must be {layout}, but got shape {tuple(q.shape)}")
    out = q.new_empty(q.shape, dtype=torch.bfloat16 if q.dtype in _FP8 else q.dtype)
    if varlen:
        lse = q.new_empty((q.shape[1], q.shape[0]), dtype=torch.float32)
    else:
        lse = q.new_empty((q.shape[0], q.shape[2], q.shape[1]), dtype=torch.float32)
    return out, lse


def _attention_backward(*args):
    from .attention.autograd import backward

    return backward(*args)


@torch.library.register_fake("nvwgmma::attention_backward", lib=_LIBRARY)
def _(do, q, k, v, o, lse, causal, scale, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
      max_seqlen_k):  # fmt: skip
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _attention_context(ctx, inputs, output):
    from .attention.autograd import save

    q, k, v, causal, scale, cu_q, cu_k, max_q, max_k, *_ = inputs
    save(ctx, q, k, v, *output, cu_q, cu_k, causal, scale, max_q, max_k)


def _attention_gradients(ctx, do, _dlse):
    """dq, dk, dv through nvwgmma::attention_backward (the LSE carries no
    gradient, as in FlashAttention)."""
    from .attention.autograd import gradients

    return (*gradients(ctx, do, torch.ops.nvwgmma.attention_backward), *(None,) * 10)


torch.library.register_autograd("nvwgmma::attention", _attention_gradients,
                                setup_context=_attention_context, lib=_LIBRARY)  # fmt: skip

_LIBRARY.impl("matmul", _matmul, "CUDA")
_LIBRARY.impl("grouped_mm", _grouped_mm, "CUDA")
_LIBRARY.impl("blockwise_mm", _blockwise_mm, "CUDA")
_LIBRARY.impl("attention", _attention, "CUDA")
_LIBRARY.impl("attention_backward", _attention_backward, "CUDA")


def _no_stream(stream):
    if stream is not None:
        raise ValueError(
            "stream must be None under torch.compile / torch.export (the op runs on torch's "
            f"current stream; set it with torch.cuda.stream), but got {stream!r}"
        )


def traced_matmul(a, b, *, bias, activation, residual, out, out_dtype, alpha, beta, scale,
                  stream, config):  # fmt: skip
    """matmul while torch traces: the op, then a copy into `out` if given."""
    _no_stream(stream)
    c = torch.ops.nvwgmma.matmul(a, b, bias, activation, residual, out_dtype, alpha, beta,
                                 scale, config_token(config))  # fmt: skip
    if out is None:
        return c
    out.copy_(c)
    return out


def traced_grouped_mm(a, b, *, offs, counts, out, out_dtype, stream, config, bias=None,
                      activation=None, gate=None, scale_a=None, scale_b=None):  # fmt: skip
    """grouped_mm (or scaled_grouped_mm) while torch traces: the op, then
    a copy into `out` if given."""
    _no_stream(stream)
    c = torch.ops.nvwgmma.grouped_mm(a, b, offs, counts, out_dtype, config_token(config), bias,
                                     activation, gate, scale_a, scale_b)  # fmt: skip
    if out is None:
        return c
    out.copy_(c)
    return out


def traced_blockwise_mm(a, b, scale_a, scale_b, *, out, out_dtype, stream, config):
    """blockwise_mm while torch traces: the op, then a copy into `out` if
    given."""
    _no_stream(stream)
    c = torch.ops.nvwgmma.blockwise_mm(a, b, scale_a, scale_b, out_dtype, config_token(config))
    if out is None:
        return c
    out.copy_(c)
    return out


def traced_attention(q, k, v, *, causal, scale, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                     max_seqlen_k, out, lse, return_lse, stream, config, q_descale, k_descale,
                     v_descale):  # fmt: skip
    """attention while torch traces: the op, then copies into `out` and
    `lse` if given."""
    _no_stream(stream)
    o, log_sum = torch.ops.nvwgmma.attention(
        q, k, v, bool(causal), scale, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
        float(q_descale), float(k_descale), float(v_descale), config_token(config))  # fmt: skip
    if out is not None:
        o = out.copy_(o)
    if lse is not None:
        log_sum = lse.copy_(log_sum)
    return (o, log_sum) if return_lse else o
