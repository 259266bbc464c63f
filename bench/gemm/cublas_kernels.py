"""Which kernel cuBLAS runs for each row of bench/gemm/shapes.py's table:
its name (tile, cluster and split-K are spelled in it), grid, block and
time, from the torch profiler. What we learn from it: the tile shape and
K split cuBLAS's heuristics chose where ours trail.

    # on the GPU (torch only)
    python bench/gemm/cublas_kernels.py          # JSON to $OUT or stdout
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


def main() -> int:
    import torch
    from run import _gpu_info
    from shapes import table

    result = {"info": _gpu_info(), "rows": []}
    for dtype in ("bf16", "e4m3"):
        for label, m, n, k in table(dtype):
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
