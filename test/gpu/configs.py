"""The hardware configurations: every type family, A source, transpose and
negation where legal, N = 8 / a middle N / 256, no-swizzle and swizzled
shared-memory layouts, K-major and MN-major where PTX allows.

Pure Python: imported both where the PTX is generated and on the device.
The instruction K of a config comes from nvwgmma.lattice (`with_lattice`,
on the host) and reaches the device in the manifest.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace


@dataclass(frozen=True)
class Config:
    a_type: str
    b_type: str
    d_type: str
    n: int
    a_source: str = "desc"  # "desc" or "regs"
    a_major: str = "K"  # "K" or "MN" (MN = transposed, f16/bf16)
    b_major: str = "K"
    swizzle: str = "none"  # both tiles: none, 128B, 64B, 32B
    negate_a: bool = False
    negate_b: bool = False
    satfinite: bool = False
    steps: int = 2  # mma_async ops in the K loop
    init_d: bool = False  # accumulate onto a large initial D (overflow)
    sparse: bool = False  # mma_async.sp with a 2:4 (tf32 1:2) sparse A
    selector: int = 0  # sparsity selector
    k: int = 0  # instruction K (0 until with_lattice fills it)

    @property
    def name(self) -> str:
        parts = [
            f"{self.d_type}.{self.a_type}.{self.b_type}",
            f"n{self.n}",
            f"A{self.a_source}{'' if self.a_source == 'regs' else self.a_major}",
            f"B{self.b_major}",
            self.swizzle,
        ]
        if self.negate_a or self.negate_b:
            parts.append(f"neg{int(self.negate_a)}{int(self.negate_b)}")
        if self.satfinite:
            parts.append("satfinite")
        if self.init_d:
            parts.append("initD")
        if self.sparse:
            parts.append(f"sp{self.selector}")
        parts.append(f"k{self.steps}x")
        return "_".join(parts)

    def to_dict(self) -> dict:
        return asdict(self)


def _family_configs():
    out = []
    mid = {"int": 112, "float": 136}
    fp8 = [("e4m3", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e4m3"), ("e5m2", "e5m2")]
    ints = [("s8", "s8"), ("s8", "u8"), ("u8", "s8"), ("u8", "u8")]
    # f16 / bf16: both accumulators, both A sources, transposes, negation.
    for a, d in [("f16", "f32"), ("f16", "f16"), ("bf16", "f32")]:
        for n in (8, mid["float"], 256):
            out.append(Config(a, a, d, n))
            out.append(Config(a, a, d, n, swizzle="128B"))
        out.append(Config(a, a, d, 64, a_source="regs", swizzle="128B"))
        out.append(Config(a, a, d, 64, a_source="regs", negate_a=True))
        out.append(Config(a, a, d, 128, a_major="MN", b_major="MN"))
        out.append(Config(a, a, d, 128, a_major="MN", b_major="MN", swizzle="128B"))
        out.append(Config(a, a, d, 64, a_major="MN", swizzle="128B", negate_b=True))
        out.append(Config(a, a, d, 256, b_major="MN", swizzle="64B"))
    # tf32
    for n in (8, mid["float"], 256):
        out.append(Config("tf32", "tf32", "f32", n))
        out.append(Config("tf32", "tf32", "f32", n, swizzle="128B"))
    out.append(Config("tf32", "tf32", "f32", 64, a_source="regs", negate_a=True, negate_b=True))
    out.append(Config("tf32", "tf32", "f32", 32, swizzle="32B", steps=1))
    # fp8: all four pairs, both accumulators
    for a, b in fp8:
        for d in ("f16", "f32"):
            out.append(Config(a, b, d, 8 if d == "f16" else 256, swizzle="128B"))
        out.append(Config(a, b, "f32", mid["float"], a_source="regs", negate_a=True))
    out.append(Config("e4m3", "e4m3", "f32", 256))
    # int8: all four sign mixes, satfinite, both A sources, overflow behaviour
    for a, b in ints:
        out.append(Config(a, b, "s32", 8))
        out.append(Config(a, b, "s32", mid["int"], swizzle="128B"))
        out.append(Config(a, b, "s32", 256, a_source="regs", satfinite=True))
    out.append(Config("s8", "s8", "s32", 64, init_d=True))
    out.append(Config("s8", "s8", "s32", 64, init_d=True, satfinite=True))
    out.append(Config("u8", "u8", "s32", 240, swizzle="64B"))
    # b1
    for n in (8, mid["int"], 256):
        out.append(Config("b1", "b1", "s32", n))
    out.append(Config("b1", "b1", "s32", 64, swizzle="128B"))
    out.append(Config("b1", "b1", "s32", 64, a_source="regs"))
    return out


def _sparse_configs():
    out = []
    for a, d in [("f16", "f32"), ("f16", "f16"), ("bf16", "f32"), ("tf32", "f32")]:
        for sel in (0, 1):
            out.append(Config(a, a, d, 8, sparse=True, selector=sel))
        out.append(Config(a, a, d, 136, swizzle="128B", sparse=True))
        out.append(Config(a, a, d, 256, a_source="regs", sparse=True, selector=1, negate_a=True))
    out.append(Config("f16", "f16", "f32", 64, b_major="MN", sparse=True))
    out.append(
        Config("bf16", "bf16", "f32", 128, b_major="MN", swizzle="128B", sparse=True, negate_b=True)
    )
    for a, b, d in [("e4m3", "e4m3", "f32"), ("e5m2", "e4m3", "f16"), ("e4m3", "e5m2", "f32")]:
        out.append(Config(a, b, d, 8, sparse=True))
        out.append(Config(a, b, d, 256, swizzle="128B", sparse=True, a_source="regs"))
    for a, b, sat in [("s8", "s8", False), ("u8", "s8", True), ("s8", "u8", False)]:
        out.append(Config(a, b, "s32", 8, sparse=True, satfinite=sat))
        out.append(Config(a, b, "s32", 112, swizzle="128B", sparse=True, a_source="regs"))
    out.append(Config("u8", "u8", "s32", 256, sparse=True))
    return out


def with_lattice(cfg: Config) -> Config:
    """The config with its instruction K asked of nvwgmma.lattice."""
    from nvwgmma.lattice import instruction_k

    return replace(cfg, k=instruction_k(cfg.a_type, cfg.b_type, sparse=cfg.sparse))


CONFIGS = _family_configs() + _sparse_configs()
