"""Ask ptxas about every point of the dense wgmma grid; write the verdicts.

    python test/python/regenerate_verdicts.py [--grid dense|sparse] [--ptxas PATH] [--jobs N]

Writes test/python/data/{dense,sparse}_verdicts.json: the ptxas version, the
point count and one bit per point (1 = accepted) in wgmma_grid.points() /
sparse_points() order.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(__file__))
import wgmma_grid  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "data")
GRIDS = {
    "dense": (wgmma_grid.points, wgmma_grid.instruction),
    "sparse": (wgmma_grid.sparse_points, wgmma_grid.sparse_instruction),
}


def compute(grid: str, ptxas: str, jobs: int, batch: int = 2000) -> list[bool]:
    points, instruction = GRIDS[grid]
    lines = [instruction(p) for p in points()]
    chunks = [lines[i : i + batch] for i in range(0, len(lines), batch)]
    with ThreadPoolExecutor(jobs) as pool:
        results = pool.map(lambda c: wgmma_grid.ptxas_verdicts(c, ptxas), chunks)
    return [v for chunk in results for v in chunk]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ptxas", default=shutil.which("ptxas"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--grid", choices=sorted(GRIDS), action="append")
    args = parser.parse_args()
    if not args.ptxas:
        print("ptxas not found", file=sys.stderr)
        return 1
    for grid in args.grid or sorted(GRIDS):
        write(grid, args.ptxas, args.jobs)
    return 0


def write(grid: str, ptxas: str, jobs: int) -> None:
    start = time.time()
    verdicts = compute(grid, ptxas, jobs)
    data = {
        "ptxas": wgmma_grid.ptxas_version(ptxas),
        "ptx_version": wgmma_grid.PTX_VERSION,
        "points": len(verdicts),
        "accepted": sum(verdicts),
        "bits": wgmma_grid.encode_bits(verdicts),
    }
    with open(os.path.join(DATA, f"{grid}_verdicts.json"), "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    print(
        f"{grid}: {data['points']} points, {data['accepted']} accepted by "
        f"{data['ptxas']} in {time.time() - start:.1f}s"
    )


if __name__ == "__main__":
    sys.exit(main())
