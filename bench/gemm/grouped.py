"""grouped_mm on the mixture-of-experts layers of public models, against
torch._grouped_mm, paired per round in one process: every configuration
grouped_config chooses among (and the one it picks), each checked first
against torch's result.

    # here (nvwgmma built): the PTX of every candidate
    python bench/gemm/grouped.py generate .device/grouped
    # on the GPU (torch, cuda-python; no nvwgmma build)
    python bench/gemm/grouped.py run .device/grouped [--out DIR] [--rule-only]

Each row also gives the roofline's ratio: torch's time over the least the
layer can take (its flops at the tensor cores' peak or its bytes at HBM's),
the most any kernel could reach against torch there.

Layers (MODELS, from each model's published config.json): the experts'
fused gate/up projection (N = 2 x intermediate, K = hidden) and the down
projection (N = hidden, K = intermediate), weights stored (E, N, K) like
torch.nn.Linear's and passed as their (E, K, N) transpose. Tokens T in
{64, 512, 4096}, each routed to top-k experts: balanced (T x k / E rows
each) or skewed (a Zipf(1) share per expert, so many experts get few or no
rows at small T). The rule was set on the TUNED models; the others are
reported as measured. Then checks(): README's example, (E, K, N) weights,
and a captured CUDA graph replayed after the routing changed.
"""

from __future__ import annotations

import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))

# name: (experts, top-k, hidden, expert intermediate size)
MODELS = {
    "Mixtral-8x7B": (8, 2, 4096, 14336),
    "DeepSeek-V3": (256, 8, 7168, 2048),
    "OLMoE-1B-7B": (64, 8, 2048, 1024),
    "DeepSeek-V2-Lite": (64, 6, 2048, 1408),
    "Mixtral-8x22B": (8, 2, 6144, 16384),
    "Qwen3-30B-A3B": (128, 8, 2048, 768),
    "Qwen3-235B-A22B": (128, 8, 4096, 1536),
    "Qwen2-57B-A14B": (64, 8, 3584, 2560),
    "DBRX": (16, 4, 6144, 10752),
    "gpt-oss-120b": (128, 4, 2880, 2880),
}
# The rule is set on these; the rest are held out. OLMoE and
# DeepSeek-V2-Lite joined the tuned half (with Qwen2-57B, DBRX and
# gpt-oss-120b held out) once the first held-out run showed experts
# narrower than the tuned half's 4096 columns.
TUNED = ("Mixtral-8x7B", "DeepSeek-V3", "OLMoE-1B-7B", "DeepSeek-V2-Lite")
TOKENS = (64, 512, 4096)
ROUTINGS = ("balanced", "skewed")
# The candidates (GemmConfig fields over grouped_config's): the rule's
# three picks first, then the others measured.
CANDIDATES = [
    dict(consumers=1, tile_n=128, stages=6),
    dict(consumers=2, tile_n=128, stages=3),
    dict(consumers=2, tile_n=256, stages=3),
    dict(consumers=2, tile_n=128, stages=4),
    dict(consumers=1, tile_n=256, stages=4),
    dict(consumers=2, tile_n=192, stages=4),
    dict(consumers=2, tile_n=256, stages=4, epilogue_chunks=2),
    dict(consumers=2, consumer_rows=128, tile_n=128, stages=5, schedule="pingpong"),
]


def layers(half=None):
    """(model, layer, experts, top-k, N, K) of every measured GEMM (of the
    "tuned" or "held-out" half alone, where given)."""
    for model, (e, topk, hidden, inter) in MODELS.items():
        if half is not None and (model in TUNED) != (half == "tuned"):
            continue
        yield model, "gate/up", e, topk, 2 * inter, hidden
        yield model, "down", e, topk, hidden, inter


def seeded_layers(half=None):
    """(model, layer, experts, top-k, N, K, generator, weights) of every
    measured GEMM, the weights (E, N, K) bf16 drawn from a generator seeded
    by the layer (on the GPU)."""
    import torch

    for model, layer, e, topk, n, k in layers(half):
        g = torch.Generator(device="cuda").manual_seed(e + n + k)
        w = torch.randn(e, n, k, device="cuda", generator=g, dtype=torch.bfloat16) * 0.05
        yield model, layer, e, topk, n, k, g, w


