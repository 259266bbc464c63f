"""Tensor maps by value (kernel parameters) against by pointer (device
memory): the same GEMM kernel body built both ways, paired on the GPU.

    python bench/gemm/maps_ab.py generate .device/ab     # here: both PTX variants
    python bench/gemm/maps_ab.py run .device/ab          # on the GPU; writes ab-maps.json to $OUT

Prints, per shape, each variant's relative error against float32 and the
median over 9 interleaved rounds of ms per call (and torch.matmul's).
"""

from __future__ import annotations

import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (16, 8192, 8192), (128, 4096, 14336),
          (2048, 3072, 4096)]  # fmt: skip
VARIANTS = ("value", "pointer")


def _problem(m, n, k):
    from nvwgmma.kernel.gemm.launch import Problem

    return Problem.of(m, n, k, 1, "bf16", "bf16", "K", "K")


def generate(out_dir: str) -> None:
    from nvwgmma.kernel import cache
    from nvwgmma.kernel.gemm import kernel
    from nvwgmma.kernel.gemm.launch import problem_config, write_kernel

    by_value = kernel.KERNEL_SIGNATURE
    by_pointer = tuple((n, "!llvm.ptr" if n.startswith("tm") else t) for n, t in by_value)
    for m, n, k in SHAPES:
        config = problem_config(_problem(m, n, k))
        write_kernel(out_dir, config)  # what matmul's own launch loads
        for variant, signature in zip(VARIANTS, (by_value, by_pointer)):
            kernel.KERNEL_SIGNATURE = signature
            try:
                cache.write(
                    out_dir, f"{variant}-{m}-{n}-{k}", lambda c=config: kernel.build_gemm(c)
                )
            finally:
                kernel.KERNEL_SIGNATURE = by_value


def _variant(directory, stem, prepared, variant):
    """`prepared`'s launch with the kernel of `stem`, maps passed as values
    or as device pointers."""
    import torch
    from nvwgmma.kernel import runtime

    with open(os.path.join(directory, stem + ".json")) as f:
        meta = json.load(f)
    with open(os.path.join(directory, stem + ".ptx")) as f:
        kernel = runtime.Kernel(f.read(), meta["kernel"], dynamic_smem=meta["dynamic_smem"])
    args = []
    for (name, kind), value in zip(meta["signature"], prepared.values):
        if name.startswith("tm"):
            blob = value.value
            args.append(("map", blob) if variant == "value" else
                        ("u64", runtime._MapPool().address(blob)))  # fmt: skip
        else:
            args.append((kind if kind in ("i32", "i64", "f32") else "u64", value.value))
    grid, block = prepared._args[1:4], prepared._args[4:7]
    return kernel.launcher(grid=grid, block=block, args=args,
                           stream=torch.cuda.current_stream().cuda_stream)  # fmt: skip


def run(directory: str) -> None:
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    os.environ["NVWGMMA_PTX_DIR"] = directory
    import torch
    from nvwgmma.kernel.gemm import launch
    from run import timed

    rows = []
    for m, n, k in SHAPES:
        x = torch.randn(m, k, device="cuda").to(torch.bfloat16)
        w = torch.randn(n, k, device="cuda").to(torch.bfloat16)
        prepared, out = launch.prepare(x, w.T)
        calls = {v: _variant(directory, f"{v}-{m}-{n}-{k}", prepared, v) for v in VARIANTS}
        calls["torch"] = lambda x=x, w=w: x @ w.T
        ref = x.float() @ w.float().T
        errors = {}
        for variant in VARIANTS:
            out.zero_()
            calls[variant]()
            torch.cuda.synchronize()
            errors[variant] = float((out.float() - ref).norm() / ref.norm())
        reps = 200 if m <= 128 else max(5, int(2e-3 / (2 * m * n * k / 7e14)))
        for f in calls.values():
            timed(f, reps)
        times = {name: [] for name in calls}
        for _ in range(9):
            for name, f in calls.items():
                times[name].append(timed(f, reps))
        row = {"shape": (m, n, k), "err": errors,
               "ms": {name: statistics.median(t) for name, t in times.items()},
               "pointer_over_value": statistics.median(
                   p / v for p, v in zip(times["pointer"], times["value"]))}  # fmt: skip
        print(row, flush=True)
        rows.append(row)
    from run import _gpu_info

    with open(os.path.join(os.environ.get("OUT", "."), "ab-maps.json"), "w") as f:
        json.dump({"info": _gpu_info(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    mode, directory = sys.argv[1:3]
    generate(directory) if mode == "generate" else run(directory)
