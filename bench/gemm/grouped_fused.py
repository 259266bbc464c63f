"""grouped_mm's fused epilogues and fp8 row-wise scaling on the
mixture-of-experts layers of bench/gemm/grouped.py, each checked first:

- fp8 e4m3 with row-wise scales (`scaled_grouped_mm`) against
  `torch._scaled_grouped_mm`, paired per round in one process; both checked
  against the dequantised product in float32;
- a per-expert bias and SiLU fused (`grouped_mm(..., bias=, activation=)`)
  against torch's `_grouped_mm` followed by the same bias and SiLU in torch;
- on the gate/up layers, SwiGLU fused (`grouped_mm(..., gate="silu")` on
  the interleaved weight: half the output written) against `_grouped_mm`
  followed by silu(gate) * up in torch.

    # here (nvwgmma built): the PTX of the rule's configurations, fused
    python bench/gemm/grouped_fused.py generate .device/grouped_fused
    # on the GPU (torch, cuda-python; no nvwgmma build)
    python bench/gemm/grouped_fused.py run .device/grouped_fused [--out DIR]

The rule (grouped_config) was set on bf16 layers without fusion; nothing
here was tuned: every row is reported as measured, the TUNED models of
grouped.py marked as such.
"""

from __future__ import annotations

import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))

from grouped import (  # noqa: E402
    ROUTINGS,
    TOKENS,
    TUNED,
    _time,
    layers,
    rows_per_group,
    seeded_layers,
)

FP8_MAX = 448.0


def _chains():
    from nvwgmma.kernel.gemm.grouped import grouped_chain

    return {
        "fp8": ("e4m3", grouped_chain(scaled=True)),
        "fp8_bias_silu": ("e4m3", grouped_chain(scaled=True, bias="bf16", activation="silu")),
        "bias_silu": ("bf16", grouped_chain(bias="bf16", activation="silu")),
    }


def _rule_configs():
    """The (tokens, N, K, experts, rows per expert) problems measured."""
    seen = set()
    for _model, _layer, e, topk, n, k in layers():
        for tokens in TOKENS:
            for routing in ROUTINGS:
                counts = tuple(rows_per_group(tokens, e, topk, routing))
                seen.add((sum(counts), n, k, e, counts))
    return seen


def generate(out_dir: str) -> None:
    from dataclasses import replace

    from nvwgmma.kernel.gemm.grouped import grouped_config, write_grouped

    written = set()
    gate_up = {(n, k) for _m, layer, _e, _t, n, k in layers() if layer == "gate/up"}
    for t, n, k, e, counts in _rule_configs():
        # What the calls pick: they read the offsets (132 SMs: H100, H200).
        configs = [replace(grouped_config(t, n, k, e, dtype=dtype, out_dtype="bf16",
                                          counts=counts), fusion=chain)
                   for dtype, chain in _chains().values()]  # fmt: skip
        if (n, k) in gate_up:
            gated = grouped_config(t, n, k, e, epilogue="registers", counts=counts, gated=True)
            configs.append(replace(gated, gate="silu"))
        for config in configs:
            if config not in written:
                written.add(config)
                print(write_grouped(out_dir, config))


def _quantise_rows(x, chunk: int = 1 << 15):
    """x (R, K) as e4m3 and one f32 scale per row (amax / 448), a chunk of
    rows at a time (a 256-expert weight is 15 GB in bf16)."""
    import torch

    q = torch.empty(x.shape, dtype=torch.float8_e4m3fn, device=x.device)
    scale = torch.empty(x.shape[0], dtype=torch.float32, device=x.device)
    for i in range(0, x.shape[0], chunk):
        part = x[i : i + chunk].float()
        s = part.abs().amax(dim=-1).clamp(min=1e-12) / FP8_MAX
        q[i : i + chunk] = (part / s.unsqueeze(-1)).clamp(-FP8_MAX, FP8_MAX).to(q.dtype)
        scale[i : i + chunk] = s
    return q, scale


def _dequantised_reference(x8, sx, w8, sw, counts):
    """Per expert, in float32: (x8 * sx) @ (w8[e] * sw[e]).T, w8 (E, N, K)."""
    import torch

    out, start = [], 0
    for e, c in enumerate(counts):
        xs = x8[start : start + c].float() * sx[start : start + c, None]
        ws = w8[e].float() * sw[e][:, None]
        out.append(xs @ ws.T)
        start += c
    return torch.cat(out)


def _err(got, ref) -> float:
    return float((got.float() - ref.float()).norm() / ref.float().norm().clamp(min=1e-30))