def rows_per_group(tokens: int, experts: int, topk: int, routing: str) -> list[int]:
    total = tokens * topk
    if routing == "balanced":
        share = [1.0] * experts
    else:  # Zipf(1) over a fixed permutation of the experts
        order = sorted(range(experts), key=lambda e: (e * 7919) % experts)
        share = [0.0] * experts
        for rank, e in enumerate(order):
            share[e] = 1.0 / (rank + 1)
    scale = total / sum(share)
    rows = [int(s * scale) for s in share]
    for e in sorted(range(experts), key=lambda e: -share[e])[: total - sum(rows)]:
        rows[e] += 1
    return rows


def _config(fields):
    from dataclasses import replace

    from nvwgmma.kernel.gemm.grouped import grouped_config

    return replace(grouped_config(1, 1, 1, 1), group_table=0, **fields)


def _picks():
    """grouped_config's pick for every measured row, as grouped_mm makes it
    (it reads the offsets; 132 SMs: H100, H200)."""
    from nvwgmma.kernel.gemm.grouped import grouped_config

    for _model, _layer, e, topk, n, k in layers():
        for tokens in TOKENS:
            for routing in ROUTINGS:
                counts = rows_per_group(tokens, e, topk, routing)
                yield grouped_config(sum(counts), n, k, e, counts=counts)


def generate(out_dir: str) -> None:
    from dataclasses import replace

    from nvwgmma.kernel.gemm.grouped import PREFILL_TILES, with_group_table, write_grouped

    written = set()

    def write(config, masked=False):
        if (config, masked) not in written:
            written.add((config, masked))
            print(write_grouped(out_dir, config, masked=masked))

    for candidate in CANDIDATES:
        write(_config(candidate))
    for picked in _picks():
        write(picked)
        write(replace(picked, group_table=0))  # the table's ablation: each unit scans
    # Every tile grouped_config returns, for checks() (8 experts): weights
    # stored (E, K, N), row-major per expert; the masked layout.
    rule = [{}] + [  # the decode tile (_config's base), then the prefill tiles
        dict(consumers=2, tile_n=width, stages=stages)
        for width, (stages, _) in PREFILL_TILES.items()
    ]
    for tile in rule:
        config = with_group_table(_config(tile), 8)
        write(replace(config, b_major="N"))
        write(config, masked=True)


def _reference(x, w, counts):
    """Per expert, in float64: x's rows of the expert @ w[e] (w: (E, K, N))."""
    import torch

    out, start = [], 0
    for e, c in enumerate(counts):
        out.append(x[start : start + c].double() @ w[e].double())
        start += c
    return torch.cat(out)


