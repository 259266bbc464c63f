"""What fraction of the HBM peak reads reach on this GPU, the yardstick of
the decode path: a plain read (a sum over a bf16 tensor), a copy (read and
write), and decode GEMMs -- `matmul` and `torch.matmul` on one token
against weights of 32 MB to 2 GB, where the weights are nearly all the
bytes and the launch a vanishing share of the time.

    # here (nvwgmma built): the decode kernels' PTX
    python bench/gemm/hbm_ceiling.py generate .device/hbm
    # on the GPU (torch, cuda-python; no nvwgmma build)
    python bench/gemm/hbm_ceiling.py run .device/hbm [--out DIR]
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))

# (N, K) of the weights, bf16: 32 MB to 2 GB.
WEIGHTS = [(4096, 4096), (14336, 4096), (28672, 8192), (65536, 16384)]
TOKENS = (1, 16)


def generate(out_dir: str) -> None:
    from nvwgmma.kernel.gemm import select_config
    from nvwgmma.kernel.gemm.launch import write_kernel

    for m in TOKENS:
        for n, k in WEIGHTS:
            print(write_kernel(out_dir, select_config(m, n, k)))


def run(ptx_dir: str, out_dir: str) -> int:
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    os.environ["NVWGMMA_PTX_DIR"] = ptx_dir
    import torch
    from nvwgmma.kernel.gemm.launch import prepare
    from run import _gpu_info, _time, write_results
    from shapes import PEAK_BANDWIDTH

    info = _gpu_info()
    print(info, flush=True)
    peak = next(v for key, v in PEAK_BANDWIDTH.items() if key in info["gpu"])
    rows = []

    def record(what, nbytes, ms):
        rows.append({"what": what, "bytes": nbytes, "ms": ms,
                     "fraction_of_peak": nbytes / (ms * 1e-3) / peak})  # fmt: skip
        print(f"{what:44s} {nbytes / 1e6:8.0f} MB {rows[-1]['fraction_of_peak']:.3f} of peak",
              flush=True)  # fmt: skip

    source = torch.randn(1 << 30, device="cuda", dtype=torch.bfloat16)  # 2 GB
    target = torch.empty_like(source)
    record("read: sum of a bf16 tensor", source.numel() * 2,
           _time(lambda s=source: s.sum(dtype=torch.float32)))  # fmt: skip
    record("copy: read + write", source.numel() * 4,
           _time(lambda s=source, t=target: t.copy_(s)))  # fmt: skip
    del source, target
    for m in TOKENS:
        for n, k in WEIGHTS:
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
            moved = (n * k + m * k + m * n) * 2
            launch, _ = prepare(x, w.T)
            record(f"matmul M={m} {n} x {k}", moved, _time(launch))
            record(f"torch.matmul M={m} {n} x {k}", moved, _time(lambda x=x, w=w: x @ w.T))
            del x, w
    write_results(out_dir, "hbm-ceiling.json", {"info": info, "peak_bytes_s": peak, "rows": rows})
    return 0


def main(argv=None) -> int:
    from two_step import main as two_step

    return two_step(__doc__, generate, run, argv)


if __name__ == "__main__":
    sys.exit(main())
