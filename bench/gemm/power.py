"""Where a GEMM's time goes under the power cap: for each implementation,
at steady state, the SM clock and board power it runs at (nvidia-smi,
sampled while it runs), its TFLOP/s, TFLOP/s per GHz of SM clock (what
the kernel gets done per cycle) and TFLOP per joule (what it gets done
per unit of the capped budget) -- against torch.matmul, in one process,
rounds interleaved.

    # here (nvwgmma built)
    python bench/gemm/power.py generate .device/power
    # on the GPU (torch; no nvwgmma build)
    python bench/gemm/power.py run .device/power
    # the selector's pick on every bf16 row of shapes.py's table
    python bench/gemm/power.py run .device/power --table --rounds 2

Each configuration is checked against a float64 reference on sampled rows
first (the bound of shapes.py).
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (8192, 28672, 4096)]


def variants():
    """(label, GemmConfig) of every kernel measured."""
    from nvwgmma.kernel.gemm import GemmConfig

    return [
        ("128x256 s3, K forward", GemmConfig(k_order="forward")),
        ("128x256 s3, serpentine K (default)", GemmConfig()),
        ("2x1 cluster, K forward", GemmConfig(cluster_m=2, k_order="forward")),
        ("2x1 cluster, serpentine K", GemmConfig(cluster_m=2)),
        ("128x192 s4", GemmConfig(tile_n=192, stages=4)),
        ("ping-pong 64x256 s4", GemmConfig(schedule="pingpong", stages=4)),
        ("ping-pong 64x256 s4 w1", GemmConfig(schedule="pingpong", stages=4, inflight=1)),
    ]


def generate(out_dir: str, changes=()) -> None:
    """The variants' PTX, and that of the selector's pick for every bf16
    row of shapes.py's table (`run --table`), with, for each of `changes`
    ("field=value,..."), the pick with those fields replaced where that is
    a valid configuration."""
    from nvwgmma.kernel.gemm import select_config
    from nvwgmma.kernel.gemm.config import with_fields
    from nvwgmma.kernel.gemm.launch import kernel_key, write_kernel
    from shapes import table

    plan = {"variants": [], "table": []}
    for label, config in variants():
        write_kernel(os.path.join(out_dir, "ptx"), config)
        plan["variants"].append({"label": label, "key": kernel_key(config)})
    for label, m, n, k in table("bf16"):
        config = select_config(m, n, k, dtype="bf16", out_dtype="bf16")
        write_kernel(os.path.join(out_dir, "ptx"), config)
        kernels = [{"label": "chosen", "key": kernel_key(config)}]
        for change in changes:
            changed = with_fields(config, change)
            try:
                write_kernel(os.path.join(out_dir, "ptx"), changed)
            except ValueError:  # not a configuration on this row's tile
                continue
            kernels.append({"label": f"chosen {change}", "key": kernel_key(changed)})
        plan["table"].append({"label": label, "m": m, "n": n, "k": k, "kernels": kernels})
    with open(os.path.join(out_dir, "plan.json"), "w") as f:
        json.dump(plan, f, indent=1)
    print(len(plan["variants"]), "variants,", len(plan["table"]), "table rows")


# ---------------------------------------------------------------------------- on the GPU
QUERY = "clocks.sm,power.draw.instant,temperature.gpu"


def _query() -> str:
    """QUERY, or with the averaged power.draw where the driver has no
    instant reading."""
    probe = subprocess.run(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv,noheader"],
                           capture_output=True, text=True)  # fmt: skip
    return QUERY if probe.returncode == 0 else QUERY.replace(".instant", "")


SHAPES_HELP = "shapes as MxNxK,... (default: 8192^3, 4096^3, gate/up at M = 8192)"


def _smi(query: str):
    """nvidia-smi printing `query` with a timestamp every 20 ms."""
    return subprocess.Popen(
        ["nvidia-smi", f"--query-gpu=timestamp,{query}", "--format=csv,noheader,nounits",
         "-lms", "20"],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def _in_window(out: str, t0: float, t1: float) -> list:
    """The samples of nvidia-smi output `out` taken between t0 and t1 (epoch s)."""
    samples = []
    for line in out.strip().splitlines():
        stamp, *values = line.split(",")
        try:
            when = datetime.datetime.strptime(stamp.strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()
            values = [float(x) for x in values]
        except ValueError:
            continue
        if t0 <= when <= t1:
            samples.append(values)
    return samples


def _sampled(fn, seconds: float, warm: float, query: str) -> dict:
    """fn() back to back for `warm` s, then for `seconds` s timed with CUDA
    events; nvidia-smi samples clock, power and temperature every 20 ms
    throughout, and the samples inside the timed window count."""
    import torch
    from run import _once

    smi = _smi(query)
    once = _once(fn)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(max(1, int(warm * 1e3 / once))):
        fn()
    n = max(1, int(seconds * 1e3 / once))
    torch.cuda.synchronize()
    t0 = time.time()
    start.record()
    for _ in range(n):
        fn()
    end.record()
    end.synchronize()
    t1 = time.time()
    smi.terminate()
    samples = _in_window(smi.communicate()[0], t0, t1)
    ms = start.elapsed_time(end) / n

    def median(i):
        return statistics.median(s[i] for s in samples) if samples else float("nan")

    return {"ms": ms, "clock_mhz": median(0), "power_w": median(1), "temperature_c": median(2),
            "samples": len(samples)}  # fmt: skip


def _kept(label: str, only) -> bool:
    """Whether `label` contains one of `only`'s comma-separated parts (all
    labels are kept without `only`)."""
    return not only or any(part in label for part in only.split(","))


def _configs(out_dir: str, entries, only=None) -> dict:
    """label -> GemmConfig of the plan entries (label, key) kept by `only`."""
    from nvwgmma.kernel.gemm import GemmConfig

    configs = {}
    for entry in entries:
        if not _kept(entry["label"], only):
            continue
        meta = json.load(open(os.path.join(out_dir, "ptx", entry["key"] + ".json")))
        configs[entry["label"]] = GemmConfig(**{**meta["config"], "fusion": ()})
    return configs


def measure(m, n, k, configs: dict, rounds: int, seconds: float, query: str) -> dict:
    """One shape's row: each configuration checked against float64, then
    timed with torch.matmul in long windows (`_sampled`) and in shapes.py's
    short ones, rounds interleaved."""
    import numpy as np
    import torch
    from run import _interleaved
    from shapes import bound, launched, problem

    a, w, check = problem(m, n, k)
    impls = {"torch.matmul": lambda a=a, w=w: torch.matmul(a, w.T)}
    errors = {}
    for label, config in configs.items():
        impls[label], errors[label], _ = launched(a, w, config, check)
    ok = all(np.isfinite(e) and e <= bound(k, "bf16") for e in errors.values())
    # From a cold or idle GPU, power and temperature take seconds to settle.
    _sampled(impls["torch.matmul"], 3.0, warm=0.0, query=query)
    names = list(impls)
    per = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            per[name].append(_sampled(impls[name], seconds, warm=1.0, query=query))
    # The same implementations timed as shapes.py times them (0.15 s
    # warm-up, 5 batches of 40 ms), for comparison.
    _, short = _interleaved(impls, rounds=rounds)
    flop = 2.0 * m * n * k
    result = {}
    for name, samples in per.items():
        ms = statistics.median(s["ms"] for s in samples)
        clock = statistics.median(s["clock_mhz"] for s in samples)
        power = statistics.median(s["power_w"] for s in samples)
        tflops = flop / (ms * 1e-3) / 1e12
        result[name] = {
            "ms": ms,
            "tflops": tflops,
            "clock_mhz": clock,
            "power_w": power,
            "temperature_c": statistics.median(s["temperature_c"] for s in samples),
            "tflops_per_ghz": tflops / (clock / 1e3),
            "tflop_per_joule": tflops / power,
            "ratio": statistics.median(
                t["ms"] / s["ms"] for s, t in zip(samples, per["torch.matmul"])
            ),
            "rounds": samples,
            "short_window_ratio": statistics.median(
                t / o for o, t in zip(short[name], short["torch.matmul"])
            ),
        }
    print(f"{'ok ' if ok else 'BAD'} {m}x{n}x{k}", flush=True)
    for name, r in result.items():
        print(f"  {name:28s} {r['ratio']:.3f}x (short {r['short_window_ratio']:.3f}x) "
              f"{r['tflops']:6.0f} TFLOP/s  {r['clock_mhz']:5.0f} MHz  {r['power_w']:5.0f} W  "
              f"{r['tflops_per_ghz']:6.1f} TFLOP/s/GHz  {r['tflop_per_joule']:.3f} TFLOP/J",
              flush=True)  # fmt: skip
    return {"m": m, "n": n, "k": k, "correct": ok, "errors_vs_float64": errors,
            "results": result}  # fmt: skip


def run(out_dir: str, rounds: int, seconds: float, shapes=SHAPES, only=None,
        table: bool = False) -> int:  # fmt: skip
    """The variants on `shapes`, or (`table`) the selector's pick on each
    bf16 row of shapes.py's table."""
    import numpy as np
    import torch
    from run import _gpu_info, failures, write_results

    torch.backends.cuda.matmul.allow_tf32 = False
    info = _gpu_info()
    print(info, flush=True)
    plan = json.load(open(os.path.join(out_dir, "plan.json")))
    query = _query()
    rows = []
    if table:
        for entry in plan["table"]:
            if not _kept(entry["label"], only):
                continue
            configs = _configs(out_dir, entry["kernels"])
            print(entry["label"], flush=True)
            row = measure(entry["m"], entry["n"], entry["k"], configs, rounds, seconds, query)
            rows.append({"label": entry["label"], **row})
            write_results(out_dir, "power-results.json", {"info": info, "rows": rows})
        chosen = [r["results"]["chosen"]["ratio"] for r in rows if "M=" in r["label"]
                  and "ragged" not in r["label"]]  # fmt: skip
        if chosen:
            geo = float(np.exp(np.mean(np.log(chosen))))
            print(f"bf16 projections: geometric mean {geo:.3f}, worst {min(chosen):.3f} "
                  f"over {len(chosen)}")  # fmt: skip
    else:
        configs = _configs(out_dir, plan["variants"], only)
        for m, n, k in shapes:
            rows.append(measure(m, n, k, configs, rounds, seconds, query))
            write_results(out_dir, "power-results.json", {"info": info, "rows": rows})
    failed = sum(not r["correct"] for r in rows)
    return failures(failed)


def main(argv=None) -> int:
    from run import mode_parser

    parser = mode_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per round")
    parser.add_argument("--shapes", help=SHAPES_HELP)
    parser.add_argument("--only", help="kernels (rows with --table) whose label contains one "
                        "of these (a,b,...)")  # fmt: skip
    parser.add_argument("--variant", action="append", default=[],
                        help="generate: also the table's picks with these fields (a=1,b=x)")  # fmt: skip
    parser.add_argument("--table", action="store_true",
                        help="the selector's pick on shapes.py's bf16 rows instead")  # fmt: skip
    args = parser.parse_args(argv)
    if args.mode == "generate":
        generate(args.dir, args.variant)
        return 0
    from shapes import use_kernels

    use_kernels(args.dir)
    shapes = SHAPES
    if args.shapes:
        shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
    return run(args.dir, args.rounds, args.seconds, shapes, args.only, args.table)


if __name__ == "__main__":
    sys.exit(main())
