"""What an attention kernel is built for: head dim, dtype, masking, tile
sizes, ring depth and which of FlashAttention-3's techniques are on."""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["AttentionConfig", "check_config", "default_config"]

_SMEM_LIMIT = 227 * 1024


@dataclass(frozen=True)
class AttentionConfig:
    """One forward-attention kernel.

    head_dim       64, 128 or 256 (Q, K and V rows)
    dtype          bf16 or f16 (inputs and output), or e4m3 (fp8 inputs,
                   bf16 output; V read transposed -- keys contiguous --
                   since fp8 wgmma takes B K-major only; P rounded to e4m3
                   for P·V; varlen reads Vᵀ from a dense (batch, heads,
                   d, longest) copy: packed, a sequence's Vᵀ box would
                   start at an unaligned key, where TMA faults)
    causal         mask keys after the query (bottom-right aligned)
    varlen         sequences of a batch packed along tokens, with
                   cumulative offsets (FlashAttention's varlen API)
    block_n        keys per iteration (S = Q Kᵀ is 64 x block_n per consumer)
    stages         K and V ring depth
    overlap        issue QKᵀ of block j with P·V of block j-1, softmax
                   while P·V runs (intra-warpgroup overlap)
    pingpong       the two consumers take turns issuing their GEMMs
                   (named barriers), so one's softmax hides the other's GEMMs
    persistent     one CTA per SM walks the tiles (query block, head, batch):
                   the next tile's Q and K/V load while this one's epilogue
                   runs (dense, with overlap)
    dynamic        persistent CTAs take their next tile from a global
                   counter (the first free CTA gets it) instead of a
                   fixed share (attention.tiles); build it with 232
                   consumer and 40 producer registers (at 24 the
                   producer spills)
    tma_store      O leaves through shared memory (stmatrix into a 64-row
                   staging per consumer) and TMA stores, whose read of the
                   staging overlaps the next tile (dense only: a varlen
                   sequence's last box would write into the next one)
    fast_exp2      the softmax's exponentials on the SFU: exp2(s scale log2(e)
                   - m) as one FMA and ex2.approx.ftz per score
                   (FlashAttention's trick); False: math.exp of the natural-
                   unit difference, nvwgmma-legalize-math's f32 polynomial on
                   the FMA pipe (the ablation of the trick)
    v_permuted     e4m3: V's keys lie in fragment.fp8_key_order within every
                   32 (attention's Vᵀ copy writes them so), so P's fp8
                   fragments are the threads' own values, no shuffles
    fma_exp2       of every 8 scores a thread holds, this many take their
                   exponential on the FMA pipe (fastmath.exp2_fma, degree 3;
                   4 for f16) instead of the SFU, which delivers 16 a clock
                   per SM against the FMA pipe's 128 (FlashAttention-4's
                   split); 0: all on the SFU
    lazy_rescale   keep a row's old maximum until the new one exceeds it by
                   2^8 (FlashAttention-4): O is rescaled, behind a branch,
                   only when a thread's maximum moved
    speculative    the softmax of block j >= 1 runs against the running row
                   maxima as they stand: no row maximum, no quad shuffles,
                   no rescale of O. Each thread's row sums bound its P (a
                   sum <= 2^8 bounds every term): a warpgroup vote
                   (barrier.any_) sends the rare block where a sum exceeds
                   2^8, is not a number (overflow, NaN) or a row has no key
                   yet down the exact path, with S_j recomputed (K_j is
                   released after the vote). Needs overlap
    consumers      consumer warpgroups, 64 query rows each: 2 (128-row
                   tiles) or 3 (192 rows, FlashAttention-3's head-dim-64
                   tile: K and V read once per 192 queries; no ping-pong,
                   budgets that fit 4 x 128 registers)
    consumer_regs / producer_regs   setmaxnreg budgets

    A CTA computes 64 x `consumers` query rows of one head; one producer
    thread issues every TMA load."""

    head_dim: int = 128
    dtype: str = "bf16"
    causal: bool = False
    varlen: bool = False
    block_n: int = 128
    stages: int = 2
    overlap: bool = True
    pingpong: bool = True
    persistent: bool = False
    dynamic: bool = False
    tma_store: bool = False
    fast_exp2: bool = True
    lazy_rescale: bool = False
    speculative: bool = False
    fma_exp2: int = 0
    v_permuted: bool = False
    consumers: int = 2
    consumer_regs: int = 240
    producer_regs: int = 24

    @property
    def block_m(self) -> int:
        return 64 * self.consumers

    @property
    def out_dtype(self) -> str:
        """O's type: the inputs' for 16-bit, bf16 for fp8 (FlashAttention-3)."""
        return "bf16" if self.fp8 else self.dtype

    @property
    def fp8(self) -> bool:
        return self.dtype == "e4m3"

    @property
    def k_instr(self) -> int:
        """K of one wgmma: 16 for 16-bit inputs, 32 for fp8."""
        return 32 if self.fp8 else 16

    @property
    def threads(self) -> int:
        return 128 * (1 + self.consumers)

    @property
    def name(self) -> str:
        parts = [f"attn_d{self.head_dim}_{self.dtype}_n{self.block_n}_s{self.stages}"]
        if self.consumers != 2:
            parts.append(f"m{self.block_m}")
        if not self.fast_exp2:
            parts.append("exp")
        if self.fma_exp2:
            parts.append(f"fma{self.fma_exp2}")
        if self.v_permuted:
            parts.append("vperm")
        for flag in ("causal", "varlen", "overlap", "pingpong", "persistent", "dynamic",
                     "tma_store", "lazy_rescale", "speculative"):  # fmt: skip
            if getattr(self, flag):
                parts.append(flag)
        return "_".join(parts)

    @property
    def shared_memory_bytes(self) -> int:
        """Dynamic shared memory the kernel asks for."""
        q = tile(self.dtype, 64, self.head_dim, "K").tile_bytes
        k = tile(self.dtype, self.block_n, self.head_dim, "K").tile_bytes
        v = tile(self.dtype, self.head_dim, self.block_n, self.v_major).tile_bytes
        return (self.consumers * (q + self.staging_bytes) + self.stages * (k + v)
                + self.barrier_bytes + 1024 - 16)  # fmt: skip

    @property
    def barrier_bytes(self) -> int:
        """K and V rings (full, empty), Q's barrier, Q's release when
        persistent, and the dynamic walk's two tile-number slots."""
        from .tiles import SLOT_BYTES

        return 8 * (4 * self.stages + 1 + self.persistent) + SLOT_BYTES * self.dynamic

    @property
    def v_major(self) -> str:
        """V's tile as the B of P·V (head dim x keys): MN-major (the head dim
        contiguous, V as stored) for 16-bit, K-major (keys contiguous: Vᵀ)
        for fp8, whose wgmma takes no transposed B."""
        return "K" if self.fp8 else "MN"

    @property
    def staging_bytes(self) -> int:
        """Each consumer's O staging (tma_store), else 0."""
        from .. import epilogue

        return epilogue.staging_bytes(self.head_dim, self.out_dtype) if self.tma_store else 0

    def replace(self, **changes) -> AttentionConfig:
        return replace(self, **changes)


