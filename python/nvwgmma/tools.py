"""Locate the external tools a compilation needs.

`mlir-translate` and `llc` come from the MLIR/LLVM wheels nvwgmma depends on
(installed under site-packages/{mlir,llvm}/bin); `ptxas` from the CUDA
toolkit or NVIDIA's nvcc wheel, found on PATH; `nvdisasm` (the tests read
SASS with it) from the toolkit or NVIDIA's nvdisasm wheel (nvidia/cu13/bin).
"""

from __future__ import annotations

import os
import shutil
import sys

__all__ = ["find_tool", "require_tool"]

_WHEEL_PACKAGE = {
    "mlir-translate": "mlir",
    "mlir-opt": "mlir",
    "mlir-runner": "mlir",
    "llc": "llvm",
    "nvdisasm": os.path.join("nvidia", "cu13"),
}


def find_tool(name: str) -> str | None:
    """Absolute path of `name`, or None when it cannot be found.

    The environment variable NVWGMMA_<NAME> (upper case, '-' as '_') wins,
    then the wheels' bin folders, then PATH.
    """
    override = os.environ.get("NVWGMMA_" + name.upper().replace("-", "_"))
    if override:
        return override
    package = _WHEEL_PACKAGE.get(name)
    if package:
        for entry in sys.path:
            candidate = os.path.join(entry or ".", package, "bin", name)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    return shutil.which(name)


def require_tool(name: str) -> str:
    """Like find_tool, but raises a FileNotFoundError that says how to fix it."""
    path = find_tool(name)
    if path is None:
        hint = {
            "ptxas": "install the CUDA toolkit or NVIDIA's nvcc wheel so that ptxas is on PATH",
        }.get(name, "reinstall nvwgmma so its MLIR/LLVM tool wheels are present")
        raise FileNotFoundError(f"cannot find '{name}': {hint}")
    return path
