"""Fragment and shared-memory layouts: bijections and round trips."""

import numpy as np
import pytest
from nvwgmma import layouts as L
from nvwgmma.descriptors import Swizzle

N_ALL = list(range(8, 257, 8))


@pytest.mark.parametrize("d_type", ["f16", "f32", "s32"])
def test_accumulator_map_is_a_bijection(d_type):
    for n in N_ALL:
        thread, register, half = L.accumulator_map(d_type, n)
        slots = thread * 1000 + register * 2 + half
        assert (thread >= 0).all() and (register >= 0).all()
        assert len(np.unique(slots)) == 64 * n  # every element held exactly once
        count = n // 4 if d_type == "f16" else n // 2
        assert register.max() == count - 1
        assert np.bincount(thread.ravel()).tolist() == [n // 2] * 128


@pytest.mark.parametrize("d_type", ["f16", "f32", "s32"])
@pytest.mark.parametrize("n", [8, 24, 136, 256])
def test_accumulator_pack_unpack_identity(d_type, n):
    rng = np.random.default_rng(n)
    bits = rng.integers(0, 1 << (16 if d_type == "f16" else 32), (64, n), dtype=np.uint64)
    regs = L.pack_accumulator(bits, d_type)
    assert regs.shape == (128, n // 4 if d_type == "f16" else n // 2)
    assert (L.unpack_accumulator(regs, d_type, n) == bits).all()


def test_accumulator_map_matches_ptx_figure_for_thread_zero_and_five():
    thread, register, _ = L.accumulator_map("f32", 16)
    # Thread 0: rows 0 and 8, columns 0, 1, 8, 9 (PTX ISA fig. "WGMMA .m64nNk16 D").
    assert {(r, c) for r, c in zip(*np.nonzero(thread == 0))} == {
        (0, 0),
        (0, 1),
        (8, 0),
        (8, 1),
        (0, 8),
        (0, 9),
        (8, 8),
        (8, 9),
    }
    assert register[8, 1] == 3 and register[0, 8] == 4
    # Thread 5: g = 1, q = 1 -> row 1, columns 2, 3.
    assert thread[1, 2] == 5 and thread[1, 3] == 5 and thread[9, 10] == 5


@pytest.mark.parametrize("a_type", list(L.K_OF))
def test_a_fragment_map_is_a_bijection(a_type):
    thread, register, position = L.a_fragment_map(a_type)
    k = L.K_OF[a_type]
    assert thread.shape == (64, k) and (thread >= 0).all()
    slots = (thread * 4 + register) * 64 + position
    assert len(np.unique(slots)) == 64 * k
    assert register.max() == 3
    assert position.max() == 32 // L.ELEMENT_BITS[a_type] - 1


@pytest.mark.parametrize("a_type", list(L.K_OF))
def test_a_fragment_pack_unpack_identity(a_type):
    rng = np.random.default_rng(1)
    width = L.ELEMENT_BITS[a_type]
    bits = rng.integers(0, 1 << width, (64, L.K_OF[a_type]), dtype=np.uint64)
    regs = L.pack_a_fragment(bits, a_type)
    assert regs.shape == (128, 4)
    assert (L.unpack_a_fragment(regs, a_type) == bits).all()


def test_a_fragment_f16_thread0_figure():
    thread, register, position = L.a_fragment_map("f16")
    # Thread 0 holds a0,a1 = (0,0),(0,1); a2,a3 = (8,0),(8,1); a4.. = k + 8.
    assert [(register[r, k], position[r, k]) for r, k in [(0, 0), (0, 1), (8, 0), (0, 8)]] == [
        (0, 0),
        (0, 1),
        (1, 0),
        (2, 0),
    ]
    assert (thread[[0, 0, 8, 8], [0, 9, 1, 8]] == 0).all()


CASES = (
    [("f16", "K", s) for s in Swizzle]
    + [("bf16", "MN", s) for s in Swizzle]
    + [
        ("tf32", "K", Swizzle.B128),
        ("e4m3", "K", Swizzle.B64),
        ("s8", "K", Swizzle.NONE),
        ("b1", "K", Swizzle.NONE),
        ("b1", "K", Swizzle.B32),
    ]
)


@pytest.mark.parametrize("type_name, major, swizzle", CASES)
def test_shared_tile_round_trip(type_name, major, swizzle):
    rng = np.random.default_rng(2)
    width = L.ELEMENT_BITS[type_name]
    k = 32 * 8 // width if width < 32 else 8  # 32 bytes of K (one instruction)
    if width == 1:
        k = 256
    rows = 64
    bits = rng.integers(0, 1 << width, (rows, k), dtype=np.uint64)
    tile = L.shared_tile(bits, type_name, major, swizzle)
    assert tile.data.size % 1024 == 0
    assert (L.read_shared_tile(tile, rows, k, type_name) == bits).all()


def test_swizzle_permutes_within_each_atom():
    for swizzle, width in [("128B", 128), ("64B", 64), ("32B", 32)]:
        addr = np.arange(8 * width * 4)
        swz = L.swizzle_address(addr, swizzle)
        assert sorted(swz.tolist()) == addr.tolist()
        assert (swz // (8 * width) == addr // (8 * width)).all() or width == 128


def test_k_major_no_swizzle_strides():
    tile = L.shared_tile(np.zeros((64, 16), np.uint16), "f16", "K", "none")
    assert (tile.leading_byte_offset, tile.stride_byte_offset) == (128, 256)
    assert tile.k_step_bytes == 256
    desc = tile.descriptor(0x400, k_step=1)
    from nvwgmma.descriptors import decode_descriptor

    assert decode_descriptor(desc)["start_address"] == 0x400 + 256


def test_encodings_round_trip():
    x = np.array([0.0, 1.5, -2.25, 448.0])
    assert (L.from_bits(L.to_bits(x, "e4m3"), "e4m3") == x).all()
    assert (L.from_bits(L.to_bits(x, "e5m2"), "e5m2") == [0.0, 1.5, -2.0, 448.0]).all()
    assert (L.from_bits(L.to_bits(x, "bf16"), "bf16") == x).all()
    assert (L.from_bits(L.to_bits([-128, 127], "s8"), "s8") == [-128, 127]).all()
    with pytest.raises(ValueError, match="s8 values"):
        L.to_bits([200], "s8")
    with pytest.raises(ValueError, match="MN-major"):
        L.shared_tile(np.zeros((64, 32), np.uint8), "e4m3", "MN")
