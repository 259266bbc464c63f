"""Attention speed and accuracy: nvwgmma.kernel.attention against
torch.nn.functional.scaled_dot_product_attention with the cuDNN and the
flash backends, same process, same inputs, paired per round, on
FlashAttention-3's grid -- 16k tokens per batch (batch = 16384 / S),
hidden 2048 (heads = 2048 / head dim), S = 512 ... 16k, head dim 64 / 128 /
256, causal and not -- plus a GQA row, a varlen row, and every shipped
configuration (f16 and varlen included) checked for accuracy alone.

    # here (nvwgmma built): the PTX of every shipped configuration and ablation
    python bench/attention/run.py generate .device/attention
    # on the GPU (torch, cuda-python; no nvwgmma build)
    python bench/attention/run.py run .device/attention [--quick] [--no-ablations]

Every case is first checked against a float32 reference (max abs and
relative error, next to SDPA's own bf16 error); results, with the GPU,
clocks and driver, go to $OUT/attention-results.json (or the directory).
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

SEQS = (512, 1024, 2048, 4096, 8192, 16384)
ABLATION_SEQS = (1024, 4096)
HEAD_DIMS = (64, 128, 256)


def grid(quick: bool = False):
    """(label, batch, S, heads, kv heads, head dim, causal) of every row."""
    rows = []
    for d in HEAD_DIMS if not quick else (128,):
        for s in SEQS if not quick else (1024, 4096):
            for causal in (False, True):
                rows.append((f"d{d} S={s}{' causal' if causal else ''}", 16384 // s, s,
                             2048 // d, 2048 // d, d, causal))  # fmt: skip
    rows.append(("GQA d128 S=4096 32q/8kv", 4, 4096, 32, 8, 128, False))
    return rows


def ablations():
    """(head dim, label, config changes): each technique turned off at
    every head dim, scheduling and stage count flipped against the
    default's, and the other tile shapes FlashAttention-3 uses. Changes
    may be a function of the default configuration."""
    # persistent and speculative need overlap
    serial = {"overlap": False, "persistent": False, "speculative": False}
    rows = []
    for d in HEAD_DIMS:
        rows += [(d, "no overlap", serial), (d, "no ping-pong", {"pingpong": False}),
                 (d, "neither", {**serial, "pingpong": False}),
                 (d, "persistent flipped", lambda c: {"persistent": not c.persistent}),
                 (d, "accurate exp", {"fast_exp2": False, "speculative": False}),
                 (d, "lazy rescale flipped", lambda c: {"lazy_rescale": not c.lazy_rescale}),
                 (d, "speculative flipped", lambda c: {"speculative": not c.speculative}),
                 *((d, f"fma exp2 {n}/8", {"fma_exp2": n}) for n in (1, 2, 3)),
                 (d, "dynamic", {"persistent": True, "dynamic": True, "producer_regs": 40,
                                "consumer_regs": 232})]  # fmt: skip
    rows += [(d, "tma store flipped", lambda c: {"tma_store": not c.tma_store}) for d in (64, 128)]
    rows += [(64, "192-row tiles", {"consumers": 3, "pingpong": False, "consumer_regs": 160,
                                    "producer_regs": 32, "tma_store": False,
                                    "speculative": False})]  # fmt: skip
    rows += [(128, "block_n 176", {"block_n": 176, "tma_store": False}), (64, "block_n 192", {"block_n": 192}),
             (128, "stages 3", {"stages": 3, "tma_store": False}), (64, "stages 3", {"stages": 3})]  # fmt: skip
    return rows


def variant(d: int, causal: bool, changes):
    """The default configuration and the ablation's change of it."""
    from nvwgmma.kernel.attention import default_config

    base = default_config(d, causal=causal)
    return base, base.replace(**(changes(base) if callable(changes) else changes))


def generate(directory: str) -> None:
    from nvwgmma.kernel.attention import launch

    launch.precompile(directory)
    for causal in (False, True):
        for d, _, changes in ablations():
            try:
                launch.write_kernel(directory, variant(d, causal, changes)[1])
            except ValueError as error:  # a tile shape that does not fit: reported, skipped
                print(f"skipped d{d} {changes}: {error}")
    print(f"wrote {len(os.listdir(directory)) // 2} kernels to {directory}")


