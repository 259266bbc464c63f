"""deploy.py's grouped_mm checks: the mixture-of-experts GEMMs on every
GPU of the host, in CUDA graphs and under torch.compile.

One skewed routing of 8 experts (Mixtral-like, 512 tokens, top 2): read
eagerly, its offsets give 11 tile rows and a 192-wide tile; inside a
capture, where they are not read, grouped_config counts balanced rows and
takes 256. Both kernels run here, so both must be right.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "gemm"))  # the grouped bench's helpers

EXPERTS, N, K = 8, 4096, 2048
COUNTS = [377, 188, 126, 94, 75, 63, 54, 47]  # Zipf(1) over 8 experts, 1024 rows
REROUTED = [0, 500, 1, 0, 300, 0, 223, 0]  # the same rows, routed again in place
MASKED_ROWS = 64  # the masked layout: up to 64 rows per expert
MASKED_COUNTS = [64, 0, 17, 70, -3, 1, 64, 33]  # past R and negative: clamped


def configs() -> list:
    """Every grouped configuration the checks launch (for generate)."""
    from nvwgmma.kernel.gemm.grouped import grouped_chain, grouped_config

    tokens = sum(COUNTS)
    picks = [grouped_config(tokens, N, K, EXPERTS, counts=COUNTS),  # eager: offsets read
             grouped_config(tokens, N, K, EXPERTS)]  # captured: not read  # fmt: skip
    fp8 = grouped_config(tokens, N, K, EXPERTS, dtype="e4m3", out_dtype="bf16", counts=COUNTS)
    picks.append(_with_chain(fp8, grouped_chain(scaled=True)))
    masked = grouped_config(EXPERTS * MASKED_ROWS, N, K, EXPERTS)
    return [(c, False) for c in picks] + [(masked, True)]


def _with_chain(config, chain):
    from dataclasses import replace

    return replace(config, fusion=chain)


def generate(out_dir: str) -> None:
    from nvwgmma.kernel.gemm.grouped import write_grouped

    for config, masked in configs():
        print(write_grouped(out_dir, config, masked=masked))


def _operands(device: int):
    import torch

    on = f"cuda:{device}"
    g = torch.Generator(device="cpu").manual_seed(100 + device)
    x = torch.randn(sum(COUNTS), K, generator=g).to(torch.bfloat16).to(on)
    w = (torch.randn(EXPERTS, N, K, generator=g) * 0.05).to(torch.bfloat16).to(on)
    offs = torch.tensor(COUNTS, device=on).cumsum(0).to(torch.int32)
    return x, w, offs


def check_grouped(check, ndev, rel) -> None:
    """grouped_mm on each device alone (device 0 current) against float64,
    20 calls alternating devices bit-identical to those, a CUDA graph
    captured on its first call and replayed after the routing changed in
    place, the masked layout in a graph replayed with new counts,
    scaled_grouped_mm (fp8 row-wise) against its dequantised product, and
    torch.compile(fullgraph=True) of a function calling grouped_mm."""
    import torch
    from grouped import _reference
    from grouped_fused import _dequantised_reference, _quantise_rows
    from nvwgmma.kernel.gemm import grouped_mm, scaled_grouped_mm

    torch.cuda.set_device(0)
    cases = {}
    for device in reversed(range(ndev)):
        x, w, offs = _operands(device)
        y = grouped_mm(x, w.transpose(-2, -1), offs=offs)
        torch.cuda.synchronize(device)
        err = rel(y, _reference(x, w.transpose(-2, -1), COUNTS))
        cases[device] = (x, w, offs, y.clone())
        check(f"grouped: skewed routing on cuda:{device} (cuda:0 current)",
              y.device.index == device and err < 1e-2, rel_err=err)  # fmt: skip
    bad = 0
    for i in range(20):
        x, w, offs, expected = cases[i % ndev]
        bad += not torch.equal(grouped_mm(x, w.transpose(-2, -1), offs=offs), expected)
    check("grouped: 20 calls alternating devices, bit-identical", bad == 0, mismatches=bad)
    for device in range(ndev):
        _check_graphs(check, device, rel)
    x, w, offs, eager = cases[0]
    x8, sx = _quantise_rows(x)
    w8, sw = _quantise_rows(w.reshape(EXPERTS * N, K))
    w8, sw = w8.reshape(EXPERTS, N, K), sw.reshape(EXPERTS, N)
    y8 = scaled_grouped_mm(x8, w8.transpose(-2, -1), sx, sw, offs=offs)
    err = rel(y8, _dequantised_reference(x8, sx, w8, sw, COUNTS))
    check("grouped: scaled_grouped_mm (e4m3 row-wise) on cuda:0", err < 2e-2, rel_err=err)
    try:
        compiled = torch.compile(lambda a, o: grouped_mm(a, w.transpose(-2, -1), offs=o),
                                 fullgraph=True)  # fmt: skip
        got = compiled(x, offs)
        torch.cuda.synchronize()
        check("grouped: compile(fullgraph=True) bit-identical to eager", torch.equal(got, eager),
              vs_eager=rel(got, eager))  # fmt: skip
    except Exception as error:
        check("grouped: compile(fullgraph=True)", False,
              error=f"{type(error).__name__}: {error}"[:400])  # fmt: skip


def _check_graphs(check, device, rel) -> None:
    import torch
    from grouped import _reference
    from nvwgmma.kernel.gemm import grouped_mm

    x, w, offs = _operands(device)
    w_kn = w.transpose(-2, -1)
    with torch.cuda.device(device):
        out = torch.empty(sum(COUNTS), N, dtype=torch.bfloat16, device=x.device)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=torch.cuda.Stream(device)):
            grouped_mm(x, w_kn, offs=offs, out=out)  # first call: inside the capture
        errors = []
        for counts in (COUNTS, REROUTED):
            offs.copy_(torch.tensor(counts, device=x.device).cumsum(0).to(torch.int32))
            out.fill_(0)
            graph.replay()
            torch.cuda.synchronize()
            rows = sum(counts)
            errors.append(rel(out[:rows], _reference(x, w_kn, counts)))
        check(f"grouped: graph (first call in capture) on cuda:{device}, replayed after the "
              "routing changed", max(errors) < 1e-2, rel_err=max(errors))  # fmt: skip
        xm = x[: EXPERTS * MASKED_ROWS].reshape(EXPERTS, MASKED_ROWS, K)
        live = torch.tensor(MASKED_COUNTS, device=x.device, dtype=torch.int32)
        om = torch.full((EXPERTS, MASKED_ROWS, N), float("nan"), dtype=torch.bfloat16,
                        device=x.device)  # fmt: skip
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=torch.cuda.Stream(device)):
            grouped_mm(xm, w_kn, counts=live, out=om)
        fresh = [3, 64, 0, 9, 64, 1, 0, 40]
        live.copy_(torch.tensor(fresh, device=x.device, dtype=torch.int32))
        graph.replay()
        torch.cuda.synchronize()
        kept = [min(max(c, 0), MASKED_ROWS) for c in fresh]
        got = torch.cat([om[e, :c] for e, c in enumerate(kept)])
        ref = torch.cat([xm[e, :c].double() @ w_kn[e].double() for e, c in enumerate(kept)])
        untouched = all(bool(torch.isnan(om[e, c:]).all()) for e, c in enumerate(kept))
        err = rel(got, ref)
        check(f"grouped: masked layout in a graph on cuda:{device}, replayed with new counts",
              err < 1e-2 and untouched, rel_err=err, rows_past_counts_untouched=untouched)  # fmt: skip
