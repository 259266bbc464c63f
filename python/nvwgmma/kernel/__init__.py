"""What a Hopper kernel needs around wgmma.

* `geometry`: shared-memory operand tiles without data (descriptor fields,
  K stepping, sizes, alignment, the matching TMA box).
* `smem`: the swizzle and descriptor stepping (along K, across ring stages)
  as IR.

More (IR swizzling, mbarrier/TMA pipelines, epilogues) arrives with the
kernel layer; each piece is a plain module importable on its own.
"""

from . import smem
from .geometry import TileGeometry, TmaBox, tile_geometry

__all__ = ["TileGeometry", "TmaBox", "smem", "tile_geometry"]