def _causal_masked(s):
    """Scores s (..., sq, sk) with the bottom-right causal mask applied:
    query i sees keys up to i + sk - sq (-inf beyond)."""
    import torch

    sq, sk = s.shape[-2], s.shape[-1]
    keep = torch.ones(sq, sk, dtype=torch.bool, device=s.device).tril(sk - sq)
    return s.masked_fill(~keep, float("-inf"))


def _reference(q, k, v, causal, scale, p_dtype=None):
    """float32 attention per head, (batch, seq, heads, d) in and out. With
    `p_dtype` (a torch dtype), P = exp(s - row max) is rounded to it before
    P·V and divided by its unrounded sum afterwards: what rounding P alone
    costs (fp8_p_reference)."""
    import torch

    group = q.shape[2] // k.shape[2]
    k = k.repeat_interleave(group, dim=2)
    v = v.repeat_interleave(group, dim=2)
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    # One head at a time: at S = 16k a whole batch entry's scores take 32 GiB.
    for h in range(q.shape[2]):
        s = (q[:, :, h].float() @ k[:, :, h].float().transpose(-1, -2)) * scale
        if causal:
            s = _causal_masked(s)
        if p_dtype is None:
            out[:, :, h] = s.softmax(-1) @ v[:, :, h].float()
        else:
            p = torch.exp(s - s.amax(-1, keepdim=True))
            out[:, :, h] = (p.to(p_dtype).float() @ v[:, :, h].float()) / p.sum(-1, keepdim=True)
    return out


def _errors(out, ref):
    diff = (out.float() - ref).abs()
    return {"max_abs": float(diff.max()), "rel": float(diff.norm() / ref.norm())}


def _check(q, k, v, causal, ours, sdpa):
    """Ours and SDPA's errors against float32 on the first batch entry."""
    scale = 1 / math.sqrt(q.shape[-1])
    ref = _reference(q[:1], k[:1], v[:1], causal, scale)
    return {"ours": _errors(ours[:1], ref), "sdpa": _errors(sdpa[:1], ref)}


def _correct(errors) -> bool:
    """Within what SDPA's own bf16 result errs on these inputs, with room."""
    return errors["rel"] <= 4e-3 and errors["max_abs"] <= 2e-2


def fp8_p_reference(q, k, v, causal, scale):
    """float32 attention with P rounded to e4m3 after the final row maximum
    (the kernel rounds it after each block's running maximum): what fp8 P
    costs by itself."""
    import torch

    return _reference(q, k, v, causal, scale, p_dtype=torch.float8_e4m3fn)


def _fp8_correct(errors, p_in_e4m3) -> bool:
    """Within what rounding P to e4m3 alone errs on the same inputs
    (fp8_p_reference: ~2.5 % relative, up to ~6e-2 absolute on a causal
    row with few keys), with room for rounding after running maxima and
    for the bf16 output."""
    return (errors["rel"] <= 1.25 * p_in_e4m3["rel"] + 4e-3
            and errors["max_abs"] <= 2 * p_in_e4m3["max_abs"] + 2e-2)  # fmt: skip


# fp8 inputs are stored times these (q, k, v) and passed with the
# descales that undo them, so that the descales are exercised.
FP8_FACTORS = (2.0, 4.0, 0.5)
FP8_DESCALES = {f"{n}_descale": 1 / f for n, f in zip("qkv", FP8_FACTORS)}


def _inputs(shape, dtype, factor, generator=None):
    """(input, what the reference reads): 16-bit randn, or fp8 randn
    stored times `factor` (undone by a descale) and its dequantisation."""
    import torch

    x = torch.randn(*shape, device="cuda", generator=generator)
    if dtype != "e4m3":
        t = x.to(torch.bfloat16 if dtype == "bf16" else torch.float16)
        return t, t
    stored = (x * factor).to(torch.float8_e4m3fn)
    return stored, stored.float() / factor


