"""Runs the lit/FileCheck suite (test/lit) as part of pytest, one case per file.

The tools are found as lit.cfg.py describes (next to this Python, i.e. the
installed package); set NVWGMMA_TOOLS_DIR to test a CMake build tree instead.
"""

import os
import pathlib
import subprocess
import sys

import pytest

LIT_ROOT = pathlib.Path(__file__).resolve().parents[1] / "lit"
FILES = sorted(
    p.relative_to(LIT_ROOT).as_posix()
    for p in LIT_ROOT.rglob("*.mlir")
    if "Inputs" not in p.parts and "Output" not in p.parts
)


@pytest.mark.parametrize("path", FILES)
def test_lit(path):
    # PyPI lit has no __main__; call its entry point directly.
    command = [
        sys.executable,
        "-c",
        "from lit.main import main; main()",
        "-v",
        str(LIT_ROOT / path),
    ]
    tools = os.environ.get("NVWGMMA_TOOLS_DIR")
    if tools:
        command += ["--param", f"nvwgmma_tools_dir={tools}"]
    proc = subprocess.run(command, capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    if "Unsupported: 1" in output or "UNSUPPORTED:" in output:
        pytest.skip("lit marks it unsupported here (e.g. ptxas is absent)")
    assert proc.returncode == 0, output
    assert "Passed: 1" in output, output
