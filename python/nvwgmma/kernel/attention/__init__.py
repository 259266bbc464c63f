"""Forward attention for Hopper, FlashAttention-3 style, built from the
kernel layer (`nvwgmma.kernel`).

    from nvwgmma.kernel.attention import AttentionConfig, build_attention
    module, meta = build_attention(AttentionConfig(head_dim=128, causal=True))
"""

from .config import AttentionConfig, check_config, default_config
from .kernel import SIGNATURE, build_attention

__all__ = ["SIGNATURE", "AttentionConfig", "build_attention", "check_config", "default_config"]
