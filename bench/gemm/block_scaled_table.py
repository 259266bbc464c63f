"""The block-scaled grouped kernel with more than 128 experts: five stages
and the group table (block_scaled_config's pick) against six stages
scanning the offsets (what it picked before), paired per round in one
process, outputs compared bit for bit (same tile, same K order).

    # here (nvwgmma built): the PTX of both forms
    python bench/gemm/block_scaled_table.py generate .device/block_table
    # on the GPU (torch, cuda-python; no nvwgmma build)
    python bench/gemm/block_scaled_table.py run .device/block_table [--out DIR]

The rule was set on DeepSeek-V3's two layers (TUNED); Kimi-K2 (384
experts), GLM-4.5 and Qwen3-Coder-480B-A35B (160 each), fp8 checkpoints
with 128 x 128 weight blocks, were held out. T = 4096 tokens, balanced and
skewed routing (bench/gemm/grouped.py's).
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))

# name: (experts, top-k, hidden, expert intermediate size), from each
# model's published config.json
MODELS = {
    "DeepSeek-V3": (256, 8, 7168, 2048),
    "Kimi-K2": (384, 8, 7168, 2048),
    "GLM-4.5": (160, 8, 5120, 1536),
    "Qwen3-Coder-480B-A35B": (160, 8, 6144, 2560),
}
TUNED = ("DeepSeek-V3",)
TOKENS = 4096


def _rows():
    """(model, layer, experts, top-k, N, K, routing) of every row."""
    for model, (e, topk, hidden, inter) in MODELS.items():
        for layer, n, k in (("gate/up", 2 * inter, hidden), ("down", hidden, inter)):
            for routing in ("balanced", "skewed"):
                yield model, layer, e, topk, n, k, routing


def _configs(counts, n, k, e) -> dict:
    """The pick and the form before it: a stage more, no table."""
    from dataclasses import replace

    from nvwgmma.kernel.gemm.grouped import block_scaled_config, grouped_config

    pick = block_scaled_config(grouped_config(sum(counts), n, k, e, counts=counts,
                                              dtype="e4m3", out_dtype="bf16"))  # fmt: skip
    return {"pick": pick, "before": replace(pick, stages=pick.stages + 1, group_table=0)}


def generate(out_dir: str) -> None:
    from grouped import rows_per_group
    from nvwgmma.kernel.gemm.grouped import write_grouped

    for _model, _layer, e, topk, n, k, routing in _rows():
        for config in _configs(rows_per_group(TOKENS, e, topk, routing), n, k, e).values():
            print(write_grouped(out_dir, config))


def run(ptx_dir: str, out_dir: str) -> int:
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    os.environ["NVWGMMA_PTX_DIR"] = ptx_dir
    import torch
    from blockwise import _quantise
    from grouped import _time, rows_per_group
    from nvwgmma.kernel.gemm.grouped import prepare_grouped
    from run import _gpu_info

    rows, failed = [], 0
    for model, layer, e, topk, n, k, routing in _rows():
        g = torch.Generator(device="cuda").manual_seed(e + n)
        w = torch.randn(e, n, k, device="cuda", generator=g) * 0.05
        blocks = [_quantise(w[i], 128, 128) for i in range(e)]
        w8 = torch.stack([q for q, _ in blocks])
        sw = torch.stack([s for _, s in blocks]).contiguous()
        del w, blocks
        counts = rows_per_group(TOKENS, e, topk, routing)
        offs = torch.tensor(counts, device="cuda").cumsum(0).to(torch.int32)
        x = torch.randn(sum(counts), k, device="cuda", generator=g)
        x8, sx = _quantise(x, 1, 128)
        configs = _configs(counts, n, k, e)
        calls, outs = {}, {}
        for name, config in configs.items():
            calls[name], outs[name] = prepare_grouped(x8, w8.transpose(-2, -1), offs=offs,
                                                      scale_a=sx, scale_b=sw, config=config)  # fmt: skip
            calls[name]()
        torch.cuda.synchronize()
        same = torch.equal(outs["pick"], outs["before"])
        failed += not same
        times = _time(calls, rounds=7)
        ms = {name: statistics.median(t) for name, t in times.items()}
        row = dict(model=model, layer=layer, experts=e, n=n, k=k, tokens=TOKENS, routing=routing,
                   half="tuned" if model in TUNED else "held-out", pick=configs["pick"].name,
                   before=configs["before"].name, bit_identical=same, ms=ms,
                   tflops=2 * sum(counts) * n * k / ms["pick"] / 1e9,
                   over_before=statistics.median(
                       b / a for a, b in zip(times["pick"], times["before"])))  # fmt: skip
        rows.append(row)
        print(f"{'ok ' if same else 'BAD'} {model} {layer} {routing}: {row['tflops']:.0f} "
              f"TFLOP/s, {row['over_before']:.3f}x six stages scanning", flush=True)  # fmt: skip
        del w8, sw, x, x8
        torch.cuda.empty_cache()
    info = _gpu_info()
    for half in ("tuned", "held-out"):
        ratios = [r["over_before"] for r in rows if r["half"] == half]
        info[f"{half}_geomean"] = math.exp(sum(map(math.log, ratios)) / len(ratios))
        info[f"{half}_min"] = min(ratios)
        print(f"{half}: geomean {info[f'{half}_geomean']:.3f}, min {info[f'{half}_min']:.3f}")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "block-scaled-table.json"), "w") as f:
        json.dump({"info": info, "rows": rows}, f, indent=1)
    print(f"{len(rows) - failed} bit-identical, {failed} not")
    return 1 if failed else 0


def main(argv=None) -> int:
    from two_step import main as two_step

    return two_step(__doc__, generate, run, argv)


if __name__ == "__main__":
    sys.exit(main())
