"""Generate the PTX of every hardware configuration (run here, not on the GPU).

    PYTHONPATH=<nvwgmma package> python test/gpu/generate.py OUT_DIR

Writes OUT_DIR/<config>.ptx, runs `ptxas -v -arch=sm_90a` on each (recording
any "wgmma ... serialized" warning) and OUT_DIR/manifest.json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))

import configs  # noqa: E402
import kernels  # noqa: E402


def main(out_dir: str) -> int:
    from nvwgmma import ir
    from nvwgmma.tools import require_tool

    os.makedirs(out_dir, exist_ok=True)
    ptxas = require_tool("ptxas")
    manifest = []
    for cfg in map(configs.with_lattice, configs.CONFIGS):
        with ir.Context(), ir.Location.unknown():
            ptx = kernels.compile_config(cfg)
        path = os.path.join(out_dir, cfg.name + ".ptx")
        with open(path, "w") as f:
            f.write(ptx)
        proc = subprocess.run(
            [ptxas, "-v", "-arch=sm_90a", path, "-o", os.devnull], capture_output=True, text=True
        )
        if proc.returncode:
            print(f"{cfg.name}: ptxas failed\n{proc.stderr}", file=sys.stderr)
            return 1
        warnings = [line for line in proc.stderr.splitlines() if "warning" in line.lower()]
        serialized = [line for line in warnings if "serialized" in line.lower()]
        manifest.append(
            {
                "name": cfg.name,
                "config": cfg.to_dict(),
                "ptx": cfg.name + ".ptx",
                "ptxas_warnings": warnings,
                "serialized": bool(serialized),
            }
        )
        print(f"{cfg.name}: ok{' (serialized)' if serialized else ''}")
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(
            {
                "ptxas": subprocess.run([ptxas, "--version"], capture_output=True, text=True)
                .stdout.strip()
                .splitlines()[-1],
                "kernels": manifest,
            },
            f,
            indent=1,
        )
    print(f"{len(manifest)} kernels written to {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ".device/hw"))
