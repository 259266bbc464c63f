"""Structured sparsity for wgmma.mma_async.sp (pure numpy).

A is 2:4 sparse for 16-bit and 8-bit types (two non-zeros in every chunk of
four consecutive elements of a row) and 1:2 sparse for tf32. `compress`
keeps the non-zero half of each row and records, per chunk, the positions
it kept; `expand` is its inverse; `pack_metadata` lays the positions out in
the 32-bit metadata register of each of the 128 threads, as
wgmma.mma_async.sp reads them for a sparsity selector.

Per-row metadata stream: chunk c of a row occupies bits 4c..4c+3. For 2:4
the two kept positions i0 < i1 are stored as i0 | i1 << 2; for tf32 (1:2)
the kept position p is stored as the pair of 16-bit halves it spans
(0b0100 for p = 0, 0b1110 for p = 1), as PTX specifies.
"""

from __future__ import annotations

import numpy as np

from .layouts import ELEMENT_BITS

__all__ = [
    "SparsityError",
    "SPARSE_K",  # noqa: F822 (module __getattr__, from the lattice)
    "compress",
    "expand",
    "pack_metadata",
    "metadata_map",
    "random_sparse",
]


def __getattr__(name):
    # K of one sparse instruction (the dense A width) per type, asked of the
    # lattice (lib/IR/Constraints.cpp).
    if name == "SPARSE_K":
        from . import lattice

        return {
            t: lattice.instruction_k(t, sparse=True)
            for t in lattice.INPUT_TYPES
            if lattice.family(t).sparse_k
        }
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class SparsityError(ValueError):
    """A matrix does not have the structured sparsity wgmma.sp needs."""


def _chunk(type_name: str) -> int:
    """Elements per sparsity chunk: 1:2 for 32-bit tf32, 2:4 for 16- and
    8-bit types (the storage format of PTX ISA 9.7.15.6.1)."""
    from .layouts import _lattice

    lattice = _lattice()
    if lattice is not None:
        try:
            lattice.instruction_k(type_name, sparse=True)
        except ValueError as error:
            raise SparsityError(f"{type_name} has no sparse wgmma form: {error}") from None
    bits = ELEMENT_BITS.get(type_name)
    if bits not in (8, 16, 32):
        raise SparsityError(
            f"element width must be 8, 16 or 32 bits for a sparse format, but got {type_name!r}"
        )
    return 2 if bits == 32 else 4


