"""Register-fragment and shared-memory layouts of wgmma (pure numpy).

Notation (PTX ISA 9.7.15.5.1.1): t is a thread of the warpgroup (0-127),
w = t // 32, g = (t % 32) // 4, q = t % 4.

* Accumulator D of m64nN (every type): element e (0 <= e < N/2) of thread t
  is row 16w + g + 8((e/2)%2), column 8(e/4) + 2q + e%2. f32/s32: element e is
  register e; f16: register e/2 holds elements 2j (bits 0-15) and 2j+1.
* A from registers (4 x 32-bit per thread), element i of a thread sits in
  register i / (32 / bits), low bits first; its (row, k) is given per family
  in `a_fragment_map`.
* Shared memory: `shared_tile` lays a (rows x K) tile out in the canonical
  K-major or MN-major layout of 9.7.15.5.1.2 for each swizzle mode and
  returns the bytes and the LBO/SBO its descriptor needs.

Matrices are passed as element *bit patterns* (see `to_bits`/`from_bits`),
so every type, bf16 and fp8 included, packs the same way.

Lattice facts (K per type, accumulator widths, which types are inputs) come
from `nvwgmma.lattice`, i.e. the C++ rule table. The layout functions derive
their sizes from the register layouts themselves, so they also run where
only numpy is installed (the GPU runner imports this file from the source
tree); there, arguments are not checked against the lattice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .descriptors import Swizzle, encode_descriptor, swizzle_width

__all__ = [
    "ELEMENT_BITS",
    "K_OF",  # noqa: F822 (module __getattr__, from the lattice)
    "accumulator_map",
    "accumulator_register_count",
    "pack_accumulator",
    "unpack_accumulator",
    "a_fragment_map",
    "pack_a_fragment",
    "unpack_a_fragment",
    "SharedTile",
    "shared_tile",
    "read_shared_tile",
    "swizzle_address",
    "to_bits",
    "from_bits",
]

ELEMENT_BITS = {
    "f16": 16,
    "bf16": 16,
    "tf32": 32,
    "e4m3": 8,
    "e5m2": 8,
    "s8": 8,
    "u8": 8,
    "b1": 1,
    "f32": 32,
    "s32": 32,
}


def _lattice():
    """nvwgmma.lattice, or None where the native package is absent."""
    try:
        from . import lattice
    except ImportError:
        return None
    return lattice


def __getattr__(name):
    # K of one dense instruction per input type, asked of the lattice.
    if name == "K_OF":
        lattice = _lattice()
        if lattice is None:
            raise AttributeError("K_OF needs the native nvwgmma package (nvwgmma.lattice)")
        return {t: lattice.instruction_k(t) for t in lattice.INPUT_TYPES}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_THREADS = np.arange(128)
_W, _G, _Q = _THREADS // 32, (_THREADS % 32) // 4, _THREADS % 4


def _check_type(name: str, allowed) -> None:
    if name not in allowed:
        raise ValueError(f"expected one of {', '.join(allowed)}, but got {name!r}")


# --------------------------------------------------------------------------
# Element encodings
# --------------------------------------------------------------------------


def _fp8_table(exp_bits: int, man_bits: int, bias: int, ieee: bool) -> np.ndarray:
    codes = np.arange(256)
    sign = np.where(codes >> 7, -1.0, 1.0)
    exp = (codes >> man_bits) & ((1 << exp_bits) - 1)
    man = codes & ((1 << man_bits) - 1)
    normal = (1 + man / (1 << man_bits)) * 2.0 ** (exp - bias)
    subnormal = (man / (1 << man_bits)) * 2.0 ** (1 - bias)
    value = sign * np.where(exp == 0, subnormal, normal)
    top = (1 << exp_bits) - 1
    if ieee:  # e5m2: exponent all ones is inf/nan
        value = np.where((exp == top) & (man == 0), sign * np.inf, value)
        value = np.where((exp == top) & (man != 0), np.nan, value)
    else:  # e4m3: only S.1111.111 is nan, no infinities
        value = np.where((exp == top) & (man == (1 << man_bits) - 1), np.nan, value)
    return value


_FP8 = {"e4m3": _fp8_table(4, 3, 7, False), "e5m2": _fp8_table(5, 2, 15, True)}


def to_bits(values, type_name: str) -> np.ndarray:
    """Encode values of a wgmma type as unsigned bit patterns.

    f16 and bf16 round to nearest even, tf32 keeps the f32 bits (the hardware
    truncates the low 13 bits), fp8 rounds to the nearest finite code, s8/u8
    must already be in range, b1 takes 0/1.
    """
    _check_type(type_name, ELEMENT_BITS)
    v = np.asarray(values)
    if type_name == "f16":
        return v.astype(np.float16).view(np.uint16)
    if type_name == "bf16":
        f = v.astype(np.float32).view(np.uint32).astype(np.uint64)
        rounded = (f + 0x7FFF + ((f >> 16) & 1)) >> 16
        return rounded.astype(np.uint16)
    if type_name in ("tf32", "f32"):
        return v.astype(np.float32).view(np.uint32)
    if type_name in ("e4m3", "e5m2"):
        table = _FP8[type_name]
        finite = np.flatnonzero(np.isfinite(table))
        order = finite[np.argsort(table[finite], kind="stable")]
        sorted_vals = table[order]
        x = v.astype(np.float64).ravel()
        idx = np.clip(np.searchsorted(sorted_vals, x), 1, len(order) - 1)
        left, right = sorted_vals[idx - 1], sorted_vals[idx]
        dl, dr = np.abs(x - left), np.abs(right - x)
        even_left = order[idx - 1] % 2 == 0  # ties round to the even code
        pick = np.where((dl < dr) | ((dl == dr) & even_left), idx - 1, idx)
        return order[pick].astype(np.uint8).reshape(v.shape)
    if type_name == "s8":
        if v.min(initial=0) < -128 or v.max(initial=0) > 127:
            raise ValueError("s8 values must be in [-128, 127]")
        return v.astype(np.int8).view(np.uint8)
    if type_name == "u8":
        if v.min(initial=0) < 0 or v.max(initial=0) > 255:
            raise ValueError("u8 values must be in [0, 255]")
        return v.astype(np.uint8)
    if type_name == "s32":
        return v.astype(np.int32).view(np.uint32)
    # b1
    if not np.isin(v, (0, 1)).all():
        raise ValueError("b1 values must be 0 or 1")
    return v.astype(np.uint8)


def from_bits(bits, type_name: str) -> np.ndarray:
    """Decode bit patterns to float64 (floats) or int64 (integers)."""
    _check_type(type_name, ELEMENT_BITS)
    b = np.asarray(bits)
    if type_name == "f16":
        return b.astype(np.uint16).view(np.float16).astype(np.float64)
    if type_name == "bf16":
        return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if type_name == "tf32":  # what the tensor core uses: low 13 bits dropped
        return (b.astype(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if type_name == "f32":
        return b.astype(np.uint32).view(np.float32).astype(np.float64)
    if type_name in ("e4m3", "e5m2"):
        return _FP8[type_name][b.astype(np.uint8)]
    if type_name == "s8":
        return b.astype(np.uint8).view(np.int8).astype(np.int64)
    if type_name == "s32":
        return b.astype(np.uint32).view(np.int32).astype(np.int64)
    return b.astype(np.int64)


# --------------------------------------------------------------------------
# Accumulator
# --------------------------------------------------------------------------


def accumulator_register_count(d_type: str, n: int) -> int:
    """32-bit accumulator registers per thread: n/2 (f32, s32) or n/4 (f16,
    two packed halves each), from nvwgmma.lattice."""
    from .lattice import accumulator_register_count as count

    return count(d_type, n)


def accumulator_map(d_type: str, n: int):
    """(thread, register, half) arrays of shape (64, n): who holds D[row, col].

    `half` is the 16-bit half (0 low, 1 high) of the register for f16 and 0
    otherwise.
    """
    _check_type(d_type, ("f16", "f32", "s32"))
    if n % 8 or not 8 <= n <= 256:
        raise ValueError(f"n must be a multiple of 8 in [8, 256], but got {n}")
    e = np.arange(n // 2)
    t, e = np.meshgrid(_THREADS, e, indexing="ij")
    w, g, q = t // 32, (t % 32) // 4, t % 4
    row = 16 * w + g + 8 * ((e // 2) % 2)
    col = 8 * (e // 4) + 2 * q + e % 2
    thread = np.full((64, n), -1)
    register = np.full((64, n), -1)
    half = np.zeros((64, n), dtype=np.int64)
    thread[row, col] = t
    if d_type == "f16":
        register[row, col] = e // 2
        half[row, col] = e % 2
    else:
        register[row, col] = e
    return thread, register, half


def pack_accumulator(bits: np.ndarray, d_type: str) -> np.ndarray:
    """A (64, n) matrix of D bit patterns -> uint32 registers of shape (128, R)."""
    bits = np.asarray(bits)
    n = bits.shape[1]
    thread, register, half = accumulator_map(d_type, n)
    regs = np.zeros((128, int(register.max()) + 1), dtype=np.uint32)
    shift = (16 * half).astype(np.uint32)
    np.bitwise_or.at(regs, (thread, register), bits.astype(np.uint32) << shift)
    return regs


def unpack_accumulator(regs: np.ndarray, d_type: str, n: int) -> np.ndarray:
    """uint32 registers (128, R) -> the (64, n) matrix of D bit patterns."""
    thread, register, half = accumulator_map(d_type, n)
    word = np.asarray(regs, dtype=np.uint32)[thread, register]
    if d_type == "f16":
        return ((word >> (16 * half).astype(np.uint32)) & 0xFFFF).astype(np.uint16)
    return word


# --------------------------------------------------------------------------
# A fragment (A from registers)
# --------------------------------------------------------------------------


def a_fragment_map(a_type: str):
    """(thread, register, position) arrays of shape (64, K): who holds A[row, k].

    `position` is the element's index inside its 32-bit register (its bits
    start at position * element bits).
    """
    _check_type(a_type, ELEMENT_BITS)
    lattice = _lattice()
    if lattice is not None:
        _check_type(a_type, lattice.INPUT_TYPES)
    bits = ELEMENT_BITS[a_type]
    per_reg = 32 // bits
    i = np.arange(4 * per_reg)
    t, i = np.meshgrid(_THREADS, i, indexing="ij")
    w, g, q = t // 32, (t % 32) // 4, t % 4
    if bits == 16:
        row = 16 * w + g + 8 * ((i // 2) % 2)
        k = 2 * q + i % 2 + 8 * (i // 4)
    elif bits == 32:
        row = 16 * w + g + 8 * (i % 2)
        k = q + 4 * (i // 2)
    else:  # 8-bit (j = i / 4) and b1 (j = i / 32): the same shape scaled
        j = i // per_reg
        row = 16 * w + g + 8 * (j % 2)
        k = per_reg * q + i % per_reg + 4 * per_reg * (j // 2)
    # Four 32-bit registers of 128 threads cover 64 rows of exactly K.
    k_total = int(k.max()) + 1
    thread = np.full((64, k_total), -1)
    register = np.full((64, k_total), -1)
    position = np.full((64, k_total), -1)
    thread[row, k] = t
    register[row, k] = i // per_reg
    position[row, k] = i % per_reg
    return thread, register, position


def pack_a_fragment(bits: np.ndarray, a_type: str) -> np.ndarray:
    """A (64, K) matrix of A bit patterns -> uint32 registers of shape (128, 4)."""
    thread, register, position = a_fragment_map(a_type)
    width = ELEMENT_BITS[a_type]
    regs = np.zeros((128, 4), dtype=np.uint32)
    values = np.asarray(bits).astype(np.uint32) & np.uint32(
        (1 << width) - 1 if width < 32 else 0xFFFFFFFF
    )
    np.bitwise_or.at(regs, (thread, register), values << (position * width).astype(np.uint32))
    return regs


def unpack_a_fragment(regs: np.ndarray, a_type: str) -> np.ndarray:
    """uint32 registers (128, 4) -> the (64, K) matrix of A bit patterns."""
    thread, register, position = a_fragment_map(a_type)
    width = ELEMENT_BITS[a_type]
    word = np.asarray(regs, dtype=np.uint32)[thread, register]
    mask = np.uint32((1 << width) - 1 if width < 32 else 0xFFFFFFFF)
    return (word >> (position * width).astype(np.uint32)) & mask


# --------------------------------------------------------------------------
# Shared memory (canonical layouts)
# --------------------------------------------------------------------------


def swizzle_address(address, swizzle) -> np.ndarray:
    """Byte address after swizzling, relative to a pattern-aligned base:
    a ^ (((a >> 7) & (W/16 - 1)) << 4) for W = 128, 64, 32 bytes."""
    a = np.asarray(address, dtype=np.int64)
    width = swizzle_width(swizzle)
    if Swizzle.parse(swizzle) == Swizzle.NONE:
        return a
    return a ^ (((a >> 7) & (width // 16 - 1)) << 4)


@dataclass
class SharedTile:
    """A tile laid out in shared memory and what its descriptor needs."""

    data: np.ndarray  # uint8 bytes, to copy to a pattern-aligned address
    leading_byte_offset: int
    stride_byte_offset: int
    swizzle: Swizzle
    major: str  # "K" or "MN"
    k_step_bytes: int  # start-address advance per instruction along K
    k_atom_bytes: int = 0  # bytes between K-major swizzle atoms along K (0: one atom)
    k_steps_per_atom: int = 0

    def descriptor(self, start_address: int, k_step: int = 0, base_offset: int = 0):
        """Descriptor of the instruction `k_step` of a K loop over this tile."""
        return encode_descriptor(
            start_address + k_step_offset(self, k_step),
            self.leading_byte_offset,
            self.stride_byte_offset,
            self.swizzle,
            base_offset,
        )


def k_step_offset(tile, k_step: int) -> int:
    """Bytes from a tile's base to instruction `k_step`'s slice: k steps
    advance within a swizzle atom, then jump to the next atom along K."""
    if not tile.k_atom_bytes:
        return k_step * tile.k_step_bytes
    atom, within = divmod(k_step, tile.k_steps_per_atom)
    return atom * tile.k_atom_bytes + within * tile.k_step_bytes


def _k_atoms(rows: int, k_bytes: int, swizzle) -> tuple[int, int]:
    """(bytes between atoms, k steps per atom) of a K-major tile wider than
    one swizzle atom; (0, 0) otherwise."""
    swizzle = Swizzle.parse(swizzle)
    width = swizzle_width(swizzle)
    if swizzle == Swizzle.NONE or k_bytes <= width:
        return 0, 0
    return (-(-rows // 8)) * 8 * width, width // 32


def _geometry(rows: int, k_bytes: int, row_bytes_major: bool, swizzle, k_groups: int):
    """(lbo, sbo, k_step, size) of a K-major tile of rows x k_bytes, or of an
    MN-major one of rows (row bytes) x 8*k_groups: the one statement of the
    canonical layouts (PTX ISA 9.7.15.5.1.2) that shared_tile, read_shared_tile
    and tile_geometry all use. `size` is the bytes the layout spans."""
    swizzle = Swizzle.parse(swizzle)
    width = swizzle_width(swizzle)
    if not row_bytes_major:  # K-major: rows x K bytes
        if swizzle == Swizzle.NONE:
            lbo, sbo = 128, (k_bytes // 16) * 128
            return lbo, sbo, 2 * lbo, (-(-rows // 8)) * sbo
        if k_bytes > width and k_bytes % width:
            raise ValueError(
                f"a K-major tile with {width}-byte swizzling holds a whole number of "
                f"{width}-byte atoms of K per row, but got {k_bytes} bytes"
            )
        # Wider K: swizzle atoms (rows x width bytes) side by side along K.
        atoms = max(1, k_bytes // width)
        return 16, 8 * width, 32, atoms * (-(-rows // 8)) * 8 * width
    # MN-major: row bytes x K
    if swizzle == Swizzle.NONE:
        lbo, sbo = 128, k_groups * 128
        return lbo, sbo, 2 * lbo, (-(-rows // 16)) * sbo
    sbo, lbo = 8 * width, k_groups * 8 * width
    return lbo, sbo, 2 * sbo, (-(-rows // width)) * lbo


def _byte_offsets(rows: int, k_bytes: int, row_bytes_major: bool, swizzle, k_groups: int):
    """Offsets of every (row, k-byte) of a K-major tile, or of every
    (row-byte, k) of an MN-major one; also returns (lbo, sbo, k_step)."""
    swizzle = Swizzle.parse(swizzle)
    width = swizzle_width(swizzle)
    lbo, sbo, step, _ = _geometry(rows, k_bytes, row_bytes_major, swizzle, k_groups)
    if not row_bytes_major:
        r, kb = np.meshgrid(np.arange(rows), np.arange(k_bytes), indexing="ij")
        if swizzle == Swizzle.NONE:
            off = (r // 8) * sbo + (kb // 16) * lbo + (r % 8) * 16 + kb % 16
            return off, lbo, sbo, step
        atom = (-(-rows // 8)) * sbo
        off = (kb // width) * atom + (r // 8) * sbo + (r % 8) * width + kb % width
        return swizzle_address(off, swizzle), lbo, sbo, step
    rb, k = np.meshgrid(np.arange(rows), np.arange(k_groups * 8), indexing="ij")
    if swizzle == Swizzle.NONE:
        off = (rb // 16) * sbo + (k // 8) * lbo + (k % 8) * 16 + rb % 16
        return off, lbo, sbo, step
    off = (rb // width) * lbo + (k // 8) * sbo + (k % 8) * width + rb % width
    return swizzle_address(off, swizzle), lbo, sbo, step


def shared_tile(bits: np.ndarray, type_name: str, major: str = "K", swizzle="none") -> SharedTile:
    """Lay a (rows, K) matrix of bit patterns out in shared memory.

    For A the rows are M; for B pass B transposed (N, K). `major="K"` stores
    K contiguously (the untransposed layout of both A and B); `major="MN"`
    stores rows contiguously, which wgmma reads with the transpose immediate
    (f16/bf16 only). Tiles are padded to whole 8-row groups.
    """
    _check_type(type_name, ELEMENT_BITS)
    _check_type(major, ("K", "MN"))
    bits = np.asarray(bits)
    if bits.ndim != 2:
        raise ValueError(f"bits must be a (rows, K) matrix, but got shape {bits.shape}")
    rows, k = bits.shape
    width = ELEMENT_BITS[type_name]
    if major == "MN" and width != 16:
        raise ValueError("MN-major (transposed) tiles exist for f16 and bf16 only")
    if rows % 8:
        raise ValueError(f"rows must be a multiple of 8, but got {rows}")
    if width == 1:  # b1: 8 elements per byte, lowest k in bit 0
        if k % 8:
            raise ValueError("b1 tiles need K a multiple of 8")
        packed = np.packbits(bits.astype(np.uint8), axis=1, bitorder="little")
        as_bytes = packed
    else:
        as_bytes = (
            bits.astype({8: np.uint8, 16: np.uint16, 32: np.uint32}[width]).copy().view(np.uint8)
        )
        as_bytes = as_bytes.reshape(rows, -1)
    elem_bytes = max(width // 8, 1)
    if major == "K":
        k_bytes = as_bytes.shape[1]
        if k_bytes % 16:
            raise ValueError(f"K must span a multiple of 16 bytes, but got {k_bytes}")
        off, lbo, sbo, step = _byte_offsets(rows, k_bytes, False, swizzle, 0)
        src = as_bytes
    else:
        if k % 8:
            raise ValueError(f"K must be a multiple of 8 for MN-major tiles, but got {k}")
        # (row-bytes, k): bytes of column k are the elements of all rows.
        src = as_bytes.reshape(rows, k, elem_bytes).transpose(0, 2, 1).reshape(rows * elem_bytes, k)
        off, lbo, sbo, step = _byte_offsets(rows * elem_bytes, 0, True, swizzle, k // 8)
    size = int(off.max()) + 1
    size = -(-size // 1024) * 1024
    data = np.zeros(size, dtype=np.uint8)
    data[off] = src
    atom_bytes, per_atom = _k_atoms(rows, k_bytes, swizzle) if major == "K" else (0, 0)
    return SharedTile(data, lbo, sbo, Swizzle.parse(swizzle), major, step, atom_bytes, per_atom)


def read_shared_tile(tile: SharedTile, rows: int, k: int, type_name: str) -> np.ndarray:
    """Inverse of shared_tile: the (rows, K) matrix of bit patterns."""
    width = ELEMENT_BITS[type_name]
    elem_bytes = max(width // 8, 1)
    if tile.major == "K":
        k_bytes = k // 8 if width == 1 else k * elem_bytes
        off, *_ = _byte_offsets(rows, k_bytes, False, tile.swizzle, 0)
        raw = tile.data[off]
    else:
        off, *_ = _byte_offsets(rows * elem_bytes, 0, True, tile.swizzle, k // 8)
        raw = (
            tile.data[off]
            .reshape(rows, elem_bytes, k)
            .transpose(0, 2, 1)
            .reshape(rows, k * elem_bytes)
        )
    if width == 1:
        return np.unpackbits(raw, axis=1, bitorder="little")[:, :k]
    dtype = {8: np.uint8, 16: np.uint16, 32: np.uint32}[width]
    return np.ascontiguousarray(raw).view(dtype).reshape(rows, k)