def tile(dtype: str, rows: int, k: int, major: str):
    """A tile's geometry: 128-byte swizzle atoms, 64-byte ones where a
    K-major row holds only 64 bytes (fp8 at head dim 64, or 64 keys of Vᵀ)."""
    from ..geometry import ELEMENT_BITS, tile_geometry

    narrow = major == "K" and k * ELEMENT_BITS[dtype] // 8 == 64
    return tile_geometry(dtype, rows, k, major, swizzle="64B" if narrow else "128B")


# Head dim 256, causal: one CTA per tile below this many queries, the
# paired persistent walk from it on (see default_config).
PERSISTENT_D256_CAUSAL_FROM = 1024


def default_config(head_dim: int, *, dtype="bf16", causal=False, varlen=False, seq=None):
    """The configuration the library uses for a head dim: 128-key blocks
    (64 at head dim 256, where P·V's accumulator takes 128 registers), two
    stages, and persistent scheduling where the sequences are dense (not
    at head dim 256 with a causal mask).

    Why (bench/attention/run.py, each variant against this default in the
    same run): persistent ran 1-6 % faster non-causal (H200); causal, with
    the static walk over paired query blocks (attention.tiles), 7-17 %
    faster at head dim 64 and 3-5 % at 128 for S = 512-4096, and at 256
    4-6 % faster from S = 1024 but 16 % slower at 512 (H100). Handing causal
    tiles out dynamically (`dynamic`) ran 6-32 % slower (H100); a third
    stage at head dim 64 2 % slower. O goes out through stmatrix and TMA
    (dense) at head dim 128, 0-13 % faster, and at 64 without a mask, 4-8 %
    faster (H100; with one it ran 1-7 % slower there). At head dim 256, where
    O is 128 registers a thread, O is rescaled only when a row maximum grew
    by more than 2^8 (`lazy_rescale`): 2-6 % faster at S = 1024-16k (H100;
    neutral at 128, mixed at 64). Causal at head dim 256 depends on `seq`
    (queries per sequence): the paired persistent walk from 1024 on (1-10 %
    faster at S = 1024-16k, H100), one CTA per tile below (the walk is 16 %
    slower at 512) and when `seq` is not given. At head dims 64 and 128 the
    softmax is `speculative` (no row maximum in the common block): 0-10 %
    faster at 128, 1-4 % at 64 (H100); at 256 its exact fallback spills. fp8 (e4m3) takes the same
    rules but 128-key blocks at head dim 256 without a mask: its P
    fragments are half the registers (with the mask's coordinates, 128 keys
    spill 4 bytes)."""
    block_n = 64 if head_dim == 256 and (dtype != "e4m3" or causal) else 128
    d256_causal_tiles = causal and head_dim == 256 and (seq or 0) < PERSISTENT_D256_CAUSAL_FROM
    persistent = not varlen and not d256_causal_tiles
    return AttentionConfig(head_dim=head_dim, dtype=dtype, causal=causal, varlen=varlen,
                           block_n=block_n, stages=2, persistent=persistent,
                           lazy_rescale=head_dim == 256, speculative=head_dim != 256,
                           tma_store=not varlen and (head_dim == 128 or
                                                     (head_dim == 64 and not causal)))  # fmt: skip


