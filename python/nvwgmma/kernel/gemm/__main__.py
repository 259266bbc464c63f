"""python -m nvwgmma.kernel.gemm: write a GEMM's PTX and launch metadata,
or (--precompile DIR) the PTX of every configuration a shape table needs."""

from __future__ import annotations

import argparse
import json
import sys

from .config import INPUTS, OUTPUTS, GemmConfig
from .kernel import build_gemm


# What `--precompile` writes without a table: every dtype pairing, both
# layouts of each operand (fp8: K-major), the fused Linear epilogues, both
# C paths (16-byte aligned rows: TMA store; others: registers), and a large
# and a small problem (select_config's wide and narrow tile).
def default_table():
    from .fusion import Activation, Bias
    from .launch import Problem

    table = []
    pairs = [("bf16", "bf16"), ("f16", "f16"), ("bf16", "f32"), ("f16", "f32"), ("e4m3", "bf16")]
    chains = [(), (Bias(),), (Bias(), Activation("gelu")), (Bias(), Activation("relu"))]
    for dtype, out in pairs:
        majors = [("K", "K")] if dtype == "e4m3" else [(a, b) for a in "KM" for b in "KN"]
        for a_major, b_major in majors:
            for aligned in (True, False):
                for chain in chains:
                    for m in (4096, 128):
                        table.append(
                            Problem(m, 4096, 4096, 1, dtype, out, a_major, b_major, aligned, chain)
                        )
    return table


def _table(path):
    """Problems from a JSON list of objects with Problem's fields (fusion
    as names: "bias", "gelu", ...)."""
    from .fusion import ACTIVATIONS, Activation, Bias
    from .launch import Problem

    with open(path) as f:
        rows = json.load(f)
    problems = []
    for row in rows:
        chain = tuple(
            Activation(op) if op in ACTIVATIONS else Bias() for op in row.pop("fusion", [])
        )
        problems.append(Problem(**row, fusion=chain))
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m nvwgmma.kernel.gemm",
        description="Write a GEMM's PTX and launch metadata, or precompile a shape table's.",
    )
    parser.add_argument("--dtype", default="bf16", choices=list(INPUTS))
    parser.add_argument("--out-dtype", default="bf16", choices=list(OUTPUTS))
    parser.add_argument("--tile-n", type=int, default=GemmConfig.tile_n)
    parser.add_argument("--consumers", type=int, default=GemmConfig.consumers)
    parser.add_argument("--stages", type=int, default=GemmConfig.stages)
    parser.add_argument("--group-m", type=int, default=GemmConfig.group_m)
    parser.add_argument("--epilogue", default=GemmConfig.epilogue, choices=["registers", "tma"])
    parser.add_argument(
        "--epilogue-chunks",
        type=int,
        default=None,
        help="column chunks of the TMA epilogue (default: 2 for f32 output, else 1)",
    )
    parser.add_argument("--cluster-m", type=int, default=GemmConfig.cluster_m)
    parser.add_argument("--schedule", default="cooperative", choices=["cooperative", "pingpong"])
    parser.add_argument(
        "--scheduler", default="persistent", choices=["persistent", "split_k", "stream_k"]
    )
    parser.add_argument("--splits", type=int, default=1, help="K parts (--scheduler split_k)")
    parser.add_argument("--k-order", default=GemmConfig.k_order, choices=["serpentine", "forward"])
    parser.add_argument("--a-major", default="K", choices=["K", "M"])
    parser.add_argument("--b-major", default="K", choices=["K", "N"])
    parser.add_argument("--ptx", help="PTX output file")
    parser.add_argument("--json", help="launch metadata output file")
    parser.add_argument("--assemble", action="store_true", help="also run ptxas")
    parser.add_argument(
        "--precompile",
        metavar="DIR",
        help="write the PTX matmul needs for --table (default: every dtype, layout and "
        "fused-Linear epilogue) to DIR, for NVWGMMA_PTX_DIR",
    )
    parser.add_argument("--table", help="JSON list of problems (launch.Problem fields)")
    args = parser.parse_args(argv)
    from ...compile import CompileError, compile_to_ptx
    from ...ir import Context

    try:
        if args.precompile:
            from .launch import precompile

            problems = _table(args.table) if args.table else default_table()
            written = precompile(args.precompile, problems)
            print(f"{len(written)} kernels in {args.precompile}")
            return 0
        if not args.ptx:
            parser.error("--ptx (or --precompile) is required")
        fields = ("dtype", "out_dtype", "tile_n", "consumers", "stages", "group_m", "epilogue",
                  "cluster_m", "a_major", "b_major", "schedule", "scheduler", "splits",
                  "k_order")  # fmt: skip
        config = GemmConfig(
            **{name: getattr(args, name) for name in fields},
            epilogue_chunks=args.epilogue_chunks or (2 if args.out_dtype == "f32" else 1),
        )
        with Context():
            module, meta = build_gemm(config)
            ptx = compile_to_ptx(module, assemble=args.assemble)
    except (ValueError, TypeError, CompileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    with open(args.ptx, "w") as f:
        f.write(ptx)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(meta, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
