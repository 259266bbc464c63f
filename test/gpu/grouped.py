"""scheduler.Grouped on the GPU: a grouped GEMM (torch._grouped_mm's 2-D x
3-D form -- tokens sorted by group, one weight matrix per group, ragged
groups) built from the library's kernel with the Grouped scheduler, checked
against float32 per group and timed against torch._grouped_mm. Exits
non-zero on any wrong result.

    # here (nvwgmma built): the PTX
    python test/gpu/grouped.py generate .device/grouped
    # on the GPU (torch, cuda-python; no nvwgmma build)
    python test/gpu/grouped.py run .device/grouped [--out DIR]

Layouts: every group empty, one-row, ragged, skewed (one group with most
tokens), 8 and 128 groups. Writes grouped-results.json.
"""

from __future__ import annotations

import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))

# (label, group row counts, N, K)
CASES = [
    ("empty and one-row groups", [0, 1, 300, 0, 99, 1], 1024, 512),
    ("8 ragged groups", [517, 3, 1000, 250, 0, 64, 128, 900], 4096, 2048),
    ("skewed: one group of most tokens", [4000, 7, 9, 100], 2048, 1024),
    ("128 groups of 16-48 rows", [16 + (g * 7) % 33 for g in range(128)], 768, 2048),
]
EXTRA = (("offs", "!llvm.ptr<1>"), ("groups", "i32"))


def _config():
    from nvwgmma.kernel.gemm import GemmConfig

    return GemmConfig(epilogue="registers")


def _scheduler(config, args, rank):
    from nvwgmma.kernel.gemm.scheduler import Grouped

    return Grouped(config, args["M"], args["N"], args["K"], args["offs"], args["groups"],
                   rank=rank)  # fmt: skip


def _stem():
    from dataclasses import asdict

    from nvwgmma.kernel import cache

    return cache.key("gemm_grouped_" + _config().name, asdict(_config()), sources=[__file__])


def generate(out_dir: str) -> str:
    """Write the grouped kernel's PTX and metadata to `out_dir`."""
    from nvwgmma.kernel import cache
    from nvwgmma.kernel.gemm import build_gemm

    return cache.write(out_dir, _stem(),
                       lambda: build_gemm(_config(), scheduler=_scheduler, extra_params=EXTRA))  # fmt: skip


def run(ptx_dir: str, out_dir: str) -> int:
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    import torch
    from nvwgmma.kernel import runtime

    stem = os.path.join(ptx_dir, _stem())
    with open(stem + ".json") as f:
        meta = json.load(f)
    with open(stem + ".ptx") as f:
        kernel = runtime.Kernel(f.read(), meta["kernel"], dynamic_smem=meta["dynamic_smem"])
    boxes = meta["boxes"]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows, failed = [], 0
    for label, counts, n, k in CASES:
        g = torch.Generator(device="cpu").manual_seed(len(counts) + n + k)
        total = max(1, sum(counts))
        x = torch.randn(total, k, generator=g).to(torch.bfloat16).cuda()
        w = torch.randn(len(counts), n, k, generator=g).to(torch.bfloat16).cuda()
        ends = torch.tensor(counts, dtype=torch.int32).cumsum(0).to(torch.int32).cuda()
        c = torch.full((total, n), float("nan"), dtype=torch.bfloat16, device="cuda")

        def tensor_map(t, sizes, strides, box):
            return runtime.encode_map(t.data_ptr(), box["data_type"], sizes=sizes,
                                      strides=strides, box=(*box["box"], 1),
                                      swizzle=box["swizzle"])  # fmt: skip

        tm_a = tensor_map(x, (k, total, 1), (k * 2, total * k * 2), boxes["A"])
        tm_b = tensor_map(w, (k, n, len(counts)), (k * 2, n * k * 2), boxes["B"])
        args = runtime.named_args(
            meta["signature"], tmA=tm_a, tmB=tm_b, C=c.data_ptr(), tmC=tm_a, M=total, N=n, K=k,
            batch=1, bias=c.data_ptr(), R=c.data_ptr(), alpha=1.0, beta=0.0, scale=1.0,
            workspace=0, flags=0, offs=ends.data_ptr(), groups=len(counts))  # fmt: skip
        launch = kernel.launcher(grid=(sms, 1, 1), block=tuple(meta["block"]), args=args,
                                 stream=torch.cuda.current_stream().cuda_stream)  # fmt: skip
        launch()
        torch.cuda.synchronize()
        errors, start = [], 0
        for group, count in enumerate(counts):
            if count:
                ref = x[start : start + count].float() @ w[group].float().T
                got = c[start : start + count].float()
                errors.append(float((got - ref).norm() / ref.norm()))
            start += count
        untouched = sum(counts) == total or bool(torch.isnan(c[sum(counts) :]).all())
        ok = max(errors) < 1e-2 and untouched and not torch.isnan(c[: sum(counts)]).any()
        failed += not ok
        row = {"label": label, "groups": len(counts), "n": n, "k": k, "tokens": sum(counts),
               "rel_err": max(errors), "ok": ok}  # fmt: skip
        if hasattr(torch, "_grouped_mm") and sum(counts):
            times = {"ours": [], "torch": []}
            calls = {"ours": launch,
                     "torch": lambda x=x, w=w, ends=ends: torch._grouped_mm(
                         x, w.transpose(-2, -1), offs=ends)}  # fmt: skip
            for _ in range(5):
                for name, call in calls.items():
                    call()
                    start_e = torch.cuda.Event(enable_timing=True)
                    end_e = torch.cuda.Event(enable_timing=True)
                    start_e.record()
                    for _ in range(10):
                        call()
                    end_e.record()
                    end_e.synchronize()
                    times[name].append(start_e.elapsed_time(end_e) / 10)
            row["ms"] = {name: statistics.median(t) for name, t in times.items()}
            row["torch_over_ours"] = statistics.median(
                t / o for t, o in zip(times["torch"], times["ours"]))  # fmt: skip
        rows.append(row)
        print(f"{'ok ' if ok else 'BAD'} {row}", flush=True)
    os.makedirs(out_dir, exist_ok=True)
    info = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__}
    with open(os.path.join(out_dir, "grouped-results.json"), "w") as f:
        json.dump({"info": info, "rows": rows}, f, indent=1)
    print(f"{len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


def main(argv=None) -> int:
    from two_step import main as two_step

    return two_step(__doc__, generate, run, argv)


if __name__ == "__main__":
    sys.exit(main())
