"""The cost model's tile rates (selector.TILE_RATES, PINGPONG_RATE), refitted
from a run timing every candidate on the tuned half of the public shape
corpus: per data-parallel kernel, the median over the rows it was timed on
of its achieved TFLOP/s over its wave fill (selector.wave_fill).

    python bench/gemm/shapes.py generate DIR --set corpus-candidates   # nvwgmma built
    python bench/gemm/shapes.py run DIR --rounds 2                     # on the GPU
    python bench/gemm/tile_rates.py [RESULTS.json]                     # anywhere

Without an argument it refits the runs the rates in use came from (16-bit
and fp8; `--set corpus-candidates` generates both, `run --dtype` picks one).
"""

from __future__ import annotations

import ast
import json
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
RUN = os.path.join(ROOT, "bench/results/archive/h100/2026-11-27-0650-gemm-corpus-candidates.json")
FP8_RUN = "bench/results/h100/2026-11-28-0030-gemm-corpus-candidates-fp8.json"
# The kernels the model weighs, by name (their tile and schedule in it).
KERNEL = re.compile(r"_(\d+)x(\d+)x(?:64|128)_s\d+_tma(_wg128_w1_split_wait|_pingpong)?$")


def fitted_rates(data: dict, sms: int = 132) -> dict[str, float]:
    """{kernel name: median TFLOP/s over wave fill} of the data-parallel
    kernels in a shapes.py results file (`names`, `rows`)."""
    from nvwgmma.kernel.gemm import GemmConfig
    from nvwgmma.kernel.gemm.selector import wave_fill

    per_kernel: dict[str, list[float]] = {}
    for row in data["rows"]:
        measured = row["tflops"]
        if isinstance(measured, str):  # the archived run wrote its dicts as text
            measured = ast.literal_eval(measured)
        for key, tflops in measured.items():
            name = data["names"].get(row["chosen"] if key == "chosen" else key)
            match = name and KERNEL.search(name)
            if not match:
                continue
            tile_m, tile_n, kind = int(match[1]), int(match[2]), match[3]
            config = GemmConfig(tile_n=tile_n, consumers=tile_m // 64,
                                schedule="pingpong" if kind == "_pingpong" else "cooperative")  # fmt: skip
            if kind == "_wg128_w1_split_wait":
                config = GemmConfig(tile_n=tile_n, consumers=1, consumer_rows=128)
            fill = wave_fill(config, row["m"], row["n"], 1, sms)
            per_kernel.setdefault(name, []).append(tflops / fill)
    return {name: statistics.median(v) for name, v in per_kernel.items()}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    sys.path.insert(0, os.path.join(ROOT, "python"))
    for path in argv or [RUN, os.path.join(ROOT, FP8_RUN)]:
        with open(path) as f:
            data = json.load(f)
        for name, rate in sorted(fitted_rates(data).items(), key=lambda x: -x[1]):
            print(f"{name:56s} {rate:6.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
