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
* `fragment`: the accumulator in registers: element coordinates, row
  reductions and scaling, masking, conversion to wgmma A fragments.
* `barrier`: named barriers with constant ids, and ping-pong turns.
* `fastmath`: the SFU's exp2 / log2 / reciprocal.
* `runtime`: loading and launching kernels with cuda-python.

Each piece is a plain module importable on its own; `nvwgmma.kernel.gemm`
and `nvwgmma.kernel.attention` are kernels composed from them.
"""

from . import barrier, epilogue, fastmath, fragment, pipeline, smem, tensormap
from .geometry import TileGeometry, TmaBox, tile_geometry

__all__ = [
    "TileGeometry",
    "TmaBox",
    "barrier",
    "epilogue",
    "fastmath",
    "fragment",
    "pipeline",
    "smem",
    "tensormap",
    "tile_geometry",
]
