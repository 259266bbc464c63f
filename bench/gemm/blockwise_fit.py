"""The fit behind blockwise_config's tile rates: both of its tiles (128 x
128 and 128 x 192, block-scaled e4m3) timed on Llama-3-8B's and -70B's
projections at M = 256 ... 8192 -- shapes the DeepSeek-V3 table that
bench/gemm/blockwise.py reports on is not among -- and the rate of the
wide tile (relative to 128 x 128, times each tile's wave fill) that picks
closest to the faster tile on every shape. With --small: the same
projections at M = 16 ... 128, where blockwise_split's K split is
checked against the data-parallel tile and against half and twice its
parts.

    python bench/gemm/blockwise_fit.py generate .device/blockwise
    python bench/gemm/blockwise_fit.py run .device/blockwise [--out DIR]
"""

from __future__ import annotations

import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))

# Llama-3-8B (QKV, O, gate/up, down) and Llama-3-70B projections, N x K.
SHAPES = [(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336),
          (10240, 8192), (8192, 8192), (28672, 8192), (8192, 28672)]  # fmt: skip
TOKENS = (256, 1024, 2048, 4096, 8192)
SMALL_TOKENS = (16, 64, 128)


def small_candidates(m: int, n: int, k: int, sms: int = 132) -> dict:
    """{label: config} timed at a few tokens: blockwise_config's pick, the
    data-parallel 128 x 128 tile, and, where the pick splits K, the same
    tile with half and with twice its parts (each part >= 2 K blocks)."""
    from dataclasses import replace

    from nvwgmma.kernel.gemm.blockwise import blockwise_config, blockwise_tiles

    pick = blockwise_config(m, n, k, sms=sms)
    found = {"pick": pick, "data-parallel": blockwise_tiles()[0]}
    if pick.scheduler == "split_k":
        blocks = -(-k // 128)
        for label, splits in (("half the parts", pick.splits // 2), ("twice", 2 * pick.splits)):
            if splits == 1:
                found[label] = replace(pick, scheduler="persistent", splits=1)
            elif 2 <= splits <= blocks // 2:
                found[label] = replace(pick, splits=splits)
    return found


def generate(out_dir: str) -> None:
    from blockwise import generate as kernels
    from nvwgmma.kernel.gemm.launch import write_kernel

    kernels(out_dir)
    for n, k in SHAPES:
        for m in SMALL_TOKENS:
            for config in small_candidates(m, n, k).values():
                write_kernel(out_dir, config)


def fitted_rate(rows, sms: int = 132) -> float:
    """The wide tile's rate (1.00 ... 1.30 in steps of 0.02) whose picks
    come closest to the faster tile of each row (geometric mean), the
    middle of the best ones."""
    from nvwgmma.kernel.gemm.blockwise import blockwise_tiles
    from nvwgmma.kernel.gemm.selector import wave_fill

    base, wide = blockwise_tiles()

    def score(rate):
        logs = []
        for r in rows:
            t = {int(k): v for k, v in r["tflops"].items()}
            m, n = r["m"], r["n"]
            pick = (
                192 if rate * wave_fill(wide, m, n, 1, sms) > wave_fill(base, m, n, 1, sms) else 128
            )
            logs.append(math.log(t[pick] / max(t.values())))
        return sum(logs) / len(logs)

    rates = [1 + i / 50 for i in range(16)]
    scores = [round(score(r), 4) for r in rates]
    best = [r for r, s in zip(rates, scores) if s == max(scores)]
    return best[len(best) // 2]


def run(ptx_dir: str, out_dir: str, small: bool = False) -> int:
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    import torch
    from blockwise import _configs, _quantise
    from grouped import _time
    from run import _gpu_info, write_results

    os.environ["NVWGMMA_PTX_DIR"] = ptx_dir
    from nvwgmma.kernel.gemm.blockwise import prepare_blockwise

    info, rows = _gpu_info(), []
    print(info, flush=True)
    for n, k in SHAPES:
        w8, sw = _quantise(torch.randn(n, k, device="cuda") * 0.05, 128, 128)
        for m in SMALL_TOKENS if small else TOKENS:
            x8, sx = _quantise(torch.randn(m, k, device="cuda"), 1, 128)
            configs = (small_candidates(m, n, k, info.get("sms", 132)) if small else
                       {c.tile_n: c for c in _configs()})  # fmt: skip
            calls = {label: prepare_blockwise(x8, w8.T, sx, sw, config=c)[0]
                     for label, c in configs.items()}  # fmt: skip
            times = _time(calls, inner=10)
            tflops = {t: 2 * m * n * k / statistics.median(v) / 1e9 for t, v in times.items()}
            row = dict(m=m, n=n, k=k, tflops=tflops)
            if small:
                row["configs"] = {label: c.name for label, c in configs.items()}
                row["pick_over_best"] = tflops["pick"] / max(tflops.values())
            rows.append(row)
            print(m, n, k, {t: round(v) for t, v in tflops.items()}, flush=True)
    if small:
        picked = [r["pick_over_best"] for r in rows]
        print(
            f"the pick over the best candidate: geomean "
            f"{math.exp(statistics.mean(map(math.log, picked))):.3f}, worst {min(picked):.3f}"
        )
        write_results(out_dir, "blockwise-split-fit.json", {"info": info, "rows": rows})
        return 0
    rate = fitted_rate(rows, info.get("sms", 132))
    print(f"fitted rate of the 128 x 192 tile: {rate:.2f}")
    write_results(out_dir, "blockwise-fit.json", {"info": info, "rows": rows, "rate": rate})
    return 0


def main(argv=None) -> int:
    from two_step import main as two_step

    return two_step(
        __doc__, generate, run, argv, flags=[("small", "the M = 16 ... 128 rows (run)")]
    )


if __name__ == "__main__":
    sys.exit(main())
