"""The differential IR fuzzer's CI smoke run (test/fuzz/fuzz.py, seeded):
no crash, no lowering failure, and every input the verifier accepts
assembles with ptxas (with llc only where ptxas is absent)."""

import json
import pathlib
import shutil
import subprocess
import sys

FUZZ = pathlib.Path(__file__).resolve().parents[1] / "fuzz" / "fuzz.py"


def test_fuzz_smoke(tmp_path):
    report = tmp_path / "report.json"
    command = [
        sys.executable,
        str(FUZZ),
        "--seed",
        "20261121",
        "--count",
        "3000",
        "--jobs",
        "2",
        "--report",
        str(report),
    ]
    if shutil.which("ptxas") is None:
        command.append("--no-ptxas")
    proc = subprocess.run(command, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    counts = json.loads(report.read_text())["counts"]
    print("\nfuzz:", json.dumps(counts, sort_keys=True))
    assert counts["inputs"] == 3000
    assert counts["crashes"] == counts["accepted_not_assemblable"] == 0
    # The grammar must reach both sides of the verifier, and the lowering.
    assert counts["verified"] >= 300 and counts["inputs"] - counts["verified"] >= 300
    assert counts["assembled"] >= 300
