"""Attention backward speed: the gradients of nvwgmma's `attention`
(torch autograd: D and LSE preparation, the kernel, dQ's conversion)
against SDPA's cuDNN and flash backends' backward, same process, same
inputs, paired per round, on FlashAttention-3's grid -- 16k tokens
(batch = 16384 / S), hidden 2048 (heads = 2048 / head dim), S = 512 ...
16k, head dims 64 and 128, causal and not -- plus GQA rows. Each row's
gradients are first checked against a float32 reference on one batch entry.

    # here (nvwgmma built): the PTX
    python bench/attention/backward.py generate .device/attention
    # on the GPU (torch, cuda-python; no nvwgmma build)
    python bench/attention/backward.py run .device/attention [--quick] [--with-forward]
        [--head-dims 64 128 256]

TFLOP/s count the backward as 2.5 forwards (FlashAttention's convention:
4 b h S² d per forward, half of it causal). Results, with GPU, clocks and
driver, go to $OUT/attention-backward-results.json (or the directory).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "gemm"))
sys.path.insert(0, os.path.join(ROOT, "test", "gpu"))

SEQS = (512, 1024, 2048, 4096, 8192, 16384)
HEAD_DIMS = (64, 128, 256)


def grid(quick: bool = False, head_dims=HEAD_DIMS):
    """(label, batch, S, heads, kv heads, head dim, causal) of every row
    (the GQA rows: head dim 128)."""
    rows = []
    for d in head_dims:
        for s in SEQS if not quick else (1024, 8192):
            for causal in (False, True):
                rows.append((f"d{d} S={s}{' causal' if causal else ''}", 16384 // s, s,
                             2048 // d, 2048 // d, d, causal))  # fmt: skip
    if 128 in head_dims:
        rows.append(("GQA d128 S=4096 32q/8kv", 4, 4096, 32, 8, 128, False))
        rows.append(("GQA d128 S=4096 32q/8kv causal", 4, 4096, 32, 8, 128, True))
    return rows


def generate(directory: str) -> None:
    from attention_backward import generate as kernels

    kernels(directory)


def run(directory: str, quick: bool, with_forward: bool = False, head_dims=HEAD_DIMS) -> None:
    import torch
    from attention_backward import reference
    from run import _gpu_info, _time, _use_source_tree, write_results
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    _use_source_tree(directory)
    from nvwgmma.kernel.attention import attention

    info = _gpu_info()
    print(json.dumps(info), flush=True)
    results = {"info": info, "rows": []}
    torch.manual_seed(0)
    backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}
    for label, b, s, h, hkv, d, causal in grid(quick, head_dims):
        q, k, v, do = (torch.randn(b, s, x, d, device="cuda", dtype=torch.bfloat16)
                       for x in (h, hkv, hkv, h))  # fmt: skip
        row = {"label": label, "batch": b, "seq": s, "heads": h, "kv_heads": hkv, "d": d,
               "causal": causal}  # fmt: skip
        leaves = [x.requires_grad_(True) for x in (q, k, v)]
        gqa = {"enable_gqa": True} if hkv != h else {}
        outs = {"ours": attention(*leaves, causal=causal)}
        for name, backend in backends.items():
            try:
                with sdpa_kernel(backend):
                    outs[name] = sdpa(*(x.transpose(1, 2) for x in leaves), is_causal=causal,
                                      **gqa).transpose(1, 2)  # fmt: skip
                    torch.autograd.grad(outs[name], leaves, do, retain_graph=True)
            except RuntimeError as error:
                outs.pop(name, None)
                row[f"{name}_error"] = str(error)[:200]
        # Correctness on the first batch entry's first K/V head and its query
        # heads: every gradient against float32.
        g = h // hkv
        parts = (slice(0, 1), slice(None), slice(0, g)), (slice(0, 1), slice(None), slice(0, 1))
        one = [x[part].detach().float().requires_grad_(True)
               for x, part in zip((q, k, v), (parts[0], parts[1], parts[1]))]  # fmt: skip
        ref = torch.autograd.grad(reference(*one, causal, 1 / math.sqrt(d)), one,
                                  do[parts[0]].float())  # fmt: skip
        row["max_abs_error"] = {}
        for name, o in outs.items():
            grads = torch.autograd.grad(o, leaves, do, retain_graph=True)
            row["max_abs_error"][name] = max(
                (x[part].float() - r).abs().max().item()
                for x, r, part in zip(grads, ref, (parts[0], parts[1], parts[1])))  # fmt: skip
            del grads
        flops = 2.5 * 4 * b * h * s * s * d / (2 if causal else 1)
        rounds = {n: [] for n in outs}
        for _ in range(3 if quick else 5):
            for name, o in outs.items():
                rounds[name].append(_time(lambda o=o, a=leaves, g=do: torch.autograd.grad(
                    o, a, g, retain_graph=True)))  # fmt: skip
        row["ms"] = {n: statistics.median(ts) for n, ts in rounds.items()}
        row["tflops"] = {n: flops / (ms * 1e9) for n, ms in row["ms"].items()}
        for name in outs:
            if name != "ours":
                ratios = [x / o for o, x in zip(rounds["ours"], rounds[name])]
                row[f"vs_{name}"] = statistics.median(ratios)  # >1: ours faster
        if with_forward:  # a training step's attention: forward and backward

            def step(name, a=leaves, g=do, c=causal, gqa_flag=gqa):
                if name == "ours":
                    return torch.autograd.grad(attention(*a, causal=c), a, g)
                with sdpa_kernel(backends[name]):
                    o = sdpa(*(x.transpose(1, 2) for x in a), is_causal=c, **gqa_flag)
                    return torch.autograd.grad(o.transpose(1, 2), a, g)

            steps = {n: [] for n in outs}
            for _ in range(3):
                for name in outs:
                    steps[name].append(_time(lambda n=name: step(n)))
            row["forward_backward_ms"] = {n: statistics.median(t) for n, t in steps.items()}
            for name in outs:
                if name != "ours":
                    row[f"forward_backward_vs_{name}"] = statistics.median(
                        x / o for o, x in zip(steps["ours"], steps[name]))  # fmt: skip
        results["rows"].append(row)
        print(f"{label:32s} vs cudnn {row.get('vs_cudnn', 0):.3f} vs flash "
              f"{row.get('vs_flash', 0):.3f}  ours {row['tflops']['ours']:.0f} TFLOP/s "
              f"({row['ms']['ours']:.3f} ms), err {row['max_abs_error']['ours']:.1e} "
              f"(cudnn {row['max_abs_error'].get('cudnn', math.nan):.1e})", flush=True)  # fmt: skip
        write_results(directory, "attention-backward-results.json", results)
        del q, k, v, do, leaves, outs
    # The deterministic order's cost: the backward alone, paired with the
    # default order on the same inputs.
    from nvwgmma.kernel.attention.backward import attention_backward

    results["deterministic"] = []
    for b, s, h, d, causal in ((4, 4096, 16, 128, False), (4, 4096, 16, 128, True),
                               (1, 16384, 16, 128, False)):  # fmt: skip
        q, k, v, do = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
                       for _ in range(4))  # fmt: skip
        o, lse = attention(q, k, v, causal=causal, return_lse=True)
        tensors = (do, q, k, v, o, lse)
        pairs = [[_time(lambda x=x, t=tensors, c=causal: attention_backward(
            *t, causal=c, deterministic=x)) for x in (False, True)] for _ in range(3)]  # fmt: skip
        entry = {"batch": b, "seq": s, "heads": h, "d": d, "causal": causal,
                 "slowdown": statistics.median(t / f for f, t in pairs)}  # fmt: skip
        results["deterministic"].append(entry)
        print(json.dumps(entry), flush=True)
        del q, k, v, do, o, lse, tensors
    from ratios import summary as ratio_summary

    summary = ratio_summary(results["rows"], backends, head_dims)
    results["summary"] = summary
    print(json.dumps(summary, indent=1))
    write_results(directory, "attention-backward-results.json", results)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="bench/attention/backward.py")
    parser.add_argument("action", choices=("generate", "run"))
    parser.add_argument("directory")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--with-forward", action="store_true",
                        help="also time forward + backward against SDPA's")  # fmt: skip
    parser.add_argument("--head-dims", type=int, nargs="+", default=HEAD_DIMS,
                        choices=HEAD_DIMS, help="the head dims' rows only")  # fmt: skip
    args = parser.parse_args(argv)
    if args.action == "generate":
        generate(args.directory)
    else:
        run(args.directory, args.quick, args.with_forward, tuple(args.head_dims))
    return 0


if __name__ == "__main__":
    sys.exit(main())