def check_config(c: AttentionConfig) -> None:
    """Raise ValueError naming the first field a kernel cannot be built
    for."""
    from .common import check_bools, check_registers

    if not isinstance(c, AttentionConfig):
        raise TypeError(f"config must be an AttentionConfig, but got {type(c).__name__}")
    check_bools(c)
    if c.head_dim not in (64, 128, 256):
        raise ValueError(f"head_dim must be 64, 128 or 256, but got {c.head_dim}")
    if c.dtype not in ("bf16", "f16", "e4m3"):
        raise ValueError(f"dtype must be bf16, f16 or e4m3, but got {c.dtype!r}")
    if c.block_n not in (64, 128, 176, 192):
        raise ValueError(f"block_n must be 64, 128, 176 or 192, but got {c.block_n}")
    if c.v_permuted and not c.fp8:
        raise ValueError(
            f"v_permuted orders fp8 P's keys, so dtype must be e4m3, but got {c.dtype}"
        )
    if c.fp8 and c.block_n % 32:
        # P·V's K (the keys) comes in fp8 instructions of 32.
        raise ValueError(f"e4m3 takes block_n a multiple of 32, but got {c.block_n}")
    if c.persistent and (c.varlen or not c.overlap):
        raise ValueError(
            f"persistent needs dense sequences and overlap, but got varlen={c.varlen}, "
            f"overlap={c.overlap}"
        )
    if c.tma_store and c.varlen:
        raise ValueError(
            "tma_store needs dense sequences (a varlen sequence's last box would write into "
            "the next one), but got varlen=True"
        )
    if c.speculative and not c.overlap:
        raise ValueError("speculative is a step of the overlapped loop, but got overlap=False")
    if c.dynamic and not c.persistent:
        raise ValueError(
            "dynamic needs persistent=True (it is how persistent CTAs take their tiles), "
            "but got persistent=False"
        )
    if isinstance(c.fma_exp2, bool) or c.fma_exp2 not in range(9):
        raise ValueError(f"fma_exp2 must be an int in [0, 8], but got {c.fma_exp2!r}")
    if c.fma_exp2 and not c.fast_exp2:
        raise ValueError("fma_exp2 splits fast_exp2's exponentials, but got fast_exp2=False")
    if not 1 <= c.stages <= 4:
        raise ValueError(f"stages must be in [1, 4], but got {c.stages}")
    if c.consumers not in (2, 3):
        raise ValueError(f"consumers must be 2 or 3, but got {c.consumers}")
    if c.consumers == 3 and c.pingpong:
        raise ValueError("pingpong takes 2 consumers (it alternates two), but got 3")
    if c.consumers == 3 and (c.head_dim != 64 or c.block_n > 128):
        # 4 x 128 registers leave a consumer 160: O, S and P of more spill.
        raise ValueError(
            f"3 consumers take head_dim 64 and block_n <= 128 (160 registers each), but got "
            f"head_dim {c.head_dim}, block_n {c.block_n}"
        )
    if c.consumers == 3 and c.tma_store:
        # The staging's stmatrix addresses on top of O, S and P spill at 160.
        raise ValueError("3 consumers store O from registers (tma_store spills at 160 registers "
                         "each), but got tma_store=True")  # fmt: skip
    # The warpgroups together may not exceed the CTA's launch share (168 for
    # 384 threads, 128 for 512).
    check_registers(c)
    if c.shared_memory_bytes > _SMEM_LIMIT:
        raise ValueError(
            f"the Q tile, {c.stages} K/V stages and O's staging (tma_store) must fit 227 KiB of "
            f"shared memory, but need "
            f"{c.shared_memory_bytes} bytes"
        )
