"""fp8 (e4m3) attention: speed next to our bf16 kernel and cuDNN's bf16
SDPA on the same problems (paired per round, same process), and accuracy
against float32 attention of the dequantized inputs, next to what rounding
P to e4m3 alone costs (an exact-arithmetic emulation).

    # here (nvwgmma built): the shipped kernels, fp8 ones included
    python bench/attention/run.py generate .device/attention
    # on the GPU
    python bench/attention/fp8.py .device/attention [--seqs 2048,8192] [--dims 128]

FlashAttention-3 publishes ~1.0-1.2 PFLOP/s for its fp8 forward on an H100
SXM5 (its paper, a different machine and clocks): compare the TFLOP/s
column with that only loosely; the paired ratios are the measurement.
Results: $OUT/attention-fp8-results.json (or the directory).
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench", "gemm"))

SEQS = (512, 1024, 2048, 4096, 8192, 16384)
HEAD_DIMS = (64, 128, 256)


@functools.lru_cache(maxsize=1)
def _attention_run():
    """bench/attention/run.py as a module (`run` is bench/gemm's here)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("attention_run", os.path.join(HERE, "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def row(attention, d, s, causal, fma=()):
    """One problem of the grid (16k tokens, hidden 2048): errors and paired
    timings of ours fp8 (V as stored, and V stored transposed), ours bf16
    and cuDNN's bf16 SDPA on the dequantised inputs; with `fma`, the
    default fp8 kernel with fma_exp2 = each of them (V stored transposed),
    checked and timed in the same rounds."""
    import torch
    from nvwgmma.kernel.attention import default_config
    from run import _time  # bench/gemm/run.py
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    check = _attention_run()
    b, h = 16384 // s, 2048 // d
    gen = torch.Generator(device="cuda").manual_seed(d + s)
    (q8, qf), (k8, kf), (v8, vf) = (check._inputs((b, s, h, d), "e4m3", f, gen)
                                    for f in check.FP8_FACTORS)  # fmt: skip
    descales = check.FP8_DESCALES
    # V stored (batch, heads, d, keys): the layout the kernel reads.
    v8t = v8.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    qb, kb, vb = (x.to(torch.bfloat16) for x in (qf, kf, vf))
    scale = 1 / math.sqrt(d)
    ours = attention(q8, k8, v8, causal=causal, **descales)
    ours_t = attention(q8, k8, v8t, causal=causal, **descales)
    ref = check._reference(qf[:1], kf[:1], vf[:1], causal, scale)
    emulated = check.fp8_p_reference(qf[:1], kf[:1], vf[:1], causal, scale)
    errors = {"ours": check._errors(ours[:1], ref), "p_in_e4m3": check._errors(emulated, ref),
              "v_transposed_identical": bool(torch.equal(ours, ours_t))}  # fmt: skip
    del emulated
    qt, kt, vt = (x.transpose(1, 2) for x in (qb, kb, vb))
    calls = {
        "fp8": lambda: attention(q8, k8, v8, causal=causal, **descales),
        "fp8_vt": lambda: attention(q8, k8, v8t, causal=causal, **descales),
        "bf16": lambda: attention(qb, kb, vb, causal=causal),
    }
    base = default_config(d, dtype="e4m3", causal=causal, seq=s)
    # Vᵀ with its keys already in P's register order (what the copy writes):
    # the kernel without P's shuffles, alone.
    from nvwgmma.kernel.attention import launch

    vp_tensor, refresh = launch._transposed_v(launch._tensor(v8, "v"), 0, True)
    refresh()
    torch.cuda.synchronize()
    vp = vp_tensor.value
    permuted = base.replace(v_permuted=True)
    errors["permuted_identical_to_copy"] = bool(
        torch.equal(ours, attention(q8, k8, vp, causal=causal, config=permuted, **descales))
    )
    calls["fp8_vp"] = lambda: attention(q8, k8, vp, causal=causal, config=permuted, **descales)
    for n in fma:
        config = base.replace(fma_exp2=n)
        variant = attention(q8, k8, v8t, causal=causal, config=config, **descales)
        errors[f"fma{n}"] = check._errors(variant[:1], ref)
        calls[f"fma{n}"] = lambda x=config: attention(q8, k8, v8t, causal=causal, config=x,
                                                      **descales)  # fmt: skip
    rounds = {name: [] for name in (*calls, "cudnn")}
    for _ in range(3):
        for name, fn in calls.items():
            rounds[name].append(_time(fn))
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            rounds["cudnn"].append(_time(lambda: sdpa(qt, kt, vt, is_causal=causal)))
    flops = 4 * b * h * s * s * d / (2 if causal else 1)
    ms = {n: statistics.median(t) for n, t in rounds.items()}

    def paired(slow, fast):
        return statistics.median(x / y for x, y in zip(rounds[slow], rounds[fast]))

    return {"d": d, "seq": s, "batch": b, "heads": h, "causal": causal, "errors": errors,
            "correct": check._fp8_correct(errors["ours"], errors["p_in_e4m3"]), "ms": ms,
            "tflops": {n: flops / (t * 1e9) for n, t in ms.items()},
            # > 1: fp8 (V read as stored, transposed on the fly) faster
            "fp8_vs_bf16": paired("bf16", "fp8"), "fp8_vs_cudnn_bf16": paired("cudnn", "fp8"),
            "vt_vs_copy": paired("fp8", "fp8_vt"),
            # > 1: P's fragments without shuffles (V's keys permuted) faster
            "permuted_vs_shuffles": paired("fp8_vt", "fp8_vp"),
            # > 1: the fma_exp2 variant faster than the default (both V stored transposed)
            **{f"fma{n}_vs_default": paired("fp8_vt", f"fma{n}") for n in fma}}  # fmt: skip


def run(directory: str, seqs=SEQS, dims=HEAD_DIMS, fma=()) -> dict:
    from run import _gpu_info, _use_source_tree, write_results  # bench/gemm/run.py

    _use_source_tree(directory)
    from nvwgmma.kernel.attention import attention

    results = {"info": _gpu_info(), "rows": []}
    print(json.dumps(results["info"]))
    for d in dims:
        for s in seqs:
            for causal in (False, True):
                r = row(attention, d, s, causal, fma)
                results["rows"].append(r)
                e = r["errors"]
                print(f"d{d} S={s}{' causal' if causal else '':7s} fp8 "
                      f"{r['tflops']['fp8']:.0f} (Vt {r['tflops']['fp8_vt']:.0f}, permuted Vt "
                      f"{r['tflops']['fp8_vp']:.0f}: x{r['permuted_vs_shuffles']:.3f}) TFLOP/s, "
                      f"bf16 {r['tflops']['bf16']:.0f}, cudnn {r['tflops']['cudnn']:.0f}; "
                      f"x{r['fp8_vs_bf16']:.2f} ours bf16, rel {e['ours']['rel']:.1e} "
                      f"(P in e4m3 alone {e['p_in_e4m3']['rel']:.1e})"
                      + "".join(f"; fma{n} x{r[f'fma{n}_vs_default']:.3f}" for n in fma),
                      flush=True)  # fmt: skip
                write_results(directory, "attention-fp8-results.json", results)
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="bench/attention/fp8.py")
    parser.add_argument("directory")
    parser.add_argument("--seqs", help="comma-separated sequence lengths")
    parser.add_argument("--dims", help="comma-separated head dims")
    parser.add_argument(
        "--fma", help="comma-separated fma_exp2 variants to time against the default"
    )
    args = parser.parse_args(argv)
    seqs = tuple(int(x) for x in args.seqs.split(",")) if args.seqs else SEQS
    dims = tuple(int(x) for x in args.dims.split(",")) if args.dims else HEAD_DIMS
    fma = tuple(int(x) for x in args.fma.split(",")) if args.fma else ()
    run(args.directory, seqs, dims, fma)
    return 0


if __name__ == "__main__":
    sys.exit(main())
