"""Where grouping's time goes, by the hardware's counters: DBRX's down
projection (16 experts of 1024 rows, N = 6144, K = 10752) and the same
shape with 8 experts, grouped_mm against the same problem as a batched
matmul (our dense kernel, the same 128 x 256 tile), timed paired and, under
Nsight Compute, counted.

    # here (nvwgmma built): the PTX of the four kernels
    python bench/gemm/grouped_counters.py generate .device/counters
    # on the GPU: paired times (grouped over batched speed)
    python bench/gemm/grouped_counters.py run .device/counters
    # on the GPU: one launch of each kernel counted (after one not counted)
    ncu --clock-control none --set full -k regex:'^gemm$' --launch-skip 4 \\
        --launch-count 4 -o DIR/counters \\
        python bench/gemm/grouped_counters.py run .device/counters --once
    ncu --import DIR/counters.ncu-rep --page raw --csv > DIR/counters.csv
    # anywhere: the counters that tell the four apart, as JSON
    python bench/gemm/grouped_counters.py summarize DIR/counters.csv

It found why 16 experts ran 3-4 % behind the batched kernel where 8 did
not: ptxas had built the consumers' mainloop arithmetic in per-thread
registers (group_table's docstring; docs/performance.md).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
N, K = 6144, 10752  # ROWS rows an expert: grouped_vs_batched's
EXPERTS = (8, 16)
# The kernels in launch order: what the counters' rows are.
KERNELS = [f"{form}{e}" for e in EXPERTS for form in ("grouped", "batched")]
METRICS = {
    "ms": "gpu__time_duration.sum",
    "tensor_active_pct": "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "warp_instructions": "smsp__inst_executed.sum",
    "uniform_pipe_pct": "sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active",
    "fma_pipe_pct": "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "alu_pipe_pct": "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active",
    "sm_clock_ghz": "sm__cycles_elapsed.avg.per_second",
    "dram_read_gb": "dram__bytes_read.sum",
    "l2_hit_pct": "lts__t_sector_hit_rate.pct",
}


def generate(out_dir: str) -> None:
    from grouped_vs_batched import configs
    from nvwgmma.kernel.gemm.grouped import write_grouped
    from nvwgmma.kernel.gemm.launch import write_kernel

    for e in EXPERTS:
        grouped, dense = configs(e, N, K)
        print(write_grouped(out_dir, grouped))
        print(write_kernel(out_dir, dense))


def run(ptx_dir: str, once: bool) -> int:
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    os.environ["NVWGMMA_PTX_DIR"] = ptx_dir
    import torch
    from grouped import _time
    from grouped_vs_batched import ROWS, inputs
    from nvwgmma.kernel.gemm.grouped import prepare_grouped

    calls, failed = {}, 0
    for e in EXPERTS:
        x, w, offs = inputs(e, N, K, seed=e)
        grouped, out_g = prepare_grouped(x, w.transpose(-2, -1), offs=offs)
        batched, out_b = prepare_grouped(x.view(e, ROWS, K), w.transpose(-2, -1))
        calls[f"grouped{e}"], calls[f"batched{e}"] = grouped, batched
        grouped()
        batched()
        torch.cuda.synchronize()
        err = float((out_g.view(e, ROWS, N).float() - out_b.float()).norm() / out_b.float().norm())
        failed += not err < 1e-2
        print(f"{e} experts: grouped against batched rel err {err:.1e}", flush=True)
    if once:  # for ncu: every kernel launched twice, in KERNELS' order
        for _ in range(2):
            for name in KERNELS:
                calls[name]()
        torch.cuda.synchronize()
        return failed
    times = _time(calls, rounds=9)
    for e in EXPERTS:
        grouped, batched = times[f"grouped{e}"], times[f"batched{e}"]
        speed = statistics.median(b / a for a, b in zip(grouped, batched))
        print(f"{e} experts of {ROWS} rows: grouped {statistics.median(grouped):.3f} ms, batched "
              f"{statistics.median(batched):.3f} ms, grouped / batched speed {speed:.4f}")  # fmt: skip
    return failed


def summarize(counters_csv: str) -> dict:
    """{kernel: {metric: value}} from ncu's raw CSV page of the four launches."""
    with open(counters_csv) as f:
        rows = list(csv.reader(f))
    header, data = rows[0], rows[2:]  # row 1 holds the units
    if len(data) != len(KERNELS):
        raise SystemExit(f"expected {len(KERNELS)} counted launches, found {len(data)}")
    summary = {}
    for name, row in zip(KERNELS, data):
        values = {}
        for key, metric in METRICS.items():
            values[key] = float(row[header.index(metric)].replace(",", ""))
        summary[name] = values
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["generate", "run", "summarize"])
    parser.add_argument("path")
    parser.add_argument("--once", action="store_true", help="run: launch each kernel twice")
    args = parser.parse_args(argv)
    if args.mode == "generate":
        generate(args.path)
        return 0
    if args.mode == "run":
        return 1 if run(args.path, args.once) else 0
    print(json.dumps(summarize(args.path), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
