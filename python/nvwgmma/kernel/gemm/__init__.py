"""A persistent, warp-specialised TMA GEMM: a generator composed of pieces,
and `matmul`, which compiles (or loads precompiled PTX), caches and launches it.

    from nvwgmma.kernel.gemm import matmul
    c = matmul(a, b, bias=bias, activation="gelu")     # torch or cupy tensors

    from nvwgmma.kernel.gemm import GemmConfig, build_gemm
    module, meta = build_gemm(GemmConfig(dtype="bf16", out_dtype="bf16"))

    python -m nvwgmma.kernel.gemm --dtype bf16 --out-dtype bf16 --ptx gemm.ptx --json gemm.json
    python -m nvwgmma.kernel.gemm --precompile DIR     # PTX for a machine without a build

C[b] = epilogue(A[b] · B[b]) for any M, N, K >= 1 and a batch: A is M x K,
K-major (row-major) or M-major; B is K x N, K-major (the transpose of an
N x K row-major weight) or N-major (row-major); C is M x N row-major. TMA
zero-fills the loads that hang over the edges and clips the stores.

The pieces (each its own module, each tested on its own):
* `config`     GemmConfig: tile, stages, layouts, epilogue, fusion chain
* `mainloop`   the producer's TMA ring over K and the consumers' wgmma steps
* `fusion`     the epilogue chain on the f32 accumulator (alpha, bias,
               activations, residual / beta C, scale)
* `store`      the collective epilogue: chain, then stmatrix + TMA store or
               masked stores from registers (any N, fp8 output)
* `scheduler`  the tile schedulers: persistent data-parallel (L2-grouped,
               balanced), split-K and stream-K
* `fixup`      split-K / stream-K partials through a global workspace,
               added in a fixed order (deterministic)
* `selector`   select_config: the configuration a problem gets
* `schedule`   the kernel schedule (cooperative: one producer warpgroup,
               consumers sharing a tile)
* `kernel`     build_gemm: the composition
* `launch`     matmul: problem -> configuration -> cached kernel -> launch
* `grouped`    grouped_mm: torch._grouped_mm's ragged groups (scheduler.Grouped)
"""

from .config import ABLATIONS, PERSISTENT_MAX_K, SHIPPED, GemmConfig
from .fusion import Activation, Alpha, Bias, Residual, Scale, ScaleVector
from .kernel import KERNEL_SIGNATURE, build_gemm
from .scheduler import grid_size
from .selector import candidates, select_config

__all__ = [
    "ABLATIONS",
    "Activation",
    "Alpha",
    "Bias",
    "GemmConfig",
    "KERNEL_SIGNATURE",
    "PERSISTENT_MAX_K",
    "Residual",
    "SHIPPED",
    "Scale",
    "ScaleVector",
    "blockwise_mm",
    "build_gemm",
    "candidates",
    "grid_size",
    "grouped_mm",
    "matmul",
    "scaled_grouped_mm",
    "select_config",
]


def __getattr__(name):
    if name == "matmul":
        from .launch import matmul

        return matmul
    if name == "blockwise_mm":
        from .blockwise import blockwise_mm

        return blockwise_mm
    if name in ("grouped_mm", "scaled_grouped_mm"):
        from . import grouped

        return getattr(grouped, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
