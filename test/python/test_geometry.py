"""Tile geometry without data agrees with shared_tile (which lays data out)
for every input type, major and swizzle; the TMA box matches the layout."""

import numpy as np
import pytest

TYPES = ["f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8", "b1"]
SWIZZLES = ["none", "32B", "64B", "128B"]


def _cases():
    from nvwgmma import lattice
    from nvwgmma.layouts import ELEMENT_BITS

    for t in TYPES:
        bits = ELEMENT_BITS[t]
        k1 = lattice.instruction_k(t)
        for swizzle in SWIZZLES:
            width = {"none": 256, "32B": 32, "64B": 64, "128B": 128}[swizzle]
            for rows in (8, 64, 128):
                # K-major: as many instructions as fit the swizzle width.
                for steps in (1, 2, 4):
                    if k1 * steps * bits // 8 <= width:
                        yield t, rows, k1 * steps, "K", swizzle
                if t in ("f16", "bf16") and rows * 2 <= width:
                    yield t, rows, k1 * 2, "MN", swizzle


@pytest.mark.parametrize("case", list(_cases()), ids=lambda c: "-".join(map(str, c)))
def test_geometry_matches_shared_tile(case):
    from nvwgmma.kernel import tile_geometry
    from nvwgmma.layouts import shared_tile

    t, rows, k, major, swizzle = case
    g = tile_geometry(t, rows, k, major, swizzle)
    tile = shared_tile(np.zeros((rows, k), np.uint64), t, major, swizzle)
    assert (g.leading_byte_offset, g.stride_byte_offset, g.k_step_bytes) == (
        tile.leading_byte_offset,
        tile.stride_byte_offset,
        tile.k_step_bytes,
    )
    # Every byte shared_tile writes lies inside the tile; the tile is no
    # bigger than shared_tile's pattern-padded buffer.
    ones = shared_tile(np.full((rows, k), 1, np.uint64), t, major, swizzle).data
    assert np.flatnonzero(ones).max() < g.tile_bytes <= len(ones)
    assert g.tile_bytes % g.alignment == 0
    for step in range(g.k_steps):
        assert g.descriptor(1024, step) == int(tile.descriptor(1024, step))


def test_bf16_128b_tile_is_the_tma_tile_of_the_notes():
    from nvwgmma.kernel import tile_geometry

    g = tile_geometry("bf16", 128, 64, "K", "128B")
    assert (g.leading_byte_offset, g.stride_byte_offset, g.k_step_bytes) == (16, 1024, 32)
    assert (g.k_steps, g.tile_bytes, g.alignment) == (4, 16384, 1024)
    box = g.tma()
    assert box.box == (64, 128) and box.swizzle == "128B" and box.data_type == "BFLOAT16"
    assert box.bytes == g.tile_bytes and box.boxes == 1
    import json
    from dataclasses import asdict

    assert type(box).from_dict(json.loads(json.dumps(asdict(box)))) == box


@pytest.mark.parametrize("t,swizzle", [("f16", "64B"), ("e4m3", "128B"), ("tf32", "32B")])
def test_tma_box_lands_the_canonical_layout(t, swizzle):
    """A TMA box with this swizzle writes row r, byte b of the box at
    swz(r * width + b): the same bytes shared_tile produces."""
    from nvwgmma.kernel import tile_geometry
    from nvwgmma.layouts import ELEMENT_BITS, shared_tile, swizzle_address

    width = {"32B": 32, "64B": 64, "128B": 128}[swizzle]
    bits = ELEMENT_BITS[t]
    k = width * 8 // bits
    g = tile_geometry(t, 64, k, "K", swizzle)
    box = g.tma()
    assert box.box == (k, 64)
    rng = np.random.default_rng(1)
    data = rng.integers(0, 1 << bits, (64, k)).astype(np.uint64)
    tile = shared_tile(data, t, "K", swizzle)
    raw = data.astype({8: np.uint8, 16: np.uint16, 32: np.uint32}[bits]).view(np.uint8)
    tma = np.zeros(g.tile_bytes, np.uint8)
    r, b = np.meshgrid(np.arange(64), np.arange(width), indexing="ij")
    tma[swizzle_address(r * width + b, swizzle)] = raw.reshape(64, width)
    assert (tma == tile.data[: g.tile_bytes]).all()