def every_configuration(attention, shipped_configs):
    """Each configuration `attention` can pick (passed explicitly: some are
    picked by sequence length), at ragged sizes, against
    float32: dense (batch 2, 1000 queries over 1000 or 1200 keys, 4 query
    heads on 2 K/V heads) and varlen (sequences of 300, 1000 and 17). The
    grid runs bf16 dense only; this covers f16, every varlen default and
    the key tails. fp8 inputs are stored scaled (q x 2, k x 4, v / 2) and
    passed with the descales that undo it."""
    import torch

    rows = []
    for c in shipped_configs():
        d, scale = c.head_dim, 1 / math.sqrt(c.head_dim)
        descales = FP8_DESCALES if c.fp8 else {}
        if c.varlen:
            lengths = [300, 1000, 17]
            cu = torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()],
                              dtype=torch.int32, device="cuda")  # fmt: skip
            (q, qr), (k, kr), (v, vr) = (_inputs((sum(lengths), h, d), c.dtype, f)
                                         for h, f in zip((4, 2, 2), FP8_FACTORS))  # fmt: skip
            out = attention(q, k, v, causal=c.causal, cu_seqlens_q=cu, cu_seqlens_k=cu,
                            max_seqlen_q=max(lengths), max_seqlen_k=max(lengths), config=c,
                            **descales)  # fmt: skip
            worst = {"max_abs": 0.0, "rel": 0.0}
            emulated = dict(worst)
            for i in range(len(lengths)):
                sl = slice(int(cu[i]), int(cu[i + 1]))
                one = (qr[None, sl], kr[None, sl], vr[None, sl], c.causal, scale)
                ref = _reference(*one)[0]
                e = _errors(out[sl], ref)
                worst = {key: max(worst[key], e[key]) for key in worst}
                if c.fp8:
                    e = _errors(fp8_p_reference(*one)[0], ref)
                    emulated = {key: max(emulated[key], e[key]) for key in emulated}
            errors = worst
        else:
            sk = 1200 if c.causal else 1000  # causal: bottom-right aligned, keys > queries
            (q, qr), (k, kr), (v, vr) = (_inputs((2, s, h, d), c.dtype, f) for s, h, f in
                                         zip((1000, sk, sk), (4, 2, 2), FP8_FACTORS))  # fmt: skip
            out = attention(q, k, v, causal=c.causal, config=c, **descales)
            ref = _reference(qr, kr, vr, c.causal, scale)
            errors = _errors(out, ref)
            if c.fp8:
                emulated = _errors(fp8_p_reference(qr, kr, vr, c.causal, scale), ref)
        torch.cuda.synchronize()
        row = {"config": c.name, "errors": errors, "correct": _correct(errors)}
        if c.fp8:  # against rounding P to e4m3 alone (the worst sequence's, varlen)
            row["p_in_e4m3"] = emulated
            row["correct"] = _fp8_correct(errors, emulated)
        rows.append(row)
        print(json.dumps(rows[-1]))
    return rows


def fallback_check(attention, default_config):
    """Inputs that send the speculative softmax down its exact fallback,
    against float32 and the log-sum-exp (d64 and d128, causal or not):
    scores rising along the keys (the maximum moves every block), a jump
    that overflows 2^x against block 0's maximum, and fewer keys than
    queries (causal rows with no key: O = 0, LSE -inf)."""
    import torch

    rows = []
    g = torch.Generator(device="cuda").manual_seed(1)
    b, s, h = 2, 1536, 4
    for d in (64, 128):
        scale = 1 / math.sqrt(d)
        q, k, v = (torch.randn(b, s, h, d, device="cuda", generator=g).bfloat16() for _ in "qkv")
        ramp = torch.linspace(0.2, 3.0, s, device="cuda")[None, :, None, None]
        jump_k = torch.ones(b, s, h, d, device="cuda")
        jump_k[:, :200] = -1.0
        jump_k = 8 * (jump_k + 0.05 * torch.randn(b, s, h, d, device="cuda", generator=g))
        cases = [("growing", q, (k.float() * ramp).bfloat16(), v, (False, True)),
                 ("jump", torch.full_like(q, 4.0), jump_k.bfloat16(), v, (False, True)),
                 ("keyless rows", q, k[:, :700], v[:, :700], (True,))]  # fmt: skip
        for name, qq, kk, vv, masks in cases:
            for causal in masks:
                config = default_config(d, causal=causal)
                o, lse = attention(qq, kk, vv, causal=causal, config=config, return_lse=True)
                ref = _reference(qq[:1], kk[:1], vv[:1], causal, scale)
                sc = torch.einsum("bqhd,bkhd->bhqk", qq[:1].float(), kk[:1].float()) * scale
                if causal:
                    sc = _causal_masked(sc)
                lse_ref = torch.logsumexp(sc, -1)
                has = torch.isfinite(lse_ref[0, 0])  # rows with a key
                errors = _errors(o[:1][:, has], ref[:, has])
                lse_err = float((lse[:1][..., has] - lse_ref[..., has]).abs().max())
                empty = bool(
                    (o[:1][:, ~has] == 0).all() and torch.isneginf(lse[:1][..., ~has]).all()
                )
                row = {"case": f"{name} d{d}{' causal' if causal else ''}", "config": config.name,
                       "errors": errors, "lse_max_abs": lse_err, "keyless_rows_ok": empty,
                       "correct": _correct(errors) and lse_err < 1e-2 and empty}  # fmt: skip
                rows.append(row)
                print(json.dumps(row))
    return rows