def checks() -> list[dict]:
    """README's example; weights stored (E, K, N); and a CUDA graph replayed
    after the routing changed in place (the offsets are read on the device)."""
    import re

    import torch
    from nvwgmma.kernel.gemm import grouped_mm

    rows = []

    def record(what, got, ref):
        err = float((got.double() - ref).norm() / ref.norm())
        rows.append({"check": what, "rel_err": err, "ok": err < 1e-2})
        print(f"{'ok ' if err < 1e-2 else 'BAD'} {what}: rel err {err:.2e}", flush=True)

    text = open(os.path.join(HERE, "..", "..", "README.md")).read()
    (code,) = [
        b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "grouped_mm(" in b
    ]
    ns = {}
    exec(compile("import torch\n" + code, "README.md", "exec"), ns)
    counts = ns["counts"].tolist()
    record(
        "README example",
        ns["y"],
        _reference(ns["x_sorted"], ns["experts"].transpose(-2, -1), counts),
    )
    g = torch.Generator(device="cuda").manual_seed(7)
    counts = [300, 0, 17, 700, 64, 1, 0, 918]
    x = torch.randn(sum(counts), 2048, device="cuda", generator=g, dtype=torch.bfloat16)
    w_kn = torch.randn(8, 2048, 4096, device="cuda", generator=g, dtype=torch.bfloat16)
    offs = torch.tensor(counts, device="cuda").cumsum(0).to(torch.int32)
    record("weights (E, K, N) row-major", grouped_mm(x, w_kn, offs=offs),
           _reference(x, w_kn, counts))  # fmt: skip
    out = torch.empty(sum(counts), 4096, device="cuda", dtype=torch.bfloat16)
    grouped_mm(x, w_kn, offs=offs, out=out)  # loaded before the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        grouped_mm(x, w_kn, offs=offs, out=out)
    rerouted = [1000, 0, 0, 0, 500, 500, 0, 0]
    offs.copy_(torch.tensor(rerouted, device="cuda").cumsum(0).to(torch.int32))
    graph.replay()
    torch.cuda.synchronize()
    record("CUDA graph replayed after the routing changed", out, _reference(x, w_kn, rerouted))
    # The masked layout: up to R rows per expert, the counts on the device
    # (one past R, one negative: clamped), rows past them left as they were.
    r = 64
    w_nk = torch.randn(8, 4096, 2048, device="cuda", generator=g, dtype=torch.bfloat16)
    xm = torch.randn(8, r, 2048, device="cuda", generator=g, dtype=torch.bfloat16)
    for label, counts in (("masked layout", [0, 5, 64, 70, 33, -1, 64, 1]),
                          ("masked layout, graph replayed with new counts", [64] * 4 + [0] * 4)):  # fmt: skip
        live = torch.tensor(counts, device="cuda", dtype=torch.int32)
        om = torch.full((8, r, 4096), float("nan"), device="cuda", dtype=torch.bfloat16)
        if "graph" in label:
            grouped_mm(xm, w_nk.transpose(-2, -1), counts=live, out=om)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                grouped_mm(xm, w_nk.transpose(-2, -1), counts=live, out=om)
            live.copy_(torch.tensor([1, 2, 3, 4, 60, 0, 64, 9], device="cuda", dtype=torch.int32))
            om.fill_(float("nan"))
            graph.replay()
            counts = live.tolist()
        else:
            grouped_mm(xm, w_nk.transpose(-2, -1), counts=live, out=om)
        torch.cuda.synchronize()
        kept = [min(max(c, 0), r) for c in counts]
        got = torch.cat([om[e, :c] for e, c in enumerate(kept)])
        ref = torch.cat([xm[e, :c].double() @ w_nk[e].double().T for e, c in enumerate(kept)])
        record(label, got, ref)
        untouched = all(bool(torch.isnan(om[e, c:]).all()) for e, c in enumerate(kept))
        rows[-1]["rows_past_counts_untouched"] = untouched
        rows[-1]["ok"] = rows[-1]["ok"] and untouched
    return rows


def _time(calls: dict, rounds: int = 5, inner: int = 10) -> dict:
    """Per implementation, `rounds` times the ms per call of `inner` calls
    (after one), the implementations in turn each round, each round
    starting one further along: the first of a fixed order ran up to 5 %
    slower than the same kernel later in the round (blockwise.py, H200)."""
    from run import timed

    names = list(calls)
    times = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            calls[name]()
            times[name].append(timed(calls[name], inner))
    return times


# Dense bf16 tensor-core peak (FLOP/s) by GPU name: the H100 SXM's and the
# H200's (the same SMs; HBM peaks: shapes.PEAK_BANDWIDTH).
PEAK_FLOPS = {"H100": 989e12, "H200": 989e12}


def roofline_ms(gpu: str, counts: list[int], n: int, k: int) -> float | None:
    """The least time the layer can take on `gpu`: its flops at the tensor
    cores' peak or its bytes (the weights of every expert that has rows,
    the activations and the output, bf16) at HBM's, whichever is longer."""
    from shapes import PEAK_BANDWIDTH

    peak = next((key for key in PEAK_FLOPS if key in gpu), None)
    if peak is None:
        return None
    rows, used = sum(counts), sum(1 for c in counts if c)
    moved = 2 * (used * n * k + rows * k + rows * n)
    return max(2 * rows * n * k / PEAK_FLOPS[peak], moved / PEAK_BANDWIDTH[peak]) * 1e3


