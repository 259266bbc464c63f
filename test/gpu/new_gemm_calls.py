"""grouped_mm's fused and gated calls, scaled_grouped_mm (row-wise and
block scales) and blockwise_mm where users run them, on a 2-GPU machine:
each call on cuda:1 (operands there, cuda:0 current) equal to cuda:0's,
captured into a CUDA graph and replayed after its first input changed in
place, and under torch.compile -- each compared with eager, bit for bit.

    # here (nvwgmma built), from the repository root: the PTX
    python bench/gemm/grouped_fused.py generate .device/ptx
    python bench/gemm/blockwise.py generate .device/ptx
    # on the GPUs (torch; no nvwgmma build), from the repository root
    python test/gpu/new_gemm_calls.py
"""

import os
import sys

sys.path[:0] = ["python", "bench/gemm", "examples"]
os.environ.setdefault("NVWGMMA_PTX_DIR", ".device/ptx")
import torch
from blockwise import _quantise
from grouped import rows_per_group
from grouped_fused import _quantise_rows
from nvwgmma.kernel.gemm import grouped_mm, scaled_grouped_mm
from nvwgmma.kernel.gemm.blockwise import blockwise_mm
from nvwgmma.kernel.gemm.grouped import interleave_gate_up


def inputs(dev):
    g = torch.Generator(device=dev).manual_seed(3)
    e, n, k = 8, 28672, 4096
    counts = rows_per_group(64, e, 2, "skewed")
    offs = torch.tensor(counts, device=dev).cumsum(0).to(torch.int32)
    w = torch.randn(e, n, k, device=dev, generator=g, dtype=torch.bfloat16) * 0.05
    x = torch.randn(sum(counts), k, device=dev, generator=g, dtype=torch.bfloat16)
    bias = torch.randn(e, n, device=dev, generator=g, dtype=torch.bfloat16)
    wi = interleave_gate_up(w[:, : n // 2], w[:, n // 2 :])
    w8, sw = _quantise_rows(w.reshape(e * n, k))
    w8, sw = w8.reshape(e, n, k), sw.reshape(e, n)
    x8, sx = _quantise_rows(x)
    blocks = [_quantise(w[i].float(), 128, 128) for i in range(e)]
    wb = torch.stack([q for q, _ in blocks])
    swb = torch.stack([s for _, s in blocks]).contiguous()
    xb, sxb = _quantise(x.float(), 1, 128)
    d8, dsw = _quantise(torch.randn(2112, 7168, device=dev, generator=g), 128, 128)
    a8, dsa = _quantise(torch.randn(4096, 7168, device=dev, generator=g), 1, 128)
    return {
        "gate": (
            lambda x, w, o: grouped_mm(x, w, offs=o, gate="silu"),
            [x, wi.transpose(-2, -1), offs],
        ),
        "bias_silu": (
            lambda x, w, o, b: grouped_mm(x, w, offs=o, bias=b, activation="silu"),
            [x, w.transpose(-2, -1), offs, bias],
        ),
        "fp8_rowwise": (
            lambda x, w, a, b, o: scaled_grouped_mm(x, w, a, b, offs=o),
            [x8, w8.transpose(-2, -1), sx, sw, offs],
        ),
        "fp8_block_grouped": (
            lambda x, w, a, b, o: scaled_grouped_mm(x, w, a, b, offs=o),
            [xb, wb.transpose(-2, -1), sxb, swb, offs],
        ),
        "blockwise_dense": (lambda a, b, sa, sb: blockwise_mm(a, b, sa, sb), [a8, d8.T, dsa, dsw]),
    }


bad = 0
on0, on1 = inputs("cuda:0"), inputs("cuda:1")
torch.cuda.set_device(0)
for name in on0:
    f, args0 = on0[name]
    _, args1 = on1[name]
    r0 = f(*args0)
    r1 = f(*args1)  # args1 live on cuda:1, cuda:0 current
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)
    second = r1.device.index == 1 and torch.equal(r0, r1.to("cuda:0"))
    # CUDA graph: capture, change the first input in place, replay, compare with eager
    static = [a.clone() for a in args0]
    f(*static)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = f(*static)
    static[0].copy_(torch.flip(args0[0], [0]))
    graph.replay()
    torch.cuda.synchronize()
    graphed = torch.equal(out, f(*static))
    compiled = torch.equal(torch.compile(f, fullgraph=True)(*args0), f(*args0))
    ok = second and graphed and compiled
    bad += not ok
    print(
        f"{'ok ' if ok else 'BAD'} {name}: second GPU {second}, CUDA graph replay {graphed}, torch.compile {compiled}",
        flush=True,
    )
sys.exit(1 if bad else 0)
