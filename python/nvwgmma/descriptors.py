"""The 64-bit wgmma shared-memory matrix descriptor (PTX ISA 9.7.15.5.1.2.2).

    bits 13-0   (start address & 0x3FFFF) >> 4
    bits 29-16  (leading dimension byte offset & 0x3FFFF) >> 4
    bits 45-32  (stride dimension byte offset & 0x3FFFF) >> 4
    bits 51-49  matrix base offset (swizzled modes only)
    bits 63-62  swizzle: 0 none, 1 128-byte, 2 64-byte, 3 32-byte

Pure numpy; every function takes scalars or arrays (broadcast together) and
validates every field instead of masking bits away silently.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

__all__ = [
    "Swizzle",
    "DescriptorError",
    "encode_descriptor",
    "decode_descriptor",
    "base_offset_for",
    "swizzle_width",
]


class Swizzle(IntEnum):
    """Swizzling mode of a descriptor (bits 63-62)."""

    NONE = 0
    B128 = 1
    B64 = 2
    B32 = 3

    @classmethod
    def parse(cls, value) -> Swizzle:
        if isinstance(value, Swizzle):
            return value
        names = {
            "none": cls.NONE,
            "128b": cls.B128,
            "64b": cls.B64,
            "32b": cls.B32,
            128: cls.B128,
            64: cls.B64,
            32: cls.B32,
            0: cls.NONE,
        }
        key = value.lower() if isinstance(value, str) else value
        if key not in names:
            raise DescriptorError(f"swizzle must be one of none, 128B, 64B, 32B, but got {value!r}")
        return names[key]


class DescriptorError(ValueError):
    """A descriptor field is out of range or misaligned."""


def swizzle_width(swizzle) -> int:
    """Bytes per swizzled row (128, 64, 32), or 16 (a core-matrix row) for none."""
    return {Swizzle.NONE: 16, Swizzle.B128: 128, Swizzle.B64: 64, Swizzle.B32: 32}[
        Swizzle.parse(swizzle)
    ]


def _field(name: str, value, limit_bits: int = 18) -> np.ndarray:
    v = np.asarray(value)
    if not np.issubdtype(v.dtype, np.integer):
        raise DescriptorError(f"{name} must be an integer, but got {v.dtype}")
    v = v.astype(np.int64)
    bad = (v < 0) | (v >= (1 << limit_bits))
    if bad.any():
        raise DescriptorError(
            f"{name} must be in [0, {1 << limit_bits}) bytes (14 encoded bits), "
            f"but got {v[bad].flat[0]}"
        )
    misaligned = v % 16 != 0
    if misaligned.any():
        raise DescriptorError(
            f"{name} must be a multiple of 16 bytes, but got {v[misaligned].flat[0]}"
        )
    return v


def _pattern_rows(swizzle: Swizzle) -> int:
    """Rows of 128 bytes in one repeat of the swizzle pattern (8, 4, 2)."""
    return {Swizzle.B128: 8, Swizzle.B64: 4, Swizzle.B32: 2}[swizzle]


def base_offset_for(pattern_start_address, swizzle) -> np.ndarray:
    """The base offset of a swizzled tile whose pattern starts at an address
    that is not a multiple of the pattern size (1024, 512, 256 bytes):
    `(addr >> 7) & 7`, reduced to the pattern's rows (PTX ISA 9.7.15.5.1.2.2)."""
    swizzle = Swizzle.parse(swizzle)
    addr = np.asarray(pattern_start_address, dtype=np.int64)
    if swizzle == Swizzle.NONE:
        return np.zeros_like(addr)
    return (addr >> 7) & (_pattern_rows(swizzle) - 1)


def encode_descriptor(
    start_address,
    leading_byte_offset,
    stride_byte_offset,
    swizzle="none",
    base_offset=0,
):
    """Encode descriptors; returns np.uint64 (a scalar for scalar inputs)."""
    swizzle = Swizzle.parse(swizzle)
    start = _field("start address", start_address)
    lbo = _field("leading byte offset", leading_byte_offset)
    sbo = _field("stride byte offset", stride_byte_offset)
    base = np.asarray(base_offset, dtype=np.int64)
    limit = 1 if swizzle == Swizzle.NONE else _pattern_rows(swizzle)
    bad = (base < 0) | (base >= limit)
    if bad.any():
        rule = (
            "must be 0 without swizzling"
            if swizzle == Swizzle.NONE
            else f"must be in [0, {limit}) for {swizzle_width(swizzle)}-byte swizzling"
        )
        raise DescriptorError(f"base offset {rule}, but got {base[bad].flat[0]}")
    start, lbo, sbo, base = np.broadcast_arrays(start, lbo, sbo, base)
    desc = (
        (start.astype(np.uint64) >> np.uint64(4))
        | ((lbo.astype(np.uint64) >> np.uint64(4)) << np.uint64(16))
        | ((sbo.astype(np.uint64) >> np.uint64(4)) << np.uint64(32))
        | (base.astype(np.uint64) << np.uint64(49))
        | (np.uint64(int(swizzle)) << np.uint64(62))
    )
    return desc[()] if desc.ndim == 0 else desc


def decode_descriptor(descriptor) -> dict:
    """Split descriptors into their fields (byte values, as encode takes them).

    Raises DescriptorError if reserved bits (14-15, 30-31, 46-48, 52-61) are set.
    """
    d = np.asarray(descriptor).astype(np.uint64)
    reserved = np.uint64((0x3 << 14) | (0x3 << 30) | (0x7 << 46) | (0x3FF << 52))
    if (d & reserved).any():
        raise DescriptorError("reserved descriptor bits are set")

    def bits(lo, width):
        out = (d >> np.uint64(lo)) & np.uint64((1 << width) - 1)
        out = out.astype(np.int64)
        return out[()] if out.ndim == 0 else out

    swz = bits(62, 2)
    return {
        "start_address": bits(0, 14) << 4,
        "leading_byte_offset": bits(16, 14) << 4,
        "stride_byte_offset": bits(32, 14) << 4,
        "base_offset": bits(49, 3),
        "swizzle": Swizzle(int(swz)) if np.ndim(swz) == 0 else swz,
    }