def compress(bits: np.ndarray, type_name: str):
    """Split a structured-sparse (rows, K) matrix of bit patterns.

    Returns (values, positions): values is (rows, K/2), the kept elements in
    order; positions is (rows, K/2) with each kept element's index inside its
    chunk. Zero elements are 0 bit patterns (for floats +0.0; -0.0 counts as
    non-zero). Raises SparsityError naming the first chunk with too many
    non-zeros.
    """
    chunk = _chunk(type_name)
    keep = chunk // 2
    bits = np.asarray(bits)
    rows, k = bits.shape
    if k % chunk:
        raise SparsityError(f"K must be a multiple of {chunk}, but got {k}")
    chunks = bits.reshape(rows, k // chunk, chunk)
    nonzero = chunks != 0
    counts = nonzero.sum(axis=2)
    if (counts > keep).any():
        r, c = np.argwhere(counts > keep)[0]
        raise SparsityError(
            f"row {r}, elements {c * chunk}..{c * chunk + chunk - 1} hold {counts[r, c]} "
            f"non-zeros, but {type_name} sparsity allows {keep} of every {chunk}"
        )
    # Kept positions: the non-zeros first, then the lowest zero positions, in
    # increasing order (a stable sort of "is zero" keeps both sorted).
    order = np.argsort(~nonzero, axis=2, kind="stable")[:, :, :keep]
    positions = np.sort(order, axis=2)
    values = np.take_along_axis(chunks, positions, axis=2)
    return values.reshape(rows, k // 2), positions.reshape(rows, k // 2)


def expand(values: np.ndarray, positions: np.ndarray, type_name: str) -> np.ndarray:
    """Inverse of compress: the dense (rows, K) matrix of bit patterns."""
    chunk = _chunk(type_name)
    keep = chunk // 2
    values = np.asarray(values)
    rows, half = values.shape
    dense = np.zeros((rows, half // keep, chunk), dtype=values.dtype)
    np.put_along_axis(
        dense, np.asarray(positions).reshape(rows, -1, keep), values.reshape(rows, -1, keep), axis=2
    )
    return dense.reshape(rows, half * 2)


def _row_streams(positions: np.ndarray, type_name: str) -> np.ndarray:
    """(rows, K/2) kept positions -> (rows,) uint64 metadata streams."""
    rows = positions.shape[0]
    if type_name == "tf32":
        nibbles = np.where(positions == 0, 0b0100, 0b1110).astype(np.uint64)
    else:
        p = positions.reshape(rows, -1, 2).astype(np.uint64)
        nibbles = p[:, :, 0] | (p[:, :, 1] << np.uint64(2))
    shifts = (4 * np.arange(nibbles.shape[1])).astype(np.uint64)
    return np.bitwise_or.reduce(nibbles << shifts, axis=1)


def metadata_map(type_name: str, selector: int = 0) -> np.ndarray:
    """Which metadata bits each of the 128 threads supplies.

    Returns an int array of shape (128, 2, 3): up to two pieces per thread,
    each (row, first bit of that row's stream, width), placed in the thread's
    32-bit register from bit 0 upwards; rows are -1 for unused pieces and for
    threads the selector leaves out.

    Quad g of warp w supplies rows r0 = 16w + g and r1 = r0 + 8 (measured on
    an H100, docs/validation.md):
    * f16, bf16, tf32: the lane pair `selector` (lanes 0,1 or 2,3); lane j of
      the pair holds bits 16j..16j+15 of r0 in its low half and the same bits
      of r1 in its high half;
    * 8-bit types: all four lanes (selector 0); lane j holds bits
      32(j / 2)..32(j / 2) + 31 of row r0 + 8(j % 2).
    """
    _chunk(type_name)

    t = np.arange(128)
    w, g, q = t // 32, (t % 32) // 4, t % 4
    r0 = 16 * w + g
    pieces = np.full((128, 2, 3), -1, dtype=np.int64)
    # 16- and 32-bit elements (chunks of 4 and 2 over 64 bits): a lane pair
    # per selector; 8-bit elements: all four lanes, selector 0.
    if ELEMENT_BITS[type_name] >= 16:
        if selector not in (0, 1):
            raise SparsityError(f"selector must be 0 or 1 for {type_name}, but got {selector}")
        active = q // 2 == selector
        j = q % 2
        pieces[active, 0] = np.stack([r0, 16 * j, np.full(128, 16)], axis=1)[active]
        pieces[active, 1] = np.stack([r0 + 8, 16 * j, np.full(128, 16)], axis=1)[active]
    else:
        if selector != 0:
            raise SparsityError(f"selector must be 0 for {type_name}, but got {selector}")
        pieces[:, 0] = np.stack([r0 + 8 * (q % 2), 32 * (q // 2), np.full(128, 32)], axis=1)
    return pieces


def pack_metadata(positions: np.ndarray, type_name: str, selector: int = 0) -> np.ndarray:
    """The (128,) uint32 metadata registers of one instruction, from the
    (64, K/2) positions `compress` returned for a 64 x sparse-K slice of A.
    Threads the selector leaves out get 0."""
    positions = np.asarray(positions)
    chunk = _chunk(type_name)
    pieces = metadata_map(type_name, selector)
    used = pieces[..., 0] >= 0
    need = int((pieces[..., 1] + pieces[..., 2])[used].max())  # stream bits read
    # A kept position is 2 bits of stream; a tf32 one is a whole nibble.
    per_position = 4 if chunk == 2 else 2
    have = per_position * positions.shape[1] if positions.ndim == 2 else 0
    if positions.ndim != 2 or positions.shape[0] != 64 or have < need:
        raise SparsityError(
            f"positions must be the (64, K/2) array compress returned for one instruction "
            f"({need // per_position} columns), but got shape {positions.shape}"
        )
    streams = _row_streams(positions, type_name)
    out = np.zeros(128, dtype=np.uint64)
    shift = np.zeros(128, dtype=np.uint64)
    for piece in np.moveaxis(pieces, 1, 0):
        row, first, width = piece.T
        used = row >= 0
        mask = np.uint64(0xFFFFFFFF)
        bits = streams[np.where(used, row, 0)] >> np.where(used, first, 0).astype(np.uint64)
        bits &= (np.uint64(1) << np.where(used, width, 0).astype(np.uint64)) - np.uint64(1)
        out |= np.where(used, bits << shift, 0).astype(np.uint64) & mask
        shift += np.where(used, width, 0).astype(np.uint64)
    return out.astype(np.uint32)


def random_sparse(rng, bits: np.ndarray, type_name: str) -> np.ndarray:
    """Zero a random half of every chunk of a (rows, K) bit-pattern matrix."""
    chunk = _chunk(type_name)
    rows, k = bits.shape
    scores = rng.random((rows, k // chunk, chunk))
    drop = np.argsort(scores, axis=2)[:, :, : chunk // 2]
    mask = np.ones((rows, k // chunk, chunk), bool)
    np.put_along_axis(mask, drop, False, axis=2)
    return np.where(mask.reshape(rows, k), bits, 0).astype(bits.dtype)
