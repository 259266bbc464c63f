"""Named kernel variants on named shapes, against torch.matmul, in one
process: each checked against float64 (shapes.py's bound) and rerun bit for
bit, then timed with torch.matmul in shapes.py's short windows, rounds
interleaved. What is tried before the selector takes it
(docs/performance.md and docs/history.md record the numbers, kept or not).

    # here (nvwgmma built): the PTX of one experiment
    python bench/gemm/variants.py generate .device/variants --set rows128
    # on the GPU (torch; no nvwgmma build)
    python bench/gemm/variants.py run .device/variants
"""

from __future__ import annotations

import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

M512 = [(512, 4096, 4096), (512, 4096, 14336), (512, 28672, 4096)]
LARGE = [(2048, 4096, 4096), (4096, 4096, 4096), (8192, 8192, 8192)]
RAGGED = [(1000, 3000, 4096), (200, 4096, 14336), (2048, 1000, 1024)]
GATE_UP = [(128, 28672, 4096), (512, 28672, 4096)]


def experiments() -> dict:
    """name -> (shapes, [(label, GemmConfig)])."""
    from nvwgmma.kernel.gemm import GemmConfig
    from nvwgmma.kernel.gemm.selector import _base, with_tile

    base = _base("bf16", "bf16", "K", "K", (), True)
    narrow = with_tile(base, 128)
    # One warpgroup per 128 rows: two m64 wgmmas per K step on the same B.
    rows = dict(consumer_rows=128)
    split = dict(consumer_rows=128, inflight=1, split_wait=True)
    one = dict(consumers=1, **split)
    return {
        # 128 x 128 tiles where they are one wave (O and down at M = 512).
        "rows128": (
            M512,
            [
                ("128x128 s6, 2 consumers (chosen)", narrow),
                ("128x128, 1 consumer of 128 rows", with_tile(base, 128, consumers=1, **rows)),
                ("  + wait_group 1", with_tile(base, 128, consumers=1, inflight=1, **rows)),
                ("  + split wait", with_tile(base, 128, consumers=1, **split)),
                (
                    "  + split wait, 2x1 cluster",
                    with_tile(base, 128, consumers=1, cluster_m=2, **split),
                ),  # fmt: skip
                (
                    "ping-pong 128x128, split wait",
                    with_tile(base, 128, schedule="pingpong", **split),
                ),
            ],
        ),
        # The wide tile against 128-row consumers at large shapes.
        "large": (
            LARGE,
            [
                ("128x256 s3 (chosen)", with_tile(base, 256)),
                ("256x128, 2 consumers of 128 rows, split wait", with_tile(base, 128, **split)),
                (
                    "ping-pong 128x128, split wait",
                    with_tile(base, 128, schedule="pingpong", **split),
                ),
            ],
        ),
        # Tiles whose width is no multiple of 64 (C staged in 64-byte swizzled
        # blocks): 28672 = 128 x 224, so 128 x 224 tiles fill whole waves
        # where 128 x 256 leave 15 % of the SMs idle in the last.
        "tile224": (
            GATE_UP,
            [
                ("128x256 s3 (chosen at M = 512)", with_tile(base, 256)),
                ("1 consumer of 128 rows (chosen at M = 128)", with_tile(base, 128, **one)),
                ("128x224 s3", with_tile(base, 224)),
                ("128x224 s3, split wait", with_tile(base, 224, inflight=1, split_wait=True)),
            ],
        ),
        # Correctness of widths that are no multiple of 64, on ragged shapes.
        "narrow_n_ragged": (
            RAGGED,
            [
                ("128x224 s3", GemmConfig(tile_n=224)),
                (
                    "128x224 f32 out, 2 chunks",
                    GemmConfig(tile_n=224, out_dtype="f32", epilogue_chunks=2),
                ),
                (
                    "128x160 s4 split-K 2",
                    GemmConfig(tile_n=160, stages=4, scheduler="split_k", splits=2),
                ),
                ("64x96 s8, 1 consumer", GemmConfig(tile_n=96, consumers=1, stages=8)),
                ("128x224 stream-K", GemmConfig(tile_n=224, scheduler="stream_k")),
            ],
        ),
        # Correctness of every 128-row schedule and fix-up on ragged shapes.
        "ragged": (
            RAGGED,
            [
                ("1 consumer of 128 rows", GemmConfig(tile_n=128, consumers=1, stages=6, **rows)),
                (
                    "  split-K 3",
                    GemmConfig(
                        tile_n=128, consumers=1, stages=6, scheduler="split_k", splits=3, **rows
                    ),
                ),  # fmt: skip
                (
                    "256x128 stream-K",
                    GemmConfig(tile_n=128, stages=4, scheduler="stream_k", **rows),
                ),
                (
                    "256x128 split-K 2, split wait",
                    GemmConfig(tile_n=128, stages=4, scheduler="split_k", splits=2, **split),
                ),  # fmt: skip
                (
                    "ping-pong stream-K, split wait",
                    GemmConfig(
                        tile_n=128, stages=6, schedule="pingpong", scheduler="stream_k", **split
                    ),
                ),  # fmt: skip
                (
                    "1 consumer, registers epilogue",
                    GemmConfig(tile_n=128, consumers=1, stages=6, epilogue="registers", **rows),
                ),  # fmt: skip
                (
                    "1 consumer, 2x1 cluster, split wait",
                    GemmConfig(tile_n=128, consumers=1, stages=6, cluster_m=2, **split),
                ),  # fmt: skip
                ("64x128 s8 (rule 4)", GemmConfig(tile_n=128, consumers=1, stages=8)),
            ],
        ),
    }


