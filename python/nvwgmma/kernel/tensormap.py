"""Host side of TMA: encode the CUtensorMap of a row-major 2-D global
matrix for a tile's TmaBox, with cuda-python (an optional dependency).

    from nvwgmma.kernel import tile_geometry, tensormap
    box = tile_geometry("bf16", 128, 64, "K", "128B").tma()
    blob = tensormap.encode_tiled(a_device_ptr, "bf16", rows=M, cols=K, box=box)
    # 128 bytes: copy them to 64-byte aligned device memory and pass that
    # address to the kernel as the tensor map pointer.

The box's inner dimension runs along `cols` (contiguous in memory).
"""

from __future__ import annotations

from .. import _checks
from .geometry import TmaBox

__all__ = ["TENSOR_MAP_BYTES", "encode", "encode_tiled"]

TENSOR_MAP_BYTES = 128
_ELEMENT_BYTES = {"FLOAT16": 2, "BFLOAT16": 2, "TFLOAT32": 4, "FLOAT32": 4, "UINT8": 1, "INT32": 4}


def _driver():
    try:
        from cuda.bindings import driver
    except ImportError:
        try:
            from cuda import cuda as driver  # cuda-python before 12.6
        except ImportError:
            raise ImportError(
                "encode_tiled needs cuda-python (pip install cuda-python) and an NVIDIA "
                "driver; it was not found"
            ) from None
    return driver


def _check(result, what: str):
    error, *values = result if isinstance(result, tuple) else (result,)
    if int(error) != 0:
        raise RuntimeError(f"{what} must succeed, but got CUresult {int(error)} ({error})")
    return values[0] if values else None


def encode_tiled(
    address: int,
    elem_type: str,
    *,
    rows: int,
    cols: int,
    box: TmaBox,
    row_stride_elements: int | None = None,
    l2_promotion: str = "128B",
) -> bytes:
    """The 128-byte CUtensorMap of the (rows x cols) row-major matrix at
    device `address` whose boxes are `box` (from TileGeometry.tma())."""
    if not isinstance(box, TmaBox):
        raise TypeError(f"box must be a TmaBox (TileGeometry.tma()), but got {box!r}")
    address = _checks.integer(address, "address", 1, 2**64 - 1)
    if address % 16:
        raise ValueError(f"address must be 16-byte aligned for TMA, but got {address:#x}")
    rows = _checks.integer(rows, "rows", 1, 2**32 - 1)
    cols = _checks.integer(cols, "cols", 1, 2**32 - 1)
    stride = cols if row_stride_elements is None else row_stride_elements
    stride = _checks.integer(stride, "row_stride_elements", cols, 2**40)
    elem_bytes = _ELEMENT_BYTES[box.data_type]
    return encode(
        address,
        box.data_type,
        sizes=(cols, rows),
        strides=(stride * elem_bytes,),
        box=box.box,
        swizzle=box.swizzle,
        element_strides=box.element_strides,
        l2_promotion=l2_promotion,
    )


def encode(
    address: int,
    data_type: str,
    *,
    sizes,
    strides,
    box,
    swizzle: str,
    element_strides=None,
    l2_promotion: str = "128B",
) -> bytes:
    """The 128-byte CUtensorMap of a tensor of `sizes` elements (innermost,
    contiguous dimension first) whose outer dimensions are `strides` bytes
    apart, read in boxes of `box` elements (one per dimension)."""
    rank = len(sizes)
    if not 1 <= rank <= 5 or len(strides) != rank - 1 or len(box) != rank:
        raise ValueError(
            f"sizes, strides and box must describe 1 to 5 dimensions (strides one fewer), "
            f"but got {len(sizes)}, {len(strides)} and {len(box)}"
        )
    for stride in strides:
        if stride % 16 or not 0 < stride < 2**40:
            raise ValueError(
                f"every stride must be a positive multiple of 16 bytes for TMA, but got {stride}"
            )
    element_strides = (1,) * rank if element_strides is None else tuple(element_strides)
    element_strides = element_strides + (1,) * (rank - len(element_strides))
    driver = _driver()
    dtype = getattr(driver.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{data_type}")
    swizzle_mode = getattr(
        driver.CUtensorMapSwizzle,
        "CU_TENSOR_MAP_SWIZZLE_NONE" if swizzle == "none" else f"CU_TENSOR_MAP_SWIZZLE_{swizzle}",
    )
    promotion = getattr(
        driver.CUtensorMapL2promotion, f"CU_TENSOR_MAP_L2_PROMOTION_L2_{l2_promotion}"
    )
    tensor_map = _check(
        driver.cuTensorMapEncodeTiled(
            dtype,
            rank,
            address,
            [driver.cuuint64_t(v) for v in sizes],
            [driver.cuuint64_t(v) for v in strides],
            [driver.cuuint32_t(v) for v in box],
            [driver.cuuint32_t(v) for v in element_strides],
            driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle_mode,
            promotion,
            driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        ),
        "cuTensorMapEncodeTiled",
    )
    words = list(tensor_map.opaque)
    return b"".join(int(w).to_bytes(8, "little") for w in words)