def run(ptx_dir: str, out_dir: str) -> int:
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    import torch
    import torch.nn.functional as F

    os.environ["NVWGMMA_PTX_DIR"] = ptx_dir
    from nvwgmma.kernel.gemm.grouped import interleave_gate_up, prepare_grouped

    rows, failed = [], 0
    for model, layer, e, topk, n, k, g, w in seeded_layers():
        w8, sw = _quantise_rows(w.reshape(e * n, k))
        w8, sw = w8.reshape(e, n, k), sw.reshape(e, n)
        bias = torch.randn(e, n, device="cuda", generator=g, dtype=torch.bfloat16)
        inter = n // 2  # the gate/up width
        gated_w = (interleave_gate_up(w[:, :inter], w[:, inter:]) if layer == "gate/up"
                   else None)  # fmt: skip
        for tokens in TOKENS:
            for routing in ROUTINGS:
                counts = rows_per_group(tokens, e, topk, routing)
                t = sum(counts)
                x = torch.randn(t, k, device="cuda", generator=g, dtype=torch.bfloat16)
                x8, sx = _quantise_rows(x)
                offs = torch.tensor(counts, device="cuda").cumsum(0).to(torch.int32)
                half = "tuned" if model in TUNED else "held-out"
                ref8 = _dequantised_reference(x8, sx, w8, sw, counts)

                def torch_fp8(x8=x8, w8=w8, sx=sx, sw=sw, offs=offs):
                    return torch._scaled_grouped_mm(x8, w8.transpose(-2, -1), sx, sw, offs=offs,
                                                    out_dtype=torch.bfloat16)  # fmt: skip

                ours8, out8 = prepare_grouped(x8, w8.transpose(-2, -1), offs=offs, scale_a=sx,
                                              scale_b=sw)  # fmt: skip
                ours8()
                try:
                    theirs8 = torch_fp8()
                except RuntimeError as error:  # a layout torch refuses on this GPU
                    print(f"torch._scaled_grouped_mm: {str(error).splitlines()[0]}")
                    theirs8, torch_fp8 = None, None
                torch.cuda.synchronize()
                err_ours = _err(out8, ref8)
                err_torch = _err(theirs8, ref8) if theirs8 is not None else None
                # bf16 with a per-expert bias and SiLU, fused vs torch's three ops
                fused, out_f = prepare_grouped(x, w.transpose(-2, -1), offs=offs, bias=bias,
                                               activation="silu")  # fmt: skip
                fused()
                starts = torch.cat([offs.new_zeros(1), offs[:-1]])
                expert = torch.repeat_interleave(torch.arange(e, device="cuda"),
                                                 offs - starts, output_size=t)  # fmt: skip

                def torch_fused(x=x, w=w, offs=offs, expert=expert, bias=bias):
                    y = torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)
                    return F.silu(y + bias[expert])

                ref_f = torch_fused()
                torch.cuda.synchronize()
                err_fused = _err(out_f, ref_f)
                calls = {"fp8": ours8, "torch_bias_silu": torch_fused, "bias_silu": fused}
                err_gated = 0.0
                if gated_w is not None:
                    gated, out_g = prepare_grouped(x, gated_w.transpose(-2, -1), offs=offs,
                                                   gate="silu")  # fmt: skip
                    gated()

                    def torch_gated(x=x, w=w, offs=offs, inter=inter):
                        y = torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)
                        return F.silu(y[:, :inter]) * y[:, inter:]

                    err_gated = _err(out_g, torch_gated())
                    calls.update(swiglu=gated, torch_swiglu=torch_gated)
                ok = (err_ours <= max(2 * (err_torch or 0), 2e-2) and err_fused < 2e-2
                      and err_gated < 2e-2)  # fmt: skip
                failed += not ok
                if torch_fp8 is not None:
                    calls["torch_fp8"] = torch_fp8
                times = _time(calls)
                ratio_fp8 = statistics.median(
                    a / b for a, b in zip(times["torch_fp8"], times["fp8"])
                ) if torch_fp8 is not None else None  # fmt: skip
                ratio_fused = statistics.median(
                    a / b for a, b in zip(times["torch_bias_silu"], times["bias_silu"]))  # fmt: skip
                ratio_gated = statistics.median(
                    a / b for a, b in zip(times["torch_swiglu"], times["swiglu"])
                ) if gated_w is not None else None  # fmt: skip
                ms = {name: statistics.median(v) for name, v in times.items()}
                row = dict(model=model, layer=layer, experts=e, topk=topk, n=n, k=k,
                           tokens=tokens, routing=routing, rows=t, half=half, ok=ok,
                           fp8_rel_err=err_ours, torch_fp8_rel_err=err_torch,
                           bias_silu_rel_err=err_fused, ms=ms, fp8_over_torch=ratio_fp8,
                           bias_silu_over_torch=ratio_fused, swiglu_rel_err=err_gated,
                           swiglu_over_torch=ratio_gated,
                           fp8_tflops=2 * t * n * k / ms["fp8"] / 1e9)  # fmt: skip
                rows.append(row)
                print(f"{'ok ' if ok else 'BAD'} {model} {layer} T={tokens} {routing}: fp8 "
                      f"{ratio_fp8 or 0:.2f}x (err {err_ours:.1e} vs torch {err_torch or 0:.1e}),"
                      f" bias+silu {ratio_fused:.2f}x, swiglu {ratio_gated or 0:.2f}x",
                      flush=True)  # fmt: skip
        del w, w8, gated_w
        torch.cuda.empty_cache()
    from run import _gpu_info, failures, write_results

    info = _gpu_info()
    for half in ("tuned", "held-out"):
        for what in ("fp8_over_torch", "bias_silu_over_torch", "swiglu_over_torch"):
            r = [x[what] for x in rows if x["half"] == half and x[what]]
            if r:
                info[f"{half}_{what}_geomean"] = statistics.geometric_mean(r)
                info[f"{half}_{what}_min"] = min(r)
                print(f"{half} {what}: geomean {statistics.geometric_mean(r):.3f}, "
                      f"min {min(r):.3f}")  # fmt: skip
    write_results(out_dir, "grouped-fused-bench.json", {"info": info, "rows": rows})
    print(f"{len(rows) - failed} correct")
    return failures(failed)


def main(argv=None) -> int:
    from two_step import main as two_step

    return two_step(__doc__, generate, run, argv)


if __name__ == "__main__":
    sys.exit(main())
