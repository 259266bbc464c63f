"""`attention` as a differentiable torch operation: the forward kernel
saves O and the log-sum-exp, the backward kernels
(`attention.backward`) give dQ, dK and dV.

`attention(q, k, v, ...)` takes this path by itself when grad mode is on
and q, k or v requires grad; the log-sum-exp it returns (`return_lse`)
carries no gradient, as in FlashAttention."""

from __future__ import annotations

__all__ = ["backward", "differentiable_attention", "gradients", "needs_grad", "save"]


def needs_grad(*tensors) -> bool:
    """Grad mode is on and a torch tensor among `tensors` requires grad."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None or not torch.is_grad_enabled():
        return False
    return any(isinstance(t, torch.Tensor) and t.requires_grad for t in tensors)


def save(ctx, q, k, v, o, lse, cu_q, cu_k, causal, scale, max_q, max_k) -> None:
    """What the backward needs, on an autograd context: the inputs, O, the
    log-sum-exp (which carries no gradient) and the call's options. Shared
    by the eager AttentionFunction and the torch op's registered autograd."""
    ctx.save_for_backward(q, k, v, o, lse, cu_q, cu_k)
    ctx.options = (causal, scale, max_q, max_k)
    ctx.mark_non_differentiable(lse)


def gradients(ctx, do, run_backward):
    """(dq, dk, dv) of the call `save` kept on `ctx`, for the output
    gradient `do`: run_backward(do, q, k, v, o, lse, causal, scale,
    cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k) -- `backward`
    eagerly, the torch op `nvwgmma::attention_backward` when traced (each
    makes `do` contiguous where it is not)."""
    q, k, v, o, lse, cu_q, cu_k = ctx.saved_tensors
    causal, scale, max_q, max_k = ctx.options
    if do is None:  # grads not materialised, and O's unused
        return None, None, None
    return run_backward(do, q, k, v, o, lse, causal, scale, cu_q, cu_k, max_q, max_k)


def backward(do, q, k, v, o, lse, causal, scale, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
             max_seqlen_k):  # fmt: skip
    """attention_backward with the torch op's positional arguments."""
    from .backward.launch import attention_backward

    return attention_backward(do, q, k, v, o, lse, causal=causal, scale=scale,
                              cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k,
                              max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k)  # fmt: skip


def _function():
    import torch

    class AttentionFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, causal, scale, cu_q, cu_k, max_q, max_k):
            from .launch import attention

            o, lse = attention(q, k, v, causal=causal, scale=scale, cu_seqlens_q=cu_q,
                               cu_seqlens_k=cu_k, max_seqlen_q=max_q, max_seqlen_k=max_k,
                               return_lse=True)  # fmt: skip
            save(ctx, q, k, v, o, lse, cu_q, cu_k, causal, scale, max_q, max_k)
            # No zeros for the LSE's gradient (it has none): a fill kernel
            # and ~0.1 ms of host time a step.
            ctx.set_materialize_grads(False)
            return o, lse

        @staticmethod
        def backward(ctx, do, _dlse):
            return (*gradients(ctx, do, backward), *(None,) * 6)

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
