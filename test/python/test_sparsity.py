"""The 2:4 / 1:2 compressor and the metadata packing (pure numpy)."""

import numpy as np
import pytest
from nvwgmma import layouts as L
from nvwgmma import sparsity as S


def sparse_bits(rng, type_name, rows=64):
    k = S.SPARSE_K[type_name]
    if type_name in ("s8", "u8"):
        values = rng.integers(1, 100, (rows, k))
    else:
        values = rng.uniform(1.0, 2.0, (rows, k))
    return S.random_sparse(rng, L.to_bits(values, type_name), type_name)


@pytest.mark.parametrize("type_name", list(S.SPARSE_K))
def test_compress_expand_identity(type_name):
    rng = np.random.default_rng(3)
    bits = sparse_bits(rng, type_name)
    values, positions = S.compress(bits, type_name)
    assert values.shape == (64, bits.shape[1] // 2)
    assert (values != 0).all()  # exactly the non-zeros are kept
    assert (S.expand(values, positions, type_name) == bits).all()


def test_chunks_with_fewer_non_zeros_pad_with_zero_positions():
    bits = np.zeros((1, 8), np.uint16)
    bits[0, 2] = 0x3C00  # one non-zero in the first chunk, none in the second
    values, positions = S.compress(bits, "f16")
    assert positions.tolist() == [[0, 2, 0, 1]]
    assert (S.expand(values, positions, "f16") == bits).all()


@pytest.mark.parametrize("type_name, bad", [("f16", [1, 1, 1, 0]), ("tf32", [1, 1])])
def test_too_many_non_zeros_raise(type_name, bad):
    bits = np.zeros((2, S.SPARSE_K[type_name]), np.uint32)
    bits[1, 4 : 4 + len(bad)] = bad
    with pytest.raises(
        S.SparsityError, match="row 1, elements 4..7 hold 3 non-zeros|row 1, elements 4..5 hold 2"
    ):
        S.compress(bits, type_name)


def test_b1_has_no_sparse_form():
    with pytest.raises(S.SparsityError, match="b1 has no sparse wgmma form"):
        S.compress(np.zeros((64, 512), np.uint8), "b1")


def test_metadata_encoding_of_one_row():
    # Chunks keep (0,1), (1,3), (2,3), (0,1): nibbles 4, 0xD, 0xE, 4 from bit 0 up.
    positions = np.zeros((64, 16), np.int64)
    positions[:, :2], positions[:, 2:4], positions[:, 4:6] = [0, 1], [1, 3], [2, 3]
    positions[:, 6:] = np.tile([0, 1], 5)
    meta = S.pack_metadata(positions, "f16", selector=0)
    # Thread 0 (lane 0 of the pair): bits 0..15 of rows 0 and 8.
    assert meta[0] == 0x4ED4 | (0x4ED4 << 16)
    assert meta[2] == 0 and meta[3] == 0  # lanes 2,3 are not selected


def test_tf32_index_pairs():
    positions = np.zeros((64, 8), np.int64)
    positions[:, 1] = 1
    meta = S.pack_metadata(positions, "tf32", selector=1)
    assert meta[2] == 0x44E4_44E4  # lane 2 (pair lane 0): row 0 in low, row 8 in high half
    assert meta[0] == 0


@pytest.mark.parametrize("type_name, selector", [("f16", 1), ("tf32", 0), ("e4m3", 0), ("u8", 0)])
def test_metadata_map_covers_every_row_bit_once(type_name, selector):
    pieces = S.metadata_map(type_name, selector)
    bits_per_row = 2 * S.SPARSE_K[type_name] if type_name == "tf32" else S.SPARSE_K[type_name]
    covered = np.zeros((64, bits_per_row), int)
    for row, first, width in pieces.reshape(-1, 3):
        if row >= 0:
            covered[row, first : first + width] += 1
    assert (covered == 1).all()


def test_selector_rules():
    with pytest.raises(S.SparsityError, match="selector must be 0 for s8, but got 1"):
        S.metadata_map("s8", 1)
    with pytest.raises(S.SparsityError, match="selector must be 0 or 1 for bf16, but got 2"):
        S.metadata_map("bf16", 2)
