"""Which kernel cuBLAS runs for each row of bench/gemm/shapes.py's table:
its name (tile, cluster and split-K are spelled in it), grid, block and
time, from the torch profiler. What we learn from it: the tile shape and
K split cuBLAS's heuristics chose where ours trail.

    # on the GPU (torch only)
    python bench/gemm/cublas_kernels.py          # JSON to $OUT or stdout
    python bench/gemm/cublas_kernels.py decode   # decode sizes, M = 64, M = 777 (bf16)
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _kernels(fn, repeat: int = 3):
    """[{name, grid, block, us}] of the GPU kernels one call of `fn` runs
    (the last of `repeat` calls)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    for _ in range(repeat):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        events = json.load(open(f.name))["traceEvents"]
    found = []
    for e in events:
        if e.get("cat") == "kernel":
            args = e.get("args", {})
            found.append({"name": e["name"], "grid": args.get("grid"),
                          "block": args.get("block"), "us": e.get("dur")})  # fmt: skip
    return found


# Decode layers of the corpus's tuned half (bench/gemm/variants.py's),
# and M = 64 and 777 beside them: where rule 0 and the wide tiles were set.
DECODE = [(1, 5120, 13824), (4, 5120, 13824), (16, 5120, 13824), (1, 28672, 3584),
          (16, 28672, 3584), (4, 256000, 3584), (1, 7168, 5120), (16, 16384, 2048),
          (64, 28672, 3584), (64, 7168, 5120), (777, 5120, 4096)]  # fmt: skip


def main(argv=None) -> int:
    import torch
    from run import _gpu_info
    from shapes import table

    decode = (argv if argv is not None else sys.argv[1:]) == ["decode"]
    result = {"info": _gpu_info(), "rows": []}
    for dtype in ("bf16",) if decode else ("bf16", "e4m3"):
        rows = [(f"M={m}", m, n, k) for m, n, k in DECODE] if decode else table(dtype)
        for label, m, n, k in rows:
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
            if dtype == "e4m3":
                a, w = a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
                one = torch.ones((), device="cuda")

                def call(a=a, w=w, one=one):
                    return torch._scaled_mm(a, w.T, scale_a=one, scale_b=one,
                                            out_dtype=torch.bfloat16, use_fast_accum=True)  # fmt: skip
            else:

                def call(a=a, w=w):
                    return torch.matmul(a, w.T)

            row = {"label": label, "dtype": dtype, "m": m, "n": n, "k": k,
                   "kernels": _kernels(call)}  # fmt: skip
            result["rows"].append(row)
            print(json.dumps(row), flush=True)
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, "cublas-kernels.json"), "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
