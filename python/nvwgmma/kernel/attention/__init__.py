"""Forward attention for Hopper, FlashAttention-3 style, built from the
kernel layer (`nvwgmma.kernel`).

    from nvwgmma.kernel.attention import AttentionConfig, build_attention
    module, meta = build_attention(AttentionConfig(head_dim=128, causal=True))
    o = attention(q, k, v, causal=True)   # torch / cupy, through nvwgmma.kernel.runtime
"""

from .config import AttentionConfig, check_config, default_config
from .kernel import SIGNATURE, build_attention
from .launch import attention, plan, precompile, prepare, shipped_configs

__all__ = [
    "SIGNATURE",
    "AttentionConfig",
    "attention",
    "build_attention",
    "check_config",
    "default_config",
    "plan",
    "precompile",
    "prepare",
    "shipped_configs",
]
