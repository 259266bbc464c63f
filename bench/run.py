"""Compile-time benchmarks: nvwgmma against upstream MLIR 22.1.8.

    python bench/run.py [--sizes 1000 10000 100000] [--repeats 5]

1. Lowering: `nvwgmma-opt --convert-nvwgmma-to-llvm` on generated modules vs
   upstream `mlir-opt --convert-nvvm-to-llvm` on the equivalent nvvm.wgmma
   module (parse + verify + lower + print to /dev/null), alternating runs.
2. Python building: N mma ops with nvwgmma's friendly builder (which also
   verifies each op) vs upstream's generated nvvm.WgmmaMmaAsyncOp builder,
   in one process and one bundled MLIR core, alternating runs.

Prints a markdown table (median seconds, ratio nvwgmma / upstream, cost per
op); no assertions: this is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import modules  # noqa: E402


def tool(name: str) -> str:
    from nvwgmma.tools import find_tool

    here = os.path.join(os.path.dirname(sys.executable), name)
    if name == "nvwgmma-opt" and os.path.exists(here):
        return here
    path = os.environ.get("NVWGMMA_TOOLS_DIR")
    if name == "nvwgmma-opt" and path:
        return os.path.join(path, name)
    found = find_tool(name)
    if not found:
        sys.exit(f"cannot find {name}")
    return found


def timed(argv) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def bench_lowering(sizes, repeats):
    ours, theirs = tool("nvwgmma-opt"), tool("mlir-opt")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            files = {}
            for dialect in ("nvwgmma", "nvvm"):
                files[dialect] = os.path.join(tmp, f"{dialect}_{size}.mlir")
                with open(files[dialect], "w") as f:
                    f.write(modules.generate(size, dialect))
            a = [ours, files["nvwgmma"], "--convert-nvwgmma-to-llvm", "-o", os.devnull]
            b = [theirs, files["nvvm"], "--convert-nvvm-to-llvm", "-o", os.devnull]
            timed(a), timed(b)  # warm the page cache
            ta, tb = [], []
            for _ in range(repeats):
                ta.append(timed(a))
                tb.append(timed(b))
            rows.append((size, statistics.median(ta), statistics.median(tb)))
    return rows


def bench_python(sizes, repeats):
    from nvwgmma import ir
    from nvwgmma.dialects import nvvm
    from nvwgmma.dialects import nvwgmma as wg

    def build(size, which):
        with ir.Context(), ir.Location.unknown():
            module = ir.Module.parse("llvm.func @k(%a: i64, %b: i64) { llvm.return }")
            block = module.body.operations[0].regions[0].blocks[0]
            a, b = block.arguments
            with ir.InsertionPoint(block.operations[0]):
                acc = wg.zero_accumulator("f32", 128)
                start = time.perf_counter()
                if which == "nvwgmma":
                    for _ in range(size):
                        acc = wg.mma_async(
                            acc, a, b, shape=(64, 128, 16), a_type="bf16", d_type="f32"
                        )
                else:
                    shape = ir.Attribute.parse("#nvvm.shape<m = 64, n = 128, k = 16>")
                    for _ in range(size):
                        acc = nvvm.WgmmaMmaAsyncOp(
                            acc.type,
                            acc,
                            a,
                            b,
                            shape,
                            nvvm.WGMMATypes.bf16,
                            nvvm.WGMMATypes.bf16,
                            nvvm.WGMMATypes.f32,
                            nvvm.WGMMAScaleOut.one,
                            nvvm.WGMMAScaleIn.one,
                            nvvm.WGMMAScaleIn.one,
                            nvvm.MMALayout.row,
                            nvvm.MMALayout.col,
                        ).result
                return time.perf_counter() - start

    rows = []
    for size in sizes:
        build(min(size, 100), "nvwgmma"), build(min(size, 100), "nvvm")  # warm up
        ta, tb = [], []
        for _ in range(repeats):
            ta.append(build(size, "nvwgmma"))
            tb.append(build(size, "nvvm"))
        rows.append((size, statistics.median(ta), statistics.median(tb)))
    return rows


def table(title, rows):
    print(f"\n### {title}\n")
    print("| mma ops | nvwgmma (s) | upstream (s) | ratio | nvwgmma µs/op | upstream µs/op |")
    print("|---:|---:|---:|---:|---:|---:|")
    for size, ours, theirs in rows:
        print(
            f"| {size:,} | {ours:.3f} | {theirs:.3f} | {ours / theirs:.2f} | "
            f"{1e6 * ours / size:.1f} | {1e6 * theirs / size:.1f} |"
        )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--python-sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"{time.strftime('%Y-%m-%d')}, median of {args.repeats} alternating runs"
    )
    table("Parse + verify + lower to LLVM dialect", bench_lowering(args.sizes, args.repeats))
    table("Building mma ops from Python", bench_python(args.python_sizes, args.repeats))


if __name__ == "__main__":
    main()
