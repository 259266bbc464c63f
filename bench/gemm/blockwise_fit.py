"""The fit behind blockwise_config's tile rates: its candidates
(blockwise_tiles: 128 x 128, 128 x 192, 192 x 128 of three consumers,
128 x 128 promoting beside the next K tile's wgmmas; block-scaled e4m3) timed on Llama-3-8B's and -70B's projections at
M = 256 ... 8192 -- shapes the DeepSeek-V3 table and the held-out models
that bench/gemm/blockwise.py reports on are not among -- and the rates
(relative to 128 x 128, times each tile's wave fill) that pick closest to
the fastest candidate on every shape. (The H200 results file also holds
128 x 192 on a 2 x 1 cluster, a candidate when it ran: fitted 1.04, never
above 128 x 192 alone, and dropped.) With --small: the same projections
at M = 16 ... 128, where blockwise_split's K split is checked against the
data-parallel tile and against half and twice its parts.

    python bench/gemm/blockwise_fit.py generate .device/blockwise
    python bench/gemm/blockwise_fit.py run .device/blockwise [--out DIR] [--small | --more]
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
    tile with half and with twice its parts (each part >= 2 K blocks) and
    with each K tile promoted before the next is issued (inflight 0)."""
    from dataclasses import replace

    from nvwgmma.kernel.gemm.blockwise import blockwise_config, blockwise_tiles

    pick = blockwise_config(m, n, k, sms=sms)
    found = {"pick": pick, "data-parallel": blockwise_tiles()[0]}
    if pick.inflight:
        found["serial promotion"] = replace(pick, inflight=0)
    if pick.scheduler == "split_k":
        blocks = -(-k // 128)
        for label, splits in (("half the parts", pick.splits // 2), ("twice", 2 * pick.splits)):
            if splits == 1:
                found[label] = replace(pick, scheduler="persistent", splits=1)
            elif 2 <= splits <= blocks // 2:
                found[label] = replace(pick, splits=splits)
    return found


def more_variants() -> dict:
    """{label: config} timed beside the candidates with --more, not fitted:
    the overlapped 128 x 128 tile with a sixth stage, on a 2 x 1 cluster
    (B multicast), and both."""
    from dataclasses import replace

    from nvwgmma.kernel.gemm.blockwise import blockwise_tiles
    from nvwgmma.kernel.gemm.selector import with_tile

    overlapped = blockwise_tiles()[3]
    deeper = with_tile(overlapped, overlapped.tile_n)
    return {"overlapped, 6 stages": deeper,
            "overlapped, 2 x 1 cluster": replace(overlapped, cluster_m=2),
            "overlapped, 6 stages, 2 x 1 cluster": replace(deeper, cluster_m=2)}  # fmt: skip


def generate(out_dir: str) -> None:
    from blockwise import generate as kernels
    from nvwgmma.kernel.gemm.launch import write_kernel

    kernels(out_dir)
    for n, k in SHAPES:
        for m in SMALL_TOKENS:
            for config in small_candidates(m, n, k).values():
                write_kernel(out_dir, config)
    for config in more_variants().values():
        write_kernel(out_dir, config)


def key_text(key) -> str:
    """A rate_key as the results file writes it: tile_m x tile_n x
    cluster_m x inflight."""
    return "x".join(map(str, key))


def candidate_label(config) -> str:
    """A candidate's key in the results' `tflops`."""
    from nvwgmma.kernel.gemm.blockwise import rate_key

    return key_text(rate_key(config))


def fitted_rates(rows, sms: int = 132) -> dict:
    """{rate_key: rate} of blockwise_tiles' candidates after the first
    (1.0), each 1.00 ... 1.30 in steps of 0.02, whose picks come closest to
    the fastest candidate of each row (geometric mean); of equally close
    ones, each rate the middle of its values among them where that
    combination is one of them, else the nearest that is."""
    import itertools

    from nvwgmma.kernel.gemm.blockwise import blockwise_tiles, rate_key
    from nvwgmma.kernel.gemm.selector import wave_fill

    base, *others = blockwise_tiles()
    fills = [{candidate_label(c): wave_fill(c, r["m"], r["n"], 1, sms) for c in (base, *others)}
             for r in rows]  # fmt: skip

    def score(combo):
        rates = {
            candidate_label(base): 1.0,
            **{candidate_label(c): x for c, x in zip(others, combo)},
        }
        logs = []
        for r, fill in zip(rows, fills):
            t = {key: r["tflops"][key] for key in fill}  # the candidates (not --more's)
            pick = max(rates, key=lambda key: fill[key] * rates[key])  # first of equals
            logs.append(math.log(t[pick] / max(t.values())))
        return round(sum(logs) / len(logs), 4)

    grid = [1 + i / 50 for i in range(16)]
    combos = list(itertools.product(grid, repeat=len(others)))
    scores = [score(c) for c in combos]
    best = [c for c, s in zip(combos, scores) if s == max(scores)]
    middle = tuple(sorted(c[i] for c in best)[len(best) // 2] for i in range(len(others)))
    chosen = min(best, key=lambda c: sum(abs(a - b) for a, b in zip(c, middle)))
    return {rate_key(base): 1.0, **{rate_key(c): x for c, x in zip(others, chosen)}}


def run(ptx_dir: str, out_dir: str, small: bool = False, more: bool = False) -> int:
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    import torch
    from blockwise import _quantise
    from grouped import _time
    from run import _gpu_info, write_results

    os.environ["NVWGMMA_PTX_DIR"] = ptx_dir
    from nvwgmma.kernel.gemm.blockwise import blockwise_tiles, prepare_blockwise

    info, rows = _gpu_info(), []
    print(info, flush=True)
    for n, k in SHAPES:
        w8, sw = _quantise(torch.randn(n, k, device="cuda") * 0.05, 128, 128)
        for m in SMALL_TOKENS if small else TOKENS:
            x8, sx = _quantise(torch.randn(m, k, device="cuda"), 1, 128)
            configs = (small_candidates(m, n, k, info.get("sms", 132)) if small else
                       {candidate_label(c): c for c in blockwise_tiles()})  # fmt: skip
            if more and not small:
                configs.update(more_variants())
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
    rates = fitted_rates(rows, info.get("sms", 132))
    print(f"fitted rates (tile_m, tile_n, cluster_m, inflight): {rates}")
    write_results(out_dir, "blockwise-fit.json",
                  {"info": info, "rows": rows,
                   "rates": {key_text(key): rate for key, rate in rates.items()}})  # fmt: skip
    return 0


def main(argv=None) -> int:
    from two_step import main as two_step

    return two_step(
        __doc__, generate, run, argv,
        flags=[("small", "the M = 16 ... 128 rows (run)"),
               ("more", "also time more_variants, not fitted (run)")],
    )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