def run(ptx_dir: str, out_dir: str, rule_only: bool = False, tuned: bool = False,
        held_out: bool = False) -> int:  # fmt: skip
    """Time every candidate (or, `rule_only`, grouped_config's pick alone)
    against torch on every layer row (or one half's), then the checks."""
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    from dataclasses import replace

    import torch

    os.environ["NVWGMMA_PTX_DIR"] = ptx_dir
    from nvwgmma.kernel.gemm.grouped import grouped_config, prepare_grouped

    rows, failed = [], 0
    half = "tuned" if tuned else "held-out" if held_out else None
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for model, layer, e, topk, n, k, g, w in seeded_layers(half):
        for tokens in TOKENS:
            for routing in ROUTINGS:
                counts = rows_per_group(tokens, e, topk, routing)
                t = sum(counts)
                x = torch.randn(t, k, device="cuda", generator=g, dtype=torch.bfloat16)
                offs = torch.tensor(counts, device="cuda").cumsum(0).to(torch.int32)
                ref = torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)
                # What grouped_mm picks: it reads the offsets to check them.
                picked = grouped_config(t, n, k, e, counts=counts, sms=sms)
                calls, errors = {"torch": lambda x=x, w=w, offs=offs: torch._grouped_mm(
                    x, w.transpose(-2, -1), offs=offs)}, {}  # fmt: skip
                # With the rule's pick, its group table's ablation: each unit scans.
                configs = [picked, replace(picked, group_table=0)] if rule_only else \
                    list(map(_config, CANDIDATES))  # fmt: skip
                for config in dict.fromkeys(configs):
                    launch, out = prepare_grouped(x, w.transpose(-2, -1), offs=offs,
                                                  config=config)  # fmt: skip
                    launch()
                    torch.cuda.synchronize()
                    err = float((out.float() - ref.float()).norm() / ref.float().norm())
                    errors[config.name] = err
                    calls[config.name] = launch
                ok = max(errors.values()) < 1e-2
                failed += not ok
                times = _time(calls)
                ms = {name: statistics.median(v) for name, v in times.items()}
                ratio = {name: statistics.median(tt / o for tt, o in zip(times["torch"], v))
                         for name, v in times.items() if name != "torch"}  # fmt: skip
                rule = picked.name
                best = max(ratio, key=ratio.get)
                row = dict(model=model, layer=layer, experts=e, topk=topk, n=n, k=k,
                           tokens=tokens, routing=routing, rows=t, empty=counts.count(0),
                           half="tuned" if model in TUNED else "held-out", ok=ok,
                           max_rel_err=max(errors.values()), ms=ms, torch_over=ratio,
                           rule=rule, rule_ratio=ratio.get(rule), best=best,
                           scan_ratio=ratio.get(replace(picked, group_table=0).name),
                           roofline_ratio=(ms["torch"] / bound if (bound := roofline_ms(
                               torch.cuda.get_device_name(0), counts, n, k)) else None),
                           tflops=2 * t * n * k / ms[rule] / 1e9 if rule in ms else None)  # fmt: skip
                rows.append(row)
                print(f"{'ok ' if ok else 'BAD'} {model} {layer} T={tokens} {routing}: rule "
                      f"{rule} {ratio.get(rule, 0):.2f}x, best {best} {ratio[best]:.2f}x",
                      flush=True)  # fmt: skip
        del w
        torch.cuda.empty_cache()
    from run import _gpu_info

    info = _gpu_info()  # GPU, clocks, power limit, driver, torch, date
    for half in ("tuned", "held-out"):
        r = [x["rule_ratio"] for x in rows if x["half"] == half and x["rule_ratio"]]
        if r:
            info[f"{half}_geomean"] = statistics.geometric_mean(r)
            info[f"{half}_min"] = min(r)
            print(f"{half}: rule geomean {info[f'{half}_geomean']:.3f}, min {min(r):.3f}")
        scan = [x["scan_ratio"] for x in rows if x["half"] == half and x.get("scan_ratio")]
        if scan:
            info[f"{half}_scan_geomean"] = statistics.geometric_mean(scan)
            info[f"{half}_scan_min"] = min(scan)
            print(f"{half}: the pick scanning (no group table) geomean "
                  f"{info[f'{half}_scan_geomean']:.3f}, min {min(scan):.3f}")  # fmt: skip
    extra = checks()
    failed += sum(not r["ok"] for r in extra)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "grouped-bench.json"), "w") as f:
        json.dump({"info": info, "rows": rows, "checks": extra}, f, indent=1)
    print(f"{len(rows) + len(extra) - failed} correct, {failed} wrong")
    return 1 if failed else 0


def main(argv=None) -> int:
    from two_step import main as two_step

    flags = [("rule-only", "run: time grouped_config's pick alone"),
             ("tuned", "run: the tuned half's models alone"),
             ("held-out", "run: the held-out half's models alone")]  # fmt: skip
    return two_step(__doc__, generate, run, argv, flags=flags)


if __name__ == "__main__":
    sys.exit(main())
