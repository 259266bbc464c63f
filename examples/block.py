"""A transformer block (attention with grouped K/V heads, then a SiLU-gated
MLP; no norms) on nvwgmma's ops or on torch's (torch.matmul + SDPA), whole
or tensor-parallel: its weights split over `parts` GPUs, heads and MLP
columns by rank, with an all-reduce after the O and down projections.

    from block import Block, Shape, weights
    shape = Shape(width=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336)
    block = Block(shape, weights(shape, "cuda:0"), kernels="nvwgmma")
    y = block(x)                                     # x: (batch, seq, width) bf16

Used by examples/tp_block.py (torchrun, NCCL) and test/gpu/deploy.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class Shape:
    width: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int


def problems(shape: Shape, tokens: int, parts: int = 1):
    """(M, N, K, activation) of every matmul of one rank's block."""
    s = shape
    return [
        (tokens, (s.heads + 2 * s.kv_heads) * s.head_dim // parts, s.width, None),  # QKV
        (tokens, s.width, s.heads * s.head_dim // parts, None),  # O
        (tokens, s.ffn // parts, s.width, "silu"),  # gate
        (tokens, s.ffn // parts, s.width, None),  # up
        (tokens, s.width, s.ffn // parts, None),  # down
    ]


def weights(shape: Shape, device, *, seed=0, rank=0, parts=1):
    """(wqkv, wo, w_gate, w_up, w_down), bf16, each (out, in) like
    nn.Linear's, the same on every rank for one seed; rank's share of them
    where `parts` > 1 (QKV, gate, up by output rows; O, down by input
    columns)."""
    s = shape
    g = torch.Generator(device="cpu").manual_seed(seed)

    def make(rows, cols):
        return torch.randn(rows, cols, generator=g) / cols**0.5

    q_rows, kv_rows = s.heads * s.head_dim, s.kv_heads * s.head_dim
    wqkv, wo = make(q_rows + 2 * kv_rows, s.width), make(s.width, q_rows)
    gate, up, down = make(s.ffn, s.width), make(s.ffn, s.width), make(s.width, s.ffn)

    def part(t, dim):
        return t.chunk(parts, dim=dim)[rank]

    q, k, v = wqkv.split([q_rows, kv_rows, kv_rows])
    local = [torch.cat([part(q, 0), part(k, 0), part(v, 0)]), part(wo, 1), part(gate, 0),
             part(up, 0), part(down, 1)]  # fmt: skip
    return [t.contiguous().to(torch.bfloat16).to(device) for t in local]


class Block(torch.nn.Module):
    """y = h + mlp(h), h = x + attention(x) W_o; `kernels`: "nvwgmma" or
    "torch"; `group`: the tensor-parallel process group (None: whole)."""

    def __init__(self, shape: Shape, weights, *, kernels="nvwgmma", group=None, parts=1):
        super().__init__()
        if kernels not in ("nvwgmma", "torch"):
            raise ValueError(f"kernels must be nvwgmma or torch, but got {kernels!r}")
        self.shape, self.kernels, self.group = shape, kernels, group
        self.heads, self.kv_heads = shape.heads // parts, shape.kv_heads // parts
        for name, w in zip(("wqkv", "wo", "w_gate", "w_up", "w_down"), weights):
            self.register_buffer(name, w)

    def _linear(self, x, w, activation=None):
        if self.kernels == "nvwgmma":
            from nvwgmma.kernel.gemm import matmul

            return matmul(x, w.T, activation=activation)
        y = x @ w.T
        return F.silu(y) if activation == "silu" else y

    def _attention(self, q, k, v):
        if self.kernels == "nvwgmma":
            from nvwgmma.kernel.attention import attention

            return attention(q, k, v, causal=True)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True,
                                           enable_gqa=True)  # fmt: skip
        return o.transpose(1, 2)

    def _reduce(self, y):
        if self.group is not None:
            torch.distributed.all_reduce(y, group=self.group)
        return y

    def forward(self, x):
        batch, seq, width = x.shape
        d = self.shape.head_dim
        q_cols, kv_cols = self.heads * d, self.kv_heads * d
        rows = x.reshape(-1, width)
        qkv = self._linear(rows, self.wqkv)
        q = qkv[:, :q_cols].view(batch, seq, self.heads, d)
        k = qkv[:, q_cols : q_cols + kv_cols].view(batch, seq, self.kv_heads, d)
        v = qkv[:, q_cols + kv_cols :].view(batch, seq, self.kv_heads, d)
        o = self._attention(q, k, v).reshape(-1, q_cols)
        h = rows + self._reduce(self._linear(o, self.wo))
        gated = self._linear(h, self.w_gate, "silu") * self._linear(h, self.w_up)
        return (h + self._reduce(self._linear(gated, self.w_down))).view(batch, seq, width)
