"""fp8 GEMM with DeepSeek-V3-style block scales (`blockwise_mm`) on
DeepSeek-V3's dense shapes (DeepGEMM's published table: N x K of its
projections at M = 128 and 4096) and block-scaled Qwen3 models', checked
against the dequantised product in float32, timed against torch._scaled_mm with the same block scales where
this torch supports them on the GPU, and the per-tensor-scaled
torch._scaled_mm (a faster, less exact baseline) otherwise.

    # here (nvwgmma built): the PTX
    python bench/gemm/blockwise.py generate .device/blockwise
    # on the GPU (torch, cuda-python; no nvwgmma build)
    python bench/gemm/blockwise.py run .device/blockwise [--out DIR] [--more]
"""

from __future__ import annotations

import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))

# DeepSeek-V3's dense projections, N x K (DeepGEMM's README table).
SHAPES = [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
TOKENS = (128, 4096)
FP8_MAX = 448.0


# Held out from the rates' fit as DeepSeek-V3's are (the fit ran on Llama-3
# projections): fp8 block-scaled Qwen3 models' dense layers, N x K --
# Qwen3-32B QKV, O, gate/up, down; Qwen3-235B-A22B QKV and O.
HELDOUT = [(10240, 5120), (5120, 8192), (51200, 5120), (5120, 25600), (9216, 4096), (4096, 8192)]


# Timed besides blockwise_config's pick: every candidate it weighs, on
# every shape; with `run --more` also its two-consumer tiles on a 2 x 1
# cluster (B's tile multicast to both CTAs, as DeepGEMM does).
def _configs(more: bool = False):
    from dataclasses import replace

    from nvwgmma.kernel.gemm.blockwise import blockwise_tiles

    tiles = blockwise_tiles()
    return [*tiles, *(replace(c, cluster_m=2) for c in tiles[:2])] if more else tiles


# Grouped (MoE) layers with block scales: (model, experts, top-k, N, K).
GROUPED = [
    ("Mixtral-8x7B gate/up", 8, 2, 28672, 4096),
    ("DeepSeek-V3 down", 256, 8, 7168, 2048),
    # held out from grouped_config's tuning and its block-scaled form:
    # Qwen3-30B-A3B's gate/up and Qwen3-235B-A22B's down (fp8 checkpoints
    # with 128 x 128 weight blocks)
    ("Qwen3-30B-A3B gate/up", 128, 8, 1536, 2048),
    ("Qwen3-235B-A22B down", 128, 8, 4096, 1536),
]
GROUPED_TOKENS = (64, 4096)


def _grouped_config(t, n, k, e):
    """What prepare_grouped picks for block scales."""
    from nvwgmma.kernel.gemm.grouped import block_scaled_config, grouped_config

    return block_scaled_config(grouped_config(t, n, k, e, dtype="e4m3", out_dtype="bf16"))


def _grouped_before(t, n, k, e):
    """What it picked before block_scaled_config: the row-wise tile cut to
    128 columns, its stages kept (3 where the row-wise tile is 256 wide)."""
    from dataclasses import replace

    from nvwgmma.kernel.gemm.grouped import grouped_config

    config = grouped_config(t, n, k, e, dtype="e4m3", out_dtype="bf16")
    return replace(config, block_scales=True, k_order="forward", tile_n=min(config.tile_n, 128))


def generate(out_dir: str) -> None:
    from dataclasses import replace

    from nvwgmma.kernel.gemm.blockwise import blockwise_config
    from nvwgmma.kernel.gemm.grouped import grouped_chain, grouped_config, write_grouped
    from nvwgmma.kernel.gemm.launch import write_kernel

    picks = [blockwise_config(m, n, k) for n, k in [*SHAPES, *HELDOUT] for m in TOKENS]
    for config in dict.fromkeys([*_configs(more=True), *picks]):
        print(write_kernel(out_dir, config))
    for _name, e, topk, n, k in GROUPED:
        for tokens in GROUPED_TOKENS:
            for pick in (_grouped_config, _grouped_before):
                print(write_grouped(out_dir, pick(tokens * topk, n, k, e)))
            # the row-wise scaled kernel it is timed against
            rowwise = grouped_config(tokens * topk, n, k, e, dtype="e4m3", out_dtype="bf16")
            print(write_grouped(out_dir, replace(rowwise, fusion=grouped_chain(scaled=True))))


def run_grouped() -> tuple[list, int]:
    """Block-scaled scaled_grouped_mm on two MoE layers (balanced routing),
    checked against the dequantised product per expert, timed against our
    and torch's row-wise scaled grouped GEMM (less exact, for scale)."""
    import torch
    from grouped import _time, rows_per_group
    from grouped_fused import _quantise_rows
    from nvwgmma.kernel.gemm.grouped import prepare_grouped

    rows, failed = [], 0
    for name, e, topk, n, k in GROUPED:
        g = torch.Generator(device="cuda").manual_seed(e + n)
        w = torch.randn(e, n, k, device="cuda", generator=g) * 0.05
        blocks = [_quantise(w[i], 128, 128) for i in range(e)]
        w8 = torch.stack([q for q, _ in blocks])
        sw = torch.stack([s for _, s in blocks]).contiguous()
        w8r, swr = _quantise_rows(w.reshape(e * n, k))
        w8r, swr = w8r.reshape(e, n, k), swr.reshape(e, n)
        for tokens in GROUPED_TOKENS:
            counts = rows_per_group(tokens, e, topk, "balanced")
            t = sum(counts)
            offs = torch.tensor(counts, device="cuda").cumsum(0).to(torch.int32)
            x = torch.randn(t, k, device="cuda", generator=g)
            x8, sx = _quantise(x, 1, 128)
            x8r, sxr = _quantise_rows(x)
            ref, start = [], 0
            for i, c in enumerate(counts):
                xs = _dequantised(x8[start : start + c], sx[start : start + c], 1, 128)
                ref.append(xs @ _dequantised(w8[i], sw[i], 128, 128).T)
                start += c
            ref = torch.cat(ref)
            ours, out = prepare_grouped(x8, w8.transpose(-2, -1), offs=offs, scale_a=sx,
                                        scale_b=sw)  # fmt: skip
            ours()
            torch.cuda.synchronize()
            err = _rel(out, ref)
            ok = err < 1e-2
            failed += not ok
            before, before_out = prepare_grouped(x8, w8.transpose(-2, -1), offs=offs,
                                                 scale_a=sx, scale_b=sw,
                                                 config=_grouped_before(t, n, k, e))  # fmt: skip
            before()
            torch.cuda.synchronize()
            before_err = _rel(before_out, ref)
            ok = ok and before_err < 1e-2
            failed += not before_err < 1e-2
            rowwise, _ = prepare_grouped(x8r, w8r.transpose(-2, -1), offs=offs, scale_a=sxr,
                                         scale_b=swr)  # fmt: skip
            calls = {"block": ours, "block_before": before, "rowwise": rowwise,
                     "torch_rowwise": lambda x8r=x8r, w8r=w8r, sxr=sxr, swr=swr, offs=offs:
                     torch._scaled_grouped_mm(x8r, w8r.transpose(-2, -1), sxr, swr, offs=offs,
                                              out_dtype=torch.bfloat16)}  # fmt: skip
            times = _time(calls, inner=10)
            ms = {c: statistics.median(v) for c, v in times.items()}
            row = dict(layer=name, experts=e, tokens=tokens, rows=t, n=n, k=k, ok=ok,
                       rel_err=err, before_rel_err=before_err, ms=ms,
                       tflops=2 * t * n * k / ms["block"] / 1e9,
                       over_before=statistics.median(
                           s / b for s, b in zip(times["block_before"], times["block"])))  # fmt: skip
            rows.append(row)
            print(f"{'ok ' if ok else 'BAD'} grouped {name} T={tokens}: {row['tflops']:.0f} "
                  f"TFLOP/s, err {err:.1e}; {row['over_before']:.2f}x the stages before, "
                  f"row-wise ours {ms['rowwise'] / ms['block']:.2f}x, "
                  f"torch row-wise {ms['torch_rowwise'] / ms['block']:.2f}x its time",
                  flush=True)  # fmt: skip
        del w, w8, w8r
        torch.cuda.empty_cache()
    return rows, failed


def _quantise(x, rows: int, cols: int):
    """x (R, C) as e4m3 with one f32 scale per rows x cols block."""
    import torch

    r, c = x.shape
    pr, pc = -(-r // rows) * rows, -(-c // cols) * cols
    padded = torch.zeros(pr, pc, dtype=torch.float32, device=x.device)
    padded[:r, :c] = x.float()
    blocks = padded.view(pr // rows, rows, pc // cols, cols)
    scale = blocks.abs().amax(dim=(1, 3)).clamp(min=1e-12) / FP8_MAX
    q = (blocks / scale[:, None, :, None]).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    return q.view(pr, pc)[:r, :c].contiguous(), scale


def _dequantised(q, scale, rows, cols):
    s = scale.repeat_interleave(rows, 0).repeat_interleave(cols, 1)
    return q.float() * s[: q.shape[0], : q.shape[1]]


def _rel(x, ref) -> float:
    """The relative (Frobenius) error of `x` against `ref`, in ref's precision."""
    return float((x.to(ref.dtype) - ref).norm() / ref.norm())


def replayed_errors(x8, sx, w8, sw, seeds) -> list[float]:
    """blockwise_mm(x8, w8.T, sx, sw) captured in a CUDA graph (on a side
    stream) and replayed once per seed, new activations and scales of that
    seed copied into the captured x8 and sx first: each replay's relative
    error against the dequantised product of the new ones."""
    import torch
    from nvwgmma.kernel.gemm.blockwise import blockwise_mm

    (m, k), n = x8.shape, w8.shape[0]
    out = torch.empty(m, n, dtype=torch.bfloat16, device=x8.device)
    graph, side = torch.cuda.CUDAGraph(), torch.cuda.Stream(x8.device)
    with torch.cuda.stream(side), torch.cuda.graph(graph):
        blockwise_mm(x8, w8.T, sx, sw, out=out)
    g, errors = torch.Generator(device=x8.device), []
    for seed in seeds:
        g.manual_seed(seed)
        nx8, nsx = _quantise(torch.randn(m, k, device=x8.device, generator=g), 1, 128)
        x8.copy_(nx8)
        sx.copy_(nsx)
        graph.replay()
        torch.cuda.synchronize(x8.device)
        ref = (_dequantised(nx8, nsx, 1, 128) @ _dequantised(w8, sw, 128, 128).T).double()
        errors.append(_rel(out, ref))
    return errors


def graph_replay(m: int = 128, n: int = 4096, k: int = 7168) -> dict:
    """blockwise_mm's split-K pick (its partials in a workspace of the
    capture's own) captured in a CUDA graph on its first call, replayed on
    new activations and scales copied into the captured ones: correct
    against the dequantised product of the new ones."""
    import torch
    from nvwgmma.kernel.gemm.blockwise import blockwise_config

    g = torch.Generator(device="cuda").manual_seed(7)
    w8, sw = _quantise(torch.randn(n, k, device="cuda", generator=g) * 0.05, 128, 128)
    x8, sx = _quantise(torch.randn(m, k, device="cuda", generator=g), 1, 128)
    errors = replayed_errors(x8, sx, w8, sw, (11, 12))
    ok = max(errors) < 1e-2
    config = blockwise_config(m, n, k)
    print(f"{'ok ' if ok else 'BAD'} graph replay of {config.name} (M={m} N={n} K={k}): "
          f"errors {', '.join(f'{e:.1e}' for e in errors)}", flush=True)  # fmt: skip
    return dict(check="graph replay", m=m, n=n, k=k, config=config.name, ok=ok, rel_errs=errors)


# K tile counts the table's shapes never make: one, odd (the overlapped
# promotion's tail without a last pair), and a partial last K tile (K =
# 1040: 8 whole and 16 columns, zero-filled by TMA) -- on ragged M and N,
# every candidate.
EDGES = [(1000, 4104, 128), (1000, 4104, 384), (1000, 4104, 896), (1000, 4104, 1040)]


def check_edges() -> tuple[list, int]:
    """Every candidate of blockwise_config on EDGES against the
    dequantised product: (rows, failures)."""
    import torch
    from nvwgmma.kernel.gemm.blockwise import blockwise_tiles, prepare_blockwise

    rows, failed = [], 0
    for m, n, k in EDGES:
        g = torch.Generator(device="cuda").manual_seed(m + n + k)
        w8, sw = _quantise(torch.randn(n, k, device="cuda", generator=g) * 0.05, 128, 128)
        x8, sx = _quantise(torch.randn(m, k, device="cuda", generator=g), 1, 128)
        ref = _dequantised(x8, sx, 1, 128) @ _dequantised(w8, sw, 128, 128).T
        for config in blockwise_tiles():
            launch, out = prepare_blockwise(x8, w8.T, sx, sw, config=config)
            launch()
            torch.cuda.synchronize()
            err = _rel(out, ref)
            ok = err < 1e-2
            failed += not ok
            rows.append(dict(check="edges", m=m, n=n, k=k, config=config.name, ok=ok,
                             rel_err=err))  # fmt: skip
            print(f"{'ok ' if ok else 'BAD'} M={m} N={n} K={k} ({-(-k // 128)} K tiles) "
                  f"{config.name}: err {err:.1e}", flush=True)  # fmt: skip
    return rows, failed


def run(ptx_dir: str, out_dir: str, more: bool = False) -> int:
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    import torch
    from grouped import _time
    from run import _gpu_info, failures, watchdog, write_results

    os.environ["NVWGMMA_PTX_DIR"] = ptx_dir
    from nvwgmma.kernel.gemm.blockwise import prepare_blockwise

    info, rows, failed = _gpu_info(), [], 0
    print(info, flush=True)
    for n, k in [*SHAPES, *HELDOUT]:
        g = torch.Generator(device="cuda").manual_seed(n + k)
        w = torch.randn(n, k, device="cuda", generator=g) * 0.05
        w8, sw = _quantise(w, 128, 128)
        for m in TOKENS:
            x = torch.randn(m, k, device="cuda", generator=g)
            x8, sx = _quantise(x, 1, 128)
            ref = _dequantised(x8, sx, 1, 128) @ _dequantised(w8, sw, 128, 128).T
            ours, out = prepare_blockwise(x8, w8.T, sx, sw)
            with watchdog(f"blockwise_config's pick at M={m} N={n} K={k}"):
                ours()
                torch.cuda.synchronize()
            err = _rel(out, ref)
            others, other_errs = {}, {}
            for config in _configs(more):
                launch, other = prepare_blockwise(x8, w8.T, sx, sw, config=config)
                with watchdog(f"{config.name} at M={m} N={n} K={k}"):
                    launch()
                    torch.cuda.synchronize()
                other_errs[config.name] = _rel(other, ref)
                others[config.name] = launch
            ok = max([err, *other_errs.values()]) < 1e-2
            failed += not ok
            one = torch.ones((), device="cuda")
            calls = {"ours": ours, **others,
                     "per_tensor": lambda x8=x8, w8=w8, one=one: torch._scaled_mm(
                         x8, w8.T, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)}  # fmt: skip
            try:  # torch's blockwise recipe (1 x 128 and 128 x 128), where it has one
                sa_t = sx.t().contiguous().t()  # M-major, as torch asks
                blockwise = torch._scaled_mm(x8, w8.T, scale_a=sa_t, scale_b=sw.t(),
                                             out_dtype=torch.bfloat16)  # fmt: skip
                torch.cuda.synchronize()
                torch_err = _rel(blockwise, ref)
                calls["torch_blockwise"] = lambda x8=x8, w8=w8, sa_t=sa_t, sw=sw: torch._scaled_mm(
                    x8, w8.T, scale_a=sa_t, scale_b=sw.t(), out_dtype=torch.bfloat16
                )
            except (RuntimeError, ValueError) as error:
                torch_err = None
                note = str(error).splitlines()[0][:120]
            times = _time(calls, inner=20)
            ms = {name: statistics.median(v) for name, v in times.items()}
            tflops = 2 * m * n * k / ms["ours"] / 1e9
            row = dict(m=m, n=n, k=k, ok=ok, rel_err=err, candidates_rel_err=other_errs,
                       torch_blockwise_rel_err=torch_err,
                       ms=ms, tflops=tflops,
                       over_per_tensor=statistics.median(
                           p / o for p, o in zip(times["per_tensor"], times["ours"])))  # fmt: skip
            if "torch_blockwise" in times:
                row["over_torch_blockwise"] = statistics.median(
                    t / o for t, o in zip(times["torch_blockwise"], times["ours"])
                )
            else:
                row["torch_blockwise"] = f"not run: {note}"
            row["candidates_tflops"] = {name: 2 * m * n * k / ms[name] / 1e9 for name in others}
            rows.append(row)
            print(f"{'ok ' if ok else 'BAD'} M={m} N={n} K={k}: {tflops:.0f} TFLOP/s, err "
                  f"{err:.1e}, {row['over_per_tensor']:.2f}x per-tensor _scaled_mm, "
                  f"{row.get('over_torch_blockwise', 0):.2f}x torch blockwise; others "
                  + ", ".join(f"{v:.0f}" for v in row["candidates_tflops"].values()),
                  flush=True)  # fmt: skip
    graph_row = graph_replay()
    failed += not graph_row["ok"]
    rows.append(graph_row)
    edge_rows, edge_failed = check_edges()
    failed += edge_failed
    rows += edge_rows
    grouped_rows, grouped_failed = run_grouped()
    failed += grouped_failed
    rows += grouped_rows
    write_results(out_dir, "blockwise-bench.json", {"info": info, "rows": rows})
    print(f"{len(rows) - failed} correct")
    return failures(failed)


def main(argv=None) -> int:
    from two_step import main as two_step

    return two_step(__doc__, generate, run, argv,
                    flags=[("more", "also time the two-consumer tiles on a 2 x 1 cluster")])  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
