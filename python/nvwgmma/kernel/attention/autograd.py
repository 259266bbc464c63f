"""`attention` as a differentiable torch operation: the forward kernel
saves O and the log-sum-exp, the backward kernels
(`attention.backward`) give dQ, dK and dV.

`attention(q, k, v, ...)` takes this path by itself when grad mode is on
and q, k or v requires grad; the log-sum-exp it returns (`return_lse`)
carries no gradient, as in FlashAttention."""

from __future__ import annotations

__all__ = ["differentiable_attention", "needs_grad"]


def needs_grad(*tensors) -> bool:
    """Grad mode is on and a torch tensor among `tensors` requires grad."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None or not torch.is_grad_enabled():
        return False
    return any(isinstance(t, torch.Tensor) and t.requires_grad for t in tensors)


def _function():
    import torch

    class AttentionFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, causal, scale, cu_q, cu_k, max_q, max_k):
            from .launch import attention

            o, lse = attention(q, k, v, causal=causal, scale=scale, cu_seqlens_q=cu_q,
                               cu_seqlens_k=cu_k, max_seqlen_q=max_q, max_seqlen_k=max_k,
                               return_lse=True)  # fmt: skip
            ctx.save_for_backward(q, k, v, o, lse, cu_q, cu_k)
            ctx.options = (causal, scale, max_q, max_k)
            ctx.mark_non_differentiable(lse)
            return o, lse

        @staticmethod
        def backward(ctx, do, _dlse):
            from .backward.launch import attention_backward

            q, k, v, o, lse, cu_q, cu_k = ctx.saved_tensors
            causal, scale, max_q, max_k = ctx.options
            dq, dk, dv = attention_backward(do.contiguous(), q, k, v, o, lse, causal=causal,
                                            scale=scale, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                                            max_seqlen_q=max_q, max_seqlen_k=max_k)  # fmt: skip
            return dq, dk, dv, None, None, None, None, None, None

    return AttentionFunction


_cached = []


def differentiable_attention(q, k, v, *, causal=False, scale=None, cu_seqlens_q=None,
                             cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None,
                             return_lse=False):  # fmt: skip
    """O (and the LSE, without gradient) through AttentionFunction."""
    if not _cached:
        _cached.append(_function())
    o, lse = _cached[0].apply(q, k, v, bool(causal), scale, cu_seqlens_q, cu_seqlens_k,
                              max_seqlen_q, max_seqlen_k)  # fmt: skip
    return (o, lse) if return_lse else o
