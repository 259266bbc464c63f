"""What grouping costs: grouped_mm on balanced large experts (every expert
the same rows) against the same problem as a batched matmul -- the 3-D x
3-D form, the dense kernel, one tile grid per expert -- and against
torch._grouped_mm and torch.bmm, paired per round in one process.

    # here (nvwgmma built): the PTX both forms need
    python bench/gemm/grouped_vs_batched.py generate .device/batched
    # on the GPU (torch, cuda-python; no nvwgmma build)
    python bench/gemm/grouped_vs_batched.py run .device/batched [--out DIR]

The layers are the held-out prefill rows where grouped_mm ran below
torch._grouped_mm (1024 routed rows per expert); both of our forms run the
same 128 x 256 tile, so the difference is the grouped scheduler's: with
its group table (what grouped_mm picks) and scanning the offsets.
"""

from __future__ import annotations

import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))

ROWS = 1024  # per expert
# name: (experts, N, K)
LAYERS = {
    "Mixtral-8x7B gate/up": (8, 28672, 4096),
    "Mixtral-8x7B down": (8, 4096, 14336),
    "DBRX down": (16, 6144, 10752),
    "Mixtral-8x22B gate/up": (8, 32768, 6144),
}


def configs(e: int, n: int, k: int) -> tuple:
    """(grouped_mm's pick, the batched matmul's) for `e` experts of ROWS
    rows each, N x K weights."""
    from nvwgmma.kernel.gemm.grouped import grouped_config
    from nvwgmma.kernel.gemm.launch import Problem, problem_config

    return (grouped_config(e * ROWS, n, k, e, counts=[ROWS] * e),
            problem_config(Problem.of(ROWS, n, k, e, "bf16", "bf16", "K", "K")))  # fmt: skip


def inputs(e: int, n: int, k: int, seed: int) -> tuple:
    """(x: e x ROWS rows of K, w: (e, N, K), offs) of that problem, bf16
    on the GPU."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    w = torch.randn(e, n, k, device="cuda", generator=g, dtype=torch.bfloat16) * 0.05
    x = torch.randn(e * ROWS, k, device="cuda", generator=g, dtype=torch.bfloat16)
    offs = torch.tensor([ROWS] * e, device="cuda").cumsum(0).to(torch.int32)
    return x, w, offs


def generate(out_dir: str) -> None:
    from dataclasses import replace

    from nvwgmma.kernel.gemm.grouped import write_grouped
    from nvwgmma.kernel.gemm.launch import write_kernel

    for e, n, k in LAYERS.values():
        picked, dense = configs(e, n, k)
        print(write_grouped(out_dir, picked))
        print(write_grouped(out_dir, replace(picked, group_table=0)))
        print(write_kernel(out_dir, dense))


def run(ptx_dir: str, out_dir: str) -> int:
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    os.environ["NVWGMMA_PTX_DIR"] = ptx_dir
    from dataclasses import replace

    import torch
    from grouped import _time
    from nvwgmma.kernel.gemm.grouped import prepare_grouped
    from run import _gpu_info

    rows, failed = [], 0
    for name, (e, n, k) in LAYERS.items():
        x, w, offs = inputs(e, n, k, seed=e + n + k)
        x3, w_kn = x.view(e, ROWS, k), w.transpose(-2, -1)
        grouped, out_g = prepare_grouped(x, w_kn, offs=offs)
        # The same pick scanning the offsets for each unit (no group table).
        scan = replace(configs(e, n, k)[0], group_table=0)
        scanning, out_s = prepare_grouped(x, w_kn, offs=offs, config=scan)
        batched, out_b = prepare_grouped(x3, w_kn)
        for launch in (grouped, scanning, batched):
            launch()
        ref = torch.bmm(x3, w_kn)
        torch.cuda.synchronize()
        errors = [float((o.view(e, ROWS, n).float() - ref.float()).norm() / ref.float().norm())
                  for o in (out_g, out_s, out_b)]  # fmt: skip
        ok = max(errors) < 1e-2
        failed += not ok
        calls = {"torch_grouped": lambda x=x, w_kn=w_kn, offs=offs: torch._grouped_mm(
                     x, w_kn, offs=offs),
                 "torch_bmm": lambda x3=x3, w_kn=w_kn: torch.bmm(x3, w_kn), "grouped": grouped,
                 "grouped_scan": scanning, "batched": batched}  # fmt: skip
        times = _time(calls, rounds=7)
        flops = 2 * e * ROWS * n * k
        tflops = {c: flops / statistics.median(t) / 1e9 for c, t in times.items()}

        def speed(ours, other, times=times):  # paired per round: other's time over ours
            return statistics.median(b / a for a, b in zip(times[ours], times[other]))

        ratio = speed("grouped", "batched")
        row = dict(layer=name, experts=e, rows=ROWS, n=n, k=k, ok=ok, rel_err=max(errors),
                   tflops=tflops, grouped_over_batched=ratio,
                   grouped_over_torch=speed("grouped", "torch_grouped"),
                   scan_over_batched=speed("grouped_scan", "batched"))  # fmt: skip
        rows.append(row)
        print(f"{'ok ' if ok else 'BAD'} {name}: grouped {tflops['grouped']:.0f} (scanning "
              f"{tflops['grouped_scan']:.0f}), batched "
              f"{tflops['batched']:.0f}, torch._grouped_mm {tflops['torch_grouped']:.0f}, "
              f"torch.bmm {tflops['torch_bmm']:.0f} TFLOP/s; grouped / batched speed "
              f"{ratio:.3f} (scanning {row['scan_over_batched']:.3f}), over torch._grouped_mm "
              f"{row['grouped_over_torch']:.3f}", flush=True)  # fmt: skip
        del w, x
        torch.cuda.empty_cache()
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "grouped-vs-batched.json"), "w") as f:
        json.dump({"info": _gpu_info(), "rows": rows}, f, indent=1)
    print(f"{len(rows) - failed} correct, {failed} wrong")
    return 1 if failed else 0


def main(argv=None) -> int:
    from two_step import main as two_step

    return two_step(__doc__, generate, run, argv)


if __name__ == "__main__":
    sys.exit(main())
