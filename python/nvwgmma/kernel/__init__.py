"""What a Hopper kernel needs around wgmma.

* `geometry`: shared-memory operand tiles without data (descriptor fields,
  K stepping, sizes, alignment, the matching TMA box).
* `smem`: the swizzle and descriptor stepping (along K, across ring stages)
  as IR.
* `epilogue`: the accumulator stored to global memory, converted to
  f32/bf16/f16 on the way.
* `pipeline`: a TMA + mbarrier ring buffer (init, stage/phase, producer
  acquire/expect/load, consumer wait/release) on upstream nvvm ops.
* `tensormap`: the host-side CUtensorMap for a tile's TMA box (cuda-python).

More (IR swizzling, mbarrier/TMA pipelines, epilogues) arrives with the
kernel layer; each piece is a plain module importable on its own.
"""

from . import epilogue, pipeline, smem, tensormap
from .geometry import TileGeometry, TmaBox, tile_geometry

__all__ = [
    "TileGeometry",
    "TmaBox",
    "epilogue",
    "pipeline",
    "smem",
    "tensormap",
    "tile_geometry",
]