def generate(out_dir: str, name: str) -> None:
    from nvwgmma.kernel.gemm.launch import kernel_key, write_kernel

    shapes, kernels = experiments()[name]
    plan = {"experiment": name, "shapes": shapes, "kernels": []}
    for label, config in kernels:
        write_kernel(os.path.join(out_dir, "ptx"), config)
        plan["kernels"].append({"label": label, "key": kernel_key(config)})
    with open(os.path.join(out_dir, "plan.json"), "w") as f:
        json.dump(plan, f, indent=1)
    print(name, len(shapes), "shapes,", len(kernels), "kernels")


def run(out_dir: str, rounds: int) -> int:
    import torch
    from run import _gpu_info, _interleaved, failures, write_results
    from shapes import _config_of, bound, launched, problem

    torch.backends.cuda.matmul.allow_tf32 = False
    info = _gpu_info()
    print(info, flush=True)
    plan = json.load(open(os.path.join(out_dir, "plan.json")))
    rows, failed = [], 0
    for m, n, k in plan["shapes"]:
        a, w, check = problem(m, n, k)
        impls = {"torch.matmul": lambda a=a, w=w: torch.matmul(a, w.T)}
        checks = {}
        for kernel in plan["kernels"]:
            meta = json.load(open(os.path.join(out_dir, "ptx", kernel["key"] + ".json")))
            launch, error, same = launched(a, w, _config_of(meta), check, rerun=True)
            ok = error <= bound(k, meta["config"]["out_dtype"]) and same
            failed += not ok
            checks[kernel["label"]] = {"error": error, "rerun_identical": same, "ok": ok}
            impls[kernel["label"]] = launch
        ms, per = _interleaved(impls, rounds=rounds)
        print(f"{m}x{n}x{k}: torch.matmul {ms['torch.matmul'] * 1e3:.1f} us", flush=True)
        for label, r in checks.items():
            # As shapes.py: the median of each round's paired ratio.
            ratio = statistics.median(t / o for o, t in zip(per[label], per["torch.matmul"]))
            r.update(us=ms[label] * 1e3, ratio=ratio)
            print(f"  {'ok ' if r['ok'] else 'BAD'} {label:48s} {r['us']:8.1f} us  {ratio:.3f}x",
                  flush=True)  # fmt: skip
        rows.append({"shape": [m, n, k], "torch_us": ms["torch.matmul"] * 1e3, "kernels": checks})
        write_results(out_dir, "variants-results.json",
                      {"info": info, "experiment": plan["experiment"], "rows": rows})  # fmt: skip
    return failures(failed)


def main(argv=None) -> int:
    from run import mode_parser

    parser = mode_parser(__doc__)
    parser.add_argument("--set", default="rows128", help="generate: the experiment")
    parser.add_argument("--rounds", type=int, default=3, help="run: timing rounds")
    args = parser.parse_args(argv)
    if args.mode == "generate":
        generate(args.dir, args.set)
        return 0
    from shapes import use_kernels

    use_kernels(args.dir)
    return run(args.dir, args.rounds)


if __name__ == "__main__":
    sys.exit(main())
