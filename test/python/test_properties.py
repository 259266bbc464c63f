"""Runs the Hypothesis property suite (test/property) in a child process.

In a child, an interpreter abort (a C++ exception or assertion escaping into
Python) shows as a death by signal, reported with faulthandler's trace,
instead of taking this test run down with it.
"""

import json
import os
import pathlib
import signal
import subprocess
import sys

import pytest

SUITE = pathlib.Path(__file__).resolve().parents[1] / "property"

pytest.importorskip("hypothesis")


def test_property_suite_never_aborts(tmp_path):
    counts = tmp_path / "counts.json"
    env = dict(os.environ, NVWGMMA_PROPERTY_COUNTS=str(counts))
    env.setdefault("NVWGMMA_HYPOTHESIS_PROFILE", "ci")
    proc = subprocess.run(
        [
            sys.executable,
            "-X",
            "faulthandler",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            # One process: the example counts are gathered in it (the
            # project's addopts would hand the tests to -n workers).
            "-o",
            "addopts=",
            str(SUITE),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=SUITE,
    )
    output = proc.stdout[-6000:] + proc.stderr[-6000:]
    if proc.returncode < 0:
        pytest.fail(
            f"the property suite died of {signal.Signals(-proc.returncode).name}:\n{output}"
        )
    assert proc.returncode == 0, output
    ran = json.loads(counts.read_text())
    print("\nexamples per property:", json.dumps(ran, sort_keys=True))
    assert len(ran) >= 10 and all(n >= 20 for n in ran.values()), ran
