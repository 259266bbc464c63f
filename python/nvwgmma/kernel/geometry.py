"""Shared-memory operand tiles without data: descriptor fields, K stepping,
sizes, alignment and the TMA box that lands a tile in its canonical layout.

    from nvwgmma.kernel import tile_geometry
    g = tile_geometry("bf16", rows=128, k=64, major="K", swizzle="128B")
    g.leading_byte_offset, g.stride_byte_offset, g.k_step_bytes   # 16, 1024, 32
    g.k_steps, g.tile_bytes, g.alignment                           # 4, 16384, 1024
    g.descriptor(start_address=0x400, k_step=2)                    # the i64 value
    g.tma()   # TmaBox(box=(64, 128), swizzle="128B", element_strides=(1, 1), ...)

The numbers come from the same layout code as `nvwgmma.layouts.shared_tile`
(which lays real data out), so the two always agree; K per instruction
comes from `nvwgmma.lattice`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import _checks
from ..descriptors import Swizzle, encode_descriptor, swizzle_width
from ..layouts import ELEMENT_BITS, _check_type, _geometry, _k_atoms, k_step_offset

__all__ = ["TileGeometry", "TmaBox", "tile_geometry"]

# cuTensorMapEncodeTiled's CUtensorMapDataType for each wgmma element type
# (fp8 and b1 travel as raw bytes).
_TMA_DATA_TYPE = {
    "f16": "FLOAT16", "bf16": "BFLOAT16", "tf32": "TFLOAT32", "f32": "FLOAT32",
    "e4m3": "UINT8", "e5m2": "UINT8", "s8": "UINT8", "u8": "UINT8", "b1": "UINT8",
    "s32": "INT32",
}  # fmt: skip


@dataclass(frozen=True)
class TmaBox:
    """The tensor-map parameters whose box lands a tile exactly in the
    canonical layout its descriptor describes.

    box              (inner, outer) box size in elements: inner runs along
                     the contiguous dimension of global memory
    swizzle          the CU_TENSOR_MAP_SWIZZLE_* mode: "none", "32B", "64B", "128B"
    element_strides  (1, 1): every element of the box is loaded
    data_type        the CU_TENSOR_MAP_DATA_TYPE_* name
    bytes            bytes one box brings (what an mbarrier expect_tx counts)
    boxes            boxes needed to fill the whole tile, stacked along outer
    """

    box: tuple[int, int]
    swizzle: str
    element_strides: tuple[int, int]
    data_type: str
    bytes: int
    boxes: int

    @classmethod
    def from_dict(cls, fields: dict) -> TmaBox:
        """The box back from `dataclasses.asdict` (e.g. launch metadata JSON)."""
        return cls(
            **{
                **fields,
                "box": tuple(fields["box"]),
                "element_strides": tuple(fields["element_strides"]),
            }
        )


@dataclass(frozen=True)
class TileGeometry:
    """A (rows x k) operand tile in shared memory, as wgmma reads it."""

    elem_type: str
    rows: int
    k: int
    major: str
    swizzle: Swizzle
    leading_byte_offset: int
    stride_byte_offset: int
    k_step_bytes: int  # start-address advance per instruction along K
    instruction_k: int
    k_steps: int  # instructions along the tile's K
    tile_bytes: int  # bytes the tile spans (a multiple of the alignment)
    alignment: int  # required alignment of the tile's base address
    # A K-major tile wider than one swizzle atom: atoms of rows x width bytes
    # lie k_atom_bytes apart along K, k_steps_per_atom instructions each.
    k_atom_bytes: int = 0
    k_steps_per_atom: int = 0

    def k_offset(self, k_step: int) -> int:
        """Byte offset of instruction `k_step`'s slice from the tile base."""
        k_step = _checks.integer(k_step, "k_step", 0, self.k_steps - 1)
        return k_step_offset(self, k_step)

    def descriptor(self, start_address: int = 0, k_step: int = 0) -> int:
        """The 64-bit descriptor of instruction `k_step` of a tile at
        `start_address` (aligned to `alignment`, so the base offset is 0)."""
        start_address = _checks.integer(start_address, "start_address", 0, (1 << 18) - 1)
        if start_address % self.alignment:
            raise ValueError(
                f"start address must be a multiple of {self.alignment} for this tile, "
                f"but got {start_address}"
            )
        return int(
            encode_descriptor(
                start_address + self.k_offset(k_step),
                self.leading_byte_offset,
                self.stride_byte_offset,
                self.swizzle,
                0,
            )
        )

    def descriptor_constant(self) -> int:
        """The descriptor with start address 0: OR it with (address >> 4) at
        run time (what `wg.descriptor` does in IR)."""
        return self.descriptor(0, 0)

    def _run(self) -> tuple[int, int, int]:
        """(swizzle width, contiguous run bytes, outer extent) for TMA."""
        if self.swizzle == Swizzle.NONE:
            raise ValueError(
                "swizzle must be 32B, 64B or 128B for a TMA-loaded tile (the unswizzled "
                "canonical layout interleaves 16-byte core matrices), but got none"
            )
        width = swizzle_width(self.swizzle)
        bits = ELEMENT_BITS[self.elem_type]
        if self.major == "K":
            run_bytes, outer = self.k * bits // 8, self.rows
        else:
            run_bytes, outer = self.rows * bits // 8, self.k
        if run_bytes % width:
            raise ValueError(
                f"the contiguous run must be whole {width}-byte swizzle atoms for a TMA box, "
                f"but got {run_bytes} bytes"
            )
        return width, run_bytes, outer

    def tma(self) -> TmaBox:
        """The TMA box (and swizzle) whose copies write this tile in its
        layout: one box is one swizzle atom wide (the contiguous run's width)
        and up to 256 outer rows deep (equal boxes: a divisor of the outer extent); `boxes` of them fill the tile, placed
        by `tma_placements`. (Unswizzled canonical layouts interleave 16-byte
        core matrices, which no box produces.)"""
        width, run_bytes, outer = self._run()
        bits = ELEMENT_BITS[self.elem_type]
        # TMA boxes hold at most 256 per dimension; equal boxes tile the
        # outer extent exactly (a partial last box would write past the tile).
        box_outer = max(d for d in range(8, min(outer, 256) + 1, 8) if outer % d == 0)
        return TmaBox(
            box=(width * 8 // bits, box_outer),
            swizzle=f"{width}B",
            element_strides=(1, 1),
            data_type=_TMA_DATA_TYPE[self.elem_type],
            bytes=width * box_outer,
            boxes=(run_bytes // width) * (outer // box_outer),
        )

    def tma_placements(self) -> list[tuple[int, int, int]]:
        """Where each of the tile's `tma().boxes` boxes goes: (shared byte
        offset from the tile base, inner and outer element offsets of its
        coordinates). Boxes along the contiguous run are swizzle atoms (a
        K-major tile's `k_atom_bytes`, an MN-major one's leading byte offset
        apart); along the outer dimension, 256-row blocks one box apart."""
        width, run_bytes, outer = self._run()
        box = self.tma()
        inner = box.box[0]
        atom_bytes = self.k_atom_bytes if self.major == "K" else self.leading_byte_offset
        return [
            (atom * atom_bytes + block * box.bytes, atom * inner, block * box.box[1])
            for atom in range(run_bytes // width)
            for block in range(outer // box.box[1])
        ]


def tile_geometry(elem_type: str, rows: int, k: int, major: str = "K", swizzle="128B"):
    """The geometry of a (rows x k) tile of `elem_type` elements.

    For A, rows is M (64 per warpgroup instruction); for B, rows is N and the
    tile is B transposed (N x K), as `shared_tile` takes it. `major="K"`
    keeps K contiguous (no transpose); `major="MN"` keeps rows contiguous and
    needs the transpose immediate (f16/bf16). `k` must be a whole number of
    instructions.
    """
    from .. import lattice

    _check_type(elem_type, lattice.INPUT_TYPES)
    _check_type(major, ("K", "MN"))
    rows = _checks.integer(rows, "rows", 1, 1 << 16)
    k = _checks.integer(k, "k", 1, 1 << 16)
    swizzle = Swizzle.parse(swizzle)
    bits = ELEMENT_BITS[elem_type]
    fam = lattice.family(elem_type)
    if major == "MN" and not fam.can_transpose:
        raise ValueError(
            f"major must be K for {elem_type} (transposes exist for f16 and bf16), but got MN"
        )
    if rows % 8:
        raise ValueError(f"rows must be a multiple of 8, but got {rows}")
    if k % fam.k:
        raise ValueError(f"k must be a multiple of the instruction K {fam.k}, but got {k}")
    atom_bytes, per_atom = 0, 0
    if major == "K":
        lbo, sbo, step, size = _geometry(rows, k * bits // 8, False, swizzle, 0)
        atom_bytes, per_atom = _k_atoms(rows, k * bits // 8, swizzle)
    else:
        lbo, sbo, step, size = _geometry(rows * bits // 8, 0, True, swizzle, k // 8)
    alignment = 8 * swizzle_width(swizzle) if swizzle != Swizzle.NONE else 16
    return TileGeometry(
        elem_type=elem_type,
        rows=rows,
        k=k,
        major=major,
        swizzle=swizzle,
        leading_byte_offset=lbo,
        stride_byte_offset=sbo,
        k_step_bytes=step,
        instruction_k=fam.k,
        k_steps=k // fam.k,
        tile_bytes=-(-size // alignment) * alignment,
        alignment=alignment,
        k_atom_bytes=atom_bytes,
        k_steps_per_atom=per_atom,
    )
