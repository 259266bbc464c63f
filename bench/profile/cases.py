"""One attention or GEMM case, ours beside the library kernel it is
measured against, inside an NVTX range "profile" -- for Nsight Compute on
the GPU machine:

    ncu --nvtx --nvtx-include "profile/" --section SpeedOfLight \\
        --section WarpStateStats --section SchedulerStats \\
        python bench/profile/cases.py attention .device/attn --d 128 --seq 4096
    ncu ... python bench/profile/cases.py gemm .device/shapes --m 8192 --n 8192 --k 8192
    ncu ... python bench/profile/cases.py gemm .device/prof --m 512 --n 4096 --k 4096 \\
        --variant cluster_m=2

Each kernel runs twice after a warm-up (the PTX comes from the directory
that bench/attention/run.py or bench/gemm/shapes.py generated)."""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))


def attention_case(args):
    import torch
    from nvwgmma.kernel.attention import attention
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    d, s = args.d, args.seq
    q, k, v = (torch.randn(16384 // s, s, 2048 // d, d, device="cuda", dtype=torch.bfloat16)
               for _ in range(3))  # fmt: skip
    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))

    def cudnn():
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            return sdpa(qt, kt, vt, is_causal=args.causal)

    calls = [lambda: attention(q, k, v, causal=args.causal), cudnn]
    if args.flip:  # the default with these bool fields flipped, beside it
        from nvwgmma.kernel.attention import default_config

        base = default_config(d, causal=args.causal)
        flipped = base.replace(**{f: not getattr(base, f) for f in args.flip.split(",")})
        calls.append(lambda: attention(q, k, v, causal=args.causal, config=flipped))
    return calls


def gemm_case(args):
    import torch
    from nvwgmma.kernel.gemm import matmul

    a = torch.randn(args.m, args.k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(args.n, args.k, device="cuda", dtype=torch.bfloat16)
    calls = [lambda: matmul(a, w.t()), lambda: a @ w.t()]
    for variant in args.variant or []:  # the selector's pick with fields replaced
        from nvwgmma.kernel.gemm import select_config
        from nvwgmma.kernel.gemm.config import with_fields

        config = with_fields(select_config(args.m, args.n, args.k), variant)
        calls.append(lambda config=config: matmul(a, w.t(), config=config))
    return calls


def main(argv=None) -> int:
    import torch

    parser = argparse.ArgumentParser(prog="bench/profile/cases.py")
    parser.add_argument("kind", choices=("attention", "gemm"))
    parser.add_argument("ptx_dir")
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--seq", type=int, default=4096)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--flip", help="comma-separated config flags to flip, run as well")
    parser.add_argument("--m", type=int, default=8192)
    parser.add_argument("--n", type=int, default=8192)
    parser.add_argument("--k", type=int, default=8192)
    parser.add_argument("--variant", action="append",
                        help="gemm: also the selector's pick with these fields (a=1,b=x)")  # fmt: skip
    args = parser.parse_args(argv)
    os.environ["NVWGMMA_PTX_DIR"] = args.ptx_dir
    calls = (attention_case if args.kind == "attention" else gemm_case)(args)
    for call in calls:  # warm-up: loads, plans, library heuristics
        call()
    torch.cuda.synchronize()
    with torch.cuda.nvtx.range("profile"):
        for call in calls:
            for _ in range(2):
                call()
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
