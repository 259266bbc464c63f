"""Encode/decode of the wgmma matrix descriptor, field by field."""

import numpy as np
import pytest
from nvwgmma.descriptors import (
    DescriptorError,
    Swizzle,
    base_offset_for,
    decode_descriptor,
    encode_descriptor,
)


def test_bit_positions_match_ptx_table():
    assert encode_descriptor(16, 0, 0) == 1
    assert encode_descriptor(0, 16, 0) == 1 << 16
    assert encode_descriptor(0, 0, 16) == 1 << 32
    assert encode_descriptor(0, 0, 0, "128B", 1) == (1 << 62) | (1 << 49)
    assert encode_descriptor(0, 0, 0, "64B") == 2 << 62
    assert encode_descriptor(0, 0, 0, "32B") == 3 << 62
    top = (1 << 18) - 16
    assert encode_descriptor(top, top, top) == 0x3FFF | (0x3FFF << 16) | (0x3FFF << 32)


def test_round_trip_vectorized():
    rng = np.random.default_rng(0)
    start = rng.integers(0, 1 << 14, 1000) * 16
    lbo = rng.integers(0, 1 << 14, 1000) * 16
    sbo = rng.integers(0, 1 << 14, 1000) * 16
    base = rng.integers(0, 8, 1000)
    desc = encode_descriptor(start, lbo, sbo, Swizzle.B128, base)
    assert desc.dtype == np.uint64 and desc.shape == (1000,)
    fields = decode_descriptor(desc)
    assert (fields["start_address"] == start).all()
    assert (fields["leading_byte_offset"] == lbo).all()
    assert (fields["stride_byte_offset"] == sbo).all()
    assert (fields["base_offset"] == base).all()
    assert (fields["swizzle"] == int(Swizzle.B128)).all()


@pytest.mark.parametrize("swizzle", list(Swizzle))
def test_scalar_round_trip_each_swizzle(swizzle):
    desc = encode_descriptor(1024, 128, 2048, swizzle)
    assert decode_descriptor(desc) == {
        "start_address": 1024,
        "leading_byte_offset": 128,
        "stride_byte_offset": 2048,
        "base_offset": 0,
        "swizzle": swizzle,
    }


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(start_address=8), "start address must be a multiple of 16 bytes, but got 8"),
        (dict(start_address=1 << 18), r"start address must be in \[0, 262144\)"),
        (dict(start_address=-16), "start address must be in"),
        (dict(leading_byte_offset=24), "leading byte offset must be a multiple of 16"),
        (dict(stride_byte_offset=1 << 18), r"stride byte offset must be in \[0, 262144\)"),
        (dict(base_offset=1), "base offset must be 0 without swizzling, but got 1"),
        (dict(swizzle="128B", base_offset=8), r"base offset must be in \[0, 8\) for 128-byte"),
        (dict(swizzle="64B", base_offset=4), r"base offset must be in \[0, 4\) for 64-byte"),
        (dict(swizzle="32B", base_offset=2), r"base offset must be in \[0, 2\) for 32-byte"),
        (dict(swizzle="16B"), "swizzle must be one of none, 128B, 64B, 32B"),
        (dict(start_address=16.0), "start address must be an integer"),
    ],
)
def test_invalid_fields_raise(kwargs, message):
    args = dict(start_address=0, leading_byte_offset=16, stride_byte_offset=16)
    args.update(kwargs)
    with pytest.raises(DescriptorError, match=message):
        encode_descriptor(**args)


def test_invalid_field_in_array_names_the_value():
    with pytest.raises(DescriptorError, match="but got 40"):
        encode_descriptor(np.array([0, 16, 40]), 16, 16)


def test_reserved_bits_rejected_on_decode():
    with pytest.raises(DescriptorError, match="reserved"):
        decode_descriptor(np.uint64(1 << 14))


def test_base_offset_formula():
    # Pattern starting 384 bytes past a 1024-byte boundary: (addr >> 7) & 7 = 3.
    assert base_offset_for(1024 + 384, "128B") == 3
    assert base_offset_for(512 + 384, "64B") == 3
    assert base_offset_for(256 + 128, "32B") == 1
    assert base_offset_for(1024, "128B") == 0
    assert base_offset_for(4096 + 128, "none") == 0
