"""Backward attention for Hopper (dQ, dK, dV), FlashAttention-3's
structure from the kernel layer (`nvwgmma.kernel`).

    from nvwgmma.kernel.attention.backward import attention_backward
    dq, dk, dv = attention_backward(do, q, k, v, o, lse, causal=True)
"""

from .config import BackwardConfig, check_backward_config, default_backward_config
from .kernel import SIGNATURE, build_attention_backward
from .launch import attention_backward, backward_configs, precompile

__all__ = [
    "SIGNATURE",
    "BackwardConfig",
    "attention_backward",
    "backward_configs",
    "build_attention_backward",
    "check_backward_config",
    "default_backward_config",
    "precompile",
]
