"""What an attention backward kernel is built for: head dim, dtype,
masking, the query block, ring depth and register budgets."""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["BackwardConfig", "check_backward_config", "default_backward_config"]

_SMEM_LIMIT = 227 * 1024
KEYS_PER_CONSUMER = 64  # a consumer warpgroup's rows of K and V (one m64 wgmma)


@dataclass(frozen=True)
class BackwardConfig:
    """One backward-attention kernel (dQ, dK, dV from Q, K, V, dO, the
    forward's log-sum-exp and D = rowsum(dO * O)).

    A CTA owns `block_n` = 64 x `consumers` keys of one K/V head and keeps
    their dK and dV in registers; it walks the query blocks of every query
    head of its group (GQA: dK and dV summed over the group in registers,
    no atomics) and adds each block's dQ into an f32 buffer.

    head_dim       64, 128 or 256 (256: `shared_keys`)
    dtype          bf16 or f16 (inputs, dK and dV)
    causal         key j is seen by query i when j <= i + Sk - Sq
                   (bottom-right aligned, as the forward)
    varlen         sequences packed along tokens, cumulative offsets
    block_m        queries per iteration: 64 (dQ's head dims split between
                   the consumers) or, at head dim 64, 128 (its rows split;
                   S and dP are m64n128)
    stages         Q / dO ring depth
    deterministic  key blocks add into each dQ block in their order (a
                   counter per query block): gradients repeat bit for bit,
                   at the cost of CTAs waiting for their turn
    consumers      consumer warpgroups, 64 keys each (2)
    consumer_regs / producer_regs   setmaxnreg budgets

    Per query block a consumer computes Sᵀ = K Qᵀ and dPᵀ = V dOᵀ (keys on
    wgmma's M, so Pᵀ and dSᵀ are A fragments in registers), dV += Pᵀ dO and
    dK += dSᵀ Q from registers, and writes dSᵀ to shared memory, where both
    consumers read it as dS (an MN-major A) for dQ = dS K."""

    head_dim: int = 128
    dtype: str = "bf16"
    causal: bool = False
    varlen: bool = False
    block_m: int = 64
    stages: int = 2
    deterministic: bool = False
    consumers: int = 2
    consumer_regs: int = 240
    producer_regs: int = 24

    @property
    def dq_rows_split(self) -> bool:
        """dQ's 128-query block split by rows between the consumers (each
        all head dims), else its 64 rows split by head dims."""
        return self.block_m == 128

    @property
    def dq_n(self) -> int:
        """Columns of a consumer's dQ block."""
        return self.head_dim if self.dq_rows_split else self.head_dim // 2

    @property
    def shared_keys(self) -> bool:
        """Head dim 256: both consumers take the same 64 keys, each their dK
        and dV for half the head dims (64 keys' full dK and dV would be 256
        registers); each computes Sᵀ and dPᵀ itself."""
        return self.head_dim == 256

    @property
    def block_n(self) -> int:
        return KEYS_PER_CONSUMER * (1 if self.shared_keys else self.consumers)

    @property
    def kv_tiles(self) -> int:
        """64-key tiles of K (and of V) a CTA holds."""
        return self.block_n // KEYS_PER_CONSUMER

    @property
    def dkv_n(self) -> int:
        """Head dims of a consumer's dK and dV."""
        return self.head_dim // 2 if self.shared_keys else self.head_dim

    @property
    def threads(self) -> int:
        return 128 * (1 + self.consumers)

    @property
    def name(self) -> str:
        parts = [f"attn_bwd_d{self.head_dim}_{self.dtype}_m{self.block_m}_s{self.stages}"]
        parts += [flag for flag in ("causal", "varlen", "deterministic") if getattr(self, flag)]
        return "_".join(parts)

    @property
    def stage_bytes(self) -> int:
        """One ring stage: Q and dO tiles, the block's LSE and D (f32),
        rounded up to the tiles' 1024-byte alignment."""
        from ..config import tile

        q = tile(self.dtype, self.block_m, self.head_dim, "K").tile_bytes
        return -(-(2 * q + 8 * self.block_m) // 1024) * 1024

    @property
    def kv_tile_bytes(self) -> int:
        from ..config import tile

        return tile(self.dtype, KEYS_PER_CONSUMER, self.head_dim, "K").tile_bytes

    @property
    def ds_bytes(self) -> int:
        """One consumer's dSᵀ (64 keys x block_m queries, 16-bit)."""
        return KEYS_PER_CONSUMER * self.block_m * 2

    @property
    def dq_bytes(self) -> int:
        """One consumer's dQ staging (64 queries x dq_n, f32)."""
        from ... import epilogue

        return epilogue.staging_bytes(self.dq_n, "f32")

    @property
    def dkv_staging_bytes(self) -> int:
        """Every consumer's dK and dV, 16-bit, staged in the ring for the
        copy out."""
        return 2 * self.consumers * KEYS_PER_CONSUMER * self.dkv_n * 2

    @property
    def barrier_bytes(self) -> int:
        """K/V's one-shot barrier and the ring's full and empty barriers."""
        return 8 * (1 + 2 * self.stages)

    @property
    def shared_memory_bytes(self) -> int:
        """K and V, the ring, two dSᵀ buffers and a dQ staging per consumer,
        the barriers."""
        return (2 * self.kv_tiles * self.kv_tile_bytes + self.stages * self.stage_bytes
                + self.consumers * (2 * self.ds_bytes + self.dq_bytes) + self.barrier_bytes
                + 1024 - 16)  # fmt: skip

    def replace(self, **changes) -> BackwardConfig:
        return replace(self, **changes)


def default_backward_config(head_dim: int, *, dtype="bf16", causal=False, varlen=False):
    """The backward for a head dim: 128 keys per CTA, two Q/dO stages; 64
    queries per iteration at head dim 128, 128 at 64 (FlashAttention-3's
    tiles)."""
    return BackwardConfig(head_dim=head_dim, dtype=dtype, causal=causal, varlen=varlen,
                          block_m=128 if head_dim == 64 else 64,
                          stages=1 if head_dim == 256 else 2)  # fmt: skip


def check_backward_config(c: BackwardConfig) -> None:
    """Raise ValueError naming the first field a kernel cannot be built
    for."""
    from ..common import check_bools, check_registers

    if not isinstance(c, BackwardConfig):
        raise TypeError(f"config must be a BackwardConfig, but got {type(c).__name__}")
    check_bools(c)
    if c.head_dim not in (64, 128, 256):
        raise ValueError(f"head_dim must be 64, 128 or 256 for the backward, but got {c.head_dim}")
    if c.dtype not in ("bf16", "f16"):
        raise ValueError(f"dtype must be bf16 or f16 for the backward, but got {c.dtype!r}")
    if c.block_m not in (64, 128) or (c.block_m == 128 and c.head_dim != 64):
        # 128 queries at head dim 128: S, dP, dK and dV take 256 registers.
        raise ValueError(f"block_m must be 64, or 128 at head dim 64, but got {c.block_m} at "
                         f"head dim {c.head_dim}")  # fmt: skip
    if c.consumers != 2:
        raise ValueError(f"consumers must be 2 (128 keys per CTA), but got {c.consumers}")
    if not 1 <= c.stages <= 4:
        raise ValueError(f"stages must be in [1, 4], but got {c.stages}")
    check_registers(c)
    if c.stages * c.stage_bytes < c.dkv_staging_bytes:
        raise ValueError(f"the Q/dO ring must hold every consumer's dK and dV at the end "
                         f"({c.dkv_staging_bytes} bytes), but {c.stages} stage(s) hold "
                         f"{c.stages * c.stage_bytes}")  # fmt: skip
    if c.shared_memory_bytes > _SMEM_LIMIT:
        raise ValueError(f"K, V, {c.stages} Q/dO stages and dS must fit 227 KiB of shared memory, "
                         f"but need {c.shared_memory_bytes} bytes")  # fmt: skip