def _host_us(fn, calls: int = 50) -> float:
    """Host microseconds per call of fn() from an idle GPU queue (50
    launches never fill it, so none waits for the GPU)."""
    import time

    import torch

    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    host = (time.perf_counter() - start) / calls * 1e6
    torch.cuda.synchronize()
    return host


def run(directory: str, quick: bool, with_ablations: bool = True, with_grid: bool = True,
        only=None, seqs=ABLATION_SEQS) -> None:  # fmt: skip
    import torch
    from run import _gpu_info, _time, _use_source_tree, write_results
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    _use_source_tree(directory)
    from nvwgmma.kernel.attention import (
        attention,
        default_config,
        launch,
        prepare,
        shipped_configs,  # fmt: skip
    )

    info = _gpu_info()
    print(json.dumps(info))
    results = {"info": info, "rows": [], "ablations": [], "varlen": None}
    torch.manual_seed(0)
    for label, b, s, h, hkv, d, causal in grid(quick) if with_grid else ():
        q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, s, hkv, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, s, hkv, d, device="cuda", dtype=torch.bfloat16)
        # SDPA takes (batch, heads, seq, d): the same memory, transposed views.
        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
        gqa = {"enable_gqa": True} if hkv != h else {}
        ours = attention(q, k, v, causal=causal)
        row = {"label": label, "batch": b, "seq": s, "heads": h, "kv_heads": hkv, "d": d,
               "causal": causal}  # fmt: skip
        backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}
        outs = {}
        for name, backend in backends.items():
            try:
                with sdpa_kernel(backend):
                    outs[name] = sdpa(qt, kt, vt, is_causal=causal, **gqa).transpose(1, 2)
            except RuntimeError as error:
                row[f"{name}_error"] = str(error)[:200]
        reference = outs.get("cudnn", outs.get("flash"))
        row["errors"] = _check(q, k, v, causal, ours, reference if reference is not None else ours)
        flops = 4 * b * h * s * s * d / (2 if causal else 1)
        rounds = {"ours": [], **{n: [] for n in outs}}
        for _ in range(3 if quick else 5):
            t = _time(lambda q=q, k=k, v=v, c=causal: attention(q, k, v, causal=c))
            rounds["ours"].append(t)
            for name in outs:
                with sdpa_kernel(backends[name]):
                    rounds[name].append(
                        _time(lambda a=(qt, kt, vt), c=causal, g=gqa: sdpa(*a, is_causal=c, **g))
                    )
        row["ms"] = {n: statistics.median(ts) for n, ts in rounds.items()}
        # The kernel alone (a prepared launch) and the host's part of a call.
        prepared, _, _ = prepare(q, k, v, causal=causal)
        row["kernel_ms"] = _time(prepared)
        row["host_us"] = _host_us(lambda q=q, k=k, v=v, c=causal: attention(q, k, v, causal=c))
        row["tflops"] = {n: flops / (ms * 1e9) for n, ms in row["ms"].items()}
        for name in outs:
            ratios = [o / x for o, x in zip(rounds[name], rounds["ours"])]
            row[f"vs_{name}"] = statistics.median(ratios)  # >1: ours faster
        results["rows"].append(row)
        print(f"{label:26s} vs cudnn {row.get('vs_cudnn', 0):.3f} vs flash "
              f"{row.get('vs_flash', 0):.3f}  ours {row['ms']['ours']:.4f} ms, kernel "
              f"{row['kernel_ms']:.4f} ms, host {row['host_us']:.0f} us, rel err "
              f"{row['errors']['ours']['rel']:.1e}", flush=True)  # fmt: skip
        write_results(directory, "attention-results.json", results)  # so far
    # Ablations at S = 1024 and 4096, 16k tokens: default and variant paired
    # per round, the variant checked against float32 like the grid's rows.
    references = {}
    chosen = [a for a in ablations() if not quick or a[0] == 128] if with_ablations else []
    chosen = [a for a in chosen if only is None or a[1] in only]
    for d, label, changes in chosen:
        for s in seqs:
            gen = torch.Generator(device="cuda").manual_seed(d + s)
            q = torch.randn(16384 // s, s, 2048 // d, d, device="cuda", dtype=torch.bfloat16,
                            generator=gen)  # fmt: skip
            k = torch.randn(q.shape, device="cuda", dtype=torch.bfloat16, generator=gen)
            v = torch.randn(q.shape, device="cuda", dtype=torch.bfloat16, generator=gen)
            for causal in (False, True):
                base, config = variant(d, causal, changes)
                if not os.path.exists(os.path.join(directory, launch.kernel_key(config) + ".ptx")):
                    continue
                key = (d, s, causal)
                if key not in references:
                    references[key] = _reference(q[:1], k[:1], v[:1], causal, 1 / math.sqrt(d))
                out = attention(q, k, v, causal=causal, config=config)
                errors = _errors(out[:1], references[key])
                args = (q, k, v)
                pairs = [(_time(lambda a=args, c=causal, x=base: attention(*a, causal=c, config=x)),
                          _time(lambda a=args, c=causal, x=config: attention(*a, causal=c, config=x)))
                         for _ in range(3)]  # fmt: skip
                entry = {"d": d, "seq": s, "label": label, "causal": causal, "errors": errors,
                         "correct": _correct(errors),
                         "default_ms": statistics.median(p[0] for p in pairs),
                         "ms": statistics.median(p[1] for p in pairs),
                         "slowdown": statistics.median(p[1] / p[0] for p in pairs),
                         # after every timed launch: the same bits again
                         "repeatable": bool(torch.equal(out, attention(
                             q, k, v, causal=causal, config=config)))}  # fmt: skip
                results["ablations"].append(entry)
                print(json.dumps(entry), flush=True)
                write_results(directory, "attention-results.json", results)  # so far
            del q, k, v
        references = {key: r for key, r in references.items() if key[0] == d}
    # Varlen: four sequences of different lengths, against per-sequence SDPA.
    lengths = [1000, 3000, 517, 2048]
    cu = torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()], dtype=torch.int32,
                      device="cuda")  # fmt: skip
    total = sum(lengths)
    q = torch.randn(total, 16, 128, device="cuda", dtype=torch.bfloat16)
    k, v = torch.randn_like(q), torch.randn_like(q)
    out = attention(q, k, v, causal=True, cu_seqlens_q=cu, cu_seqlens_k=cu,
                    max_seqlen_q=max(lengths))  # fmt: skip
    worst = 0.0
    for i in range(len(lengths)):
        sl = slice(int(cu[i]), int(cu[i + 1]))
        ref = _reference(q[None, sl], k[None, sl], v[None, sl], True, 1 / math.sqrt(128))[0]
        worst = max(worst, _errors(out[sl], ref)["max_abs"])
    t = _time(lambda: attention(q, k, v, causal=True, cu_seqlens_q=cu, cu_seqlens_k=cu,
                                max_seqlen_q=max(lengths)))  # fmt: skip
    results["varlen"] = {"lengths": lengths, "max_abs": worst, "ms": t}
    print(json.dumps(results["varlen"]))
    results["configurations"] = every_configuration(attention, shipped_configs)
    results["fallback"] = fallback_check(attention, default_config)
    write_results(directory, "attention-results.json", results)  # so far
    from ratios import summary as ratio_summary

    ratios = ratio_summary(results["rows"], ("cudnn", "flash"), HEAD_DIMS)
    results["summary"] = ratios
    print(json.dumps(ratios, indent=1))
    write_results(directory, "attention-results.json", results)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="bench/attention/run.py")
    parser.add_argument("action", choices=("generate", "run"))
    parser.add_argument("directory")
    parser.add_argument("--quick", action="store_true", help="head dim 128, S = 1k and 4k")
    parser.add_argument("--no-ablations", action="store_true", help="the grid only")
    parser.add_argument("--no-grid", action="store_true", help="the ablations (and varlen) only")
    parser.add_argument("--only", help="comma-separated ablation labels to run")
    parser.add_argument("--seqs", help="comma-separated sequence lengths for the ablations")
    args = parser.parse_args(argv)
    if args.action == "generate":
        generate(args.directory)
    else:
        seqs = tuple(int(x) for x in args.seqs.split(",")) if args.seqs else ABLATION_SEQS
        only = set(args.only.split(",")) if args.only else None
        run(args.directory, args.quick, not args.no_ablations, not args.no_grid, only, seqs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