@pytest.mark.parametrize(
    "args,message",
    [
        (("f32", 64, 16), "expected one of"),
        (("bf16", 60, 16), "rows must be a multiple of 8"),
        (("bf16", 64, 24), "multiple of the instruction K 16"),
        (("s8", 64, 32, "MN"), "major must be K for s8"),
        (("bf16", 64, 96, "K", "128B"), "whole number of 128-byte atoms of K"),
    ],
)
def test_geometry_refuses_what_has_no_layout(args, message):
    from nvwgmma.kernel import tile_geometry

    with pytest.raises(ValueError, match=message):
        tile_geometry(*args)


def test_tma_refuses_unswizzled_and_partial_runs():
    from nvwgmma.kernel import tile_geometry

    with pytest.raises(ValueError, match="swizzle must be 32B, 64B or 128B"):
        tile_geometry("bf16", 64, 64, "K", "none").tma()
    with pytest.raises(ValueError, match="contiguous run must be whole 128-byte swizzle atoms"):
        tile_geometry("bf16", 64, 32, "K", "128B").tma()


@pytest.mark.parametrize(
    "t,rows,k,major",
    [("bf16", 128, 128, "K"), ("bf16", 64, 256, "K"), ("e4m3", 128, 256, "K"),
     ("bf16", 128, 64, "MN"), ("bf16", 256, 64, "MN"), ("bf16", 320, 64, "K")],
)  # fmt: skip
def test_wide_tiles_are_swizzle_atoms_side_by_side(t, rows, k, major):
    """A tile wider than one 128-byte atom: each atom holds exactly what a
    one-atom tile of its slice holds (so each k step's descriptor reads the
    right data), the geometry agrees with shared_tile, and the TMA boxes at
    their placements write the tile shared_tile lays out."""
    from nvwgmma.kernel import tile_geometry
    from nvwgmma.layouts import ELEMENT_BITS, shared_tile, swizzle_address

    bits = ELEMENT_BITS[t]
    rng = np.random.default_rng(7)
    data = rng.integers(0, 1 << bits, (rows, k)).astype(np.uint64)
    g = tile_geometry(t, rows, k, major, "128B")
    tile = shared_tile(data, t, major, "128B")
    box = g.tma()
    assert box.boxes == len(g.tma_placements())
    raw = data.astype({8: np.uint8, 16: np.uint16}[bits]).view(np.uint8).reshape(rows, -1)
    written = np.zeros(g.tile_bytes, np.uint8)
    inner, outer = box.box
    for offset, di, do in g.tma_placements():
        # The box's rows run along the outer dimension, 128 bytes each.
        if major == "K":
            chunk = raw[do : do + outer, di * bits // 8 : (di + inner) * bits // 8]
        else:
            elems = data[di : di + inner, do : do + outer].T  # (k, rows) of the box
            chunk = np.ascontiguousarray(elems.astype(np.uint16)).view(np.uint8).reshape(outer, -1)
        r, b = np.meshgrid(np.arange(chunk.shape[0]), np.arange(128), indexing="ij")
        written[offset + swizzle_address(r * 128 + b, "128B")] = chunk
    assert (written == tile.data[: g.tile_bytes]).all()
    if major == "K":
        per_atom = 128 * 8 // bits
        for atom in range(k // per_atom):
            narrow = shared_tile(data[:, atom * per_atom : (atom + 1) * per_atom], t, "K", "128B")
            base = atom * g.k_atom_bytes
            assert (tile.data[base : base + g.k_atom_bytes] == narrow.data[: g.k_atom_bytes]).all()
        for step in range(g.k_steps):
            assert g.descriptor(1024, step) == int(tile.descriptor(1024, step))
