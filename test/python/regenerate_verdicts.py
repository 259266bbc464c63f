"""Ask ptxas about every point of the dense wgmma grid; write the verdicts.

    python test/python/regenerate_verdicts.py [--ptxas PATH] [--jobs N]

Writes test/python/data/dense_verdicts.json: the ptxas version, the point
count and one bit per point (1 = accepted) in wgmma_grid.points() order.
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

OUT = os.path.join(os.path.dirname(__file__), "data", "dense_verdicts.json")


def compute(ptxas: str, jobs: int, batch: int = 2000) -> list[bool]:
    lines = [wgmma_grid.instruction(p) for p in wgmma_grid.points()]
    chunks = [lines[i : i + batch] for i in range(0, len(lines), batch)]
    with ThreadPoolExecutor(jobs) as pool:
        results = pool.map(lambda c: wgmma_grid.ptxas_verdicts(c, ptxas), chunks)
    return [v for chunk in results for v in chunk]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ptxas", default=shutil.which("ptxas"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--output", default=OUT)
    args = parser.parse_args()
    if not args.ptxas:
        print("ptxas not found", file=sys.stderr)
        return 1
    start = time.time()
    verdicts = compute(args.ptxas, args.jobs)
    data = {
        "ptxas": wgmma_grid.ptxas_version(args.ptxas),
        "ptx_version": wgmma_grid.PTX_VERSION,
        "points": len(verdicts),
        "accepted": sum(verdicts),
        "bits": wgmma_grid.encode_bits(verdicts),
    }
    with open(args.output, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    print(
        f"{data['points']} points, {data['accepted']} accepted by "
        f"{data['ptxas']} in {time.time() - start:.1f}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
