"""JAX Mosaic GPU kernels for sm_90, built without a GPU: the MLIR module the
front end emits (gpu.launch, nvvm, wgmma as inline PTX) and the same after
upstream's lowering, for the checker's front-end corpus.

Run with a Python that has jax and jaxlib (CPU wheels carry Mosaic GPU's
Python front end), not in CI:
    python test/frontends/mosaic/generate.py EXAMPLES OUT
EXAMPLES is jax's jax/experimental/mosaic/gpu/examples directory at the
commit matching the installed jax (the kernels are JAX's own examples,
Apache-2.0, imported from there and never copied); OUT is e.g.
test/frontends/mosaic-0.10. The lowering runs nvwgmma-opt
(NVWGMMA_TOOLS_DIR or PATH), which is mlir-opt 22 with nvwgmma.
"""

from __future__ import annotations

import gzip
import os
import pathlib
import shutil
import subprocess
import sys

import jax
import jax.experimental.mosaic.gpu.core as core
import numpy as np
from jax._src.interpreters import mlir
from jaxlib.mlir import ir

# Upstream's passes from the kernel region to the NVVM level with CFG.
LOWERING = ["--gpu-kernel-outlining", "--convert-scf-to-cf", "--canonicalize"]


def capture(modules: list[str]):
    """An as_gpu_kernel that returns nothing and keeps the kernel's module
    (no compilation, no GPU)."""

    def as_gpu_kernel(body, grid, block, in_shape, out_shape, smem_scratch_shape,
                      prof_spec=None, cluster=(1, 1, 1), module_name="unknown",
                      kernel_name=None, ir_version=None,
                      thread_semantics=core.LoweringSemantics.Lane, inout_shape=()):  # fmt: skip
        module, *_ = core._kernel_to_module(
            body, grid, block, in_shape, out_shape, smem_scratch_shape, prof_spec,
            cluster, module_name, kernel_name, thread_semantics, inout_shape,
        )  # fmt: skip
        modules.append(module.operation.get_asm(enable_debug_info=False))

    return as_gpu_kernel


def kernels(examples: pathlib.Path):
    sys.path.insert(0, str(examples))
    import flash_attention  # noqa: PLC0415
    import matmul  # noqa: PLC0415

    f16, bf16, f32 = (np.dtype(t) for t in ("float16", "bfloat16", "float32"))
    fa = flash_attention
    blocks = fa.BlockSizes(q=64, kv=64, stages=2)
    yield matmul, "mosaic_matmul", lambda: matmul.build_kernel(
        512, 512, 512, f16, f16, f32, stages=4)  # fmt: skip
    yield matmul, "mosaic_matmul_bf16_transposed", lambda: matmul.build_kernel(
        1024, 1024, 1024, bf16, bf16, bf16, stages=3, tile_n=256, rhs_transpose=True)  # fmt: skip
    yield fa, "mosaic_flash_attention", lambda: fa.build_kernel(
        1, 4, 1, 1024, 1024, 128, blocks, impl=fa.Implementation.TWO_COMPUTE_WG)  # fmt: skip
    yield fa, "mosaic_flash_attention_warp_specialized", lambda: fa.build_kernel(
        1, 4, 1, 1024, 1024, 128, blocks, impl=fa.Implementation.TWO_COMPUTE_ONE_TMA_WG)  # fmt: skip
    # The same schedule at other sizes (3 stages, 128-wide KV blocks, head
    # dim 64): written to tune the checker on, the kernel above stays held out.
    blocks3 = fa.BlockSizes(q=64, kv=128, stages=3)
    yield fa, "mosaic_flash_attention_warp_specialized_3stage", lambda: fa.build_kernel(
        1, 2, 1, 2048, 2048, 64, blocks3, impl=fa.Implementation.TWO_COMPUTE_ONE_TMA_WG)  # fmt: skip


def lower(text: str) -> str:
    tool = shutil.which("nvwgmma-opt", path=os.environ.get("NVWGMMA_TOOLS_DIR"))
    out = subprocess.run([tool, *LOWERING], input=text, capture_output=True, text=True,
                         check=True)  # fmt: skip
    return out.stdout


def main(examples: pathlib.Path, out: pathlib.Path) -> None:
    core._infer_arch = lambda: (9, 0)  # the target, with no GPU to ask
    (out / "kernels").mkdir(parents=True, exist_ok=True)
    for module, name, build in kernels(examples):
        modules: list[str] = []
        module.as_gpu_kernel = capture(modules)
        with mlir.make_ir_context(), ir.Location.unknown():
            build()
        emitted = modules[-1]
        header = (f"// JAX {jax.__version__} Mosaic GPU: {name} for sm_90, "
                  "test/frontends/mosaic/generate.py\n")  # fmt: skip
        for depth, text in (("", emitted), ("_lowered", lower(emitted))):
            data = (header + text).encode()
            path = out / "kernels" / f"{name}{depth}.mlir.gz"
            path.write_bytes(gzip.compress(data, mtime=0))
            print(path.name, len(text))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]))
