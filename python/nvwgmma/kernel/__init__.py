"""What a Hopper kernel needs around wgmma.

* `geometry`: shared-memory operand tiles without data (descriptor fields,
  K stepping, sizes, alignment, the matching TMA box).
* `smem`: the swizzle and descriptor stepping (along K, across ring stages)
  as IR.
* `epilogue`: the accumulator stored to global memory, converted to
  f32/bf16/f16 on the way.

More (IR swizzling, mbarrier/TMA pipelines, epilogues) arrives with the
kernel layer; each piece is a plain module importable on its own.
"""

from . import epilogue, smem
from .geometry import TileGeometry, TmaBox, tile_geometry

__all__ = ["TileGeometry", "TmaBox", "epilogue", "smem", "tile_geometry"]
