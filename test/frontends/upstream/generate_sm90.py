"""Upstream MLIR's sm90 GEMM integration tests
(mlir/test/Integration/GPU/CUDA/sm90/python: a multistage GEMM and a
warp-specialised one, built by tools/matmulBuilder.py with the MLIR Python
bindings) for sm_90, without a GPU, at the nvgpu level and lowered by
upstream's passes, for the checker's front-end corpus.

Run with a Python that has jaxlib (its MLIR bindings carry the nvgpu
dialect), not in CI:
    python test/frontends/upstream/generate_sm90.py LLVM_PROJECT OUT
LLVM_PROJECT is an llvm-project checkout (the builder is imported from it,
never copied); OUT is e.g. test/frontends/upstream-sm90. The lowering runs
nvwgmma-opt (NVWGMMA_TOOLS_DIR or PATH) at generate.py's depths.
"""

from __future__ import annotations

import gzip
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import generate  # noqa: E402

# (builder, kernel name, M, N, K, stages): the shapes upstream's matmul.py
# runs, and one stage (the multistage kernel then waits for every group).
KERNELS = [
    ("generate_matmul_multistage", "sm90_matmul_multistage_3", 128, 128, 4096, 3),
    ("generate_matmul_multistage", "sm90_matmul_multistage_1", 128, 128, 1024, 1),
    ("generate_matmul_ws", "sm90_matmul_warp_specialized_3", 256, 1024, 512, 3),
    ("generate_matmul_ws", "sm90_matmul_warp_specialized_7", 128, 128, 1024, 7),
]


def main(llvm: pathlib.Path, out: pathlib.Path) -> None:
    import jaxlib.mlir.dialects.gpu as gpu  # noqa: PLC0415

    launch = gpu.LaunchOp  # the builder uses today's wrapper; NVDSL, the op
    generate.alias_mlir([])
    gpu.LaunchOp = launch
    sys.path.insert(0, str(llvm / "mlir/test/Integration/GPU/CUDA/sm90/python"))
    from mlir import ir  # noqa: PLC0415

    from tools import matmulBuilder  # noqa: PLC0415

    (out / "kernels").mkdir(parents=True, exist_ok=True)
    for builder, name, m, n, k, stages in KERNELS:
        with ir.Context(), ir.Location.unknown():
            module = getattr(matmulBuilder, builder)(
                np.float16, np.float32, m, n, k, 128, 128, 64, stages
            )
            emitted = module.operation.get_asm(enable_debug_info=False)
        header = (f"// upstream MLIR sm90 matmulBuilder.{builder} M={m} N={n} K={k} "
                  f"stages={stages} for sm_90, test/frontends/upstream/generate_sm90.py\n")  # fmt: skip
        for depth, passes in generate.DEPTHS.items():
            data = (header + generate.lower(emitted, passes)).encode()
            path = out / "kernels" / f"{name}{depth}.mlir.gz"
            path.write_bytes(gzip.compress(data, mtime=0))
            print(path.name, len(data))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]))
