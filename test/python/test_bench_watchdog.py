"""bench/gemm/run.py's watchdog: a run whose kernel never completes names
it and ends, instead of stalling until the device call's limit."""

import pathlib
import subprocess
import sys

GEMM = pathlib.Path(__file__).parents[2] / "bench" / "gemm"


def _run(body: str) -> subprocess.CompletedProcess:
    script = f"import sys, time; sys.path.insert(0, {str(GEMM)!r}); from run import watchdog\n"
    return subprocess.run([sys.executable, "-c", script + body], capture_output=True,
                          text=True, timeout=60)  # fmt: skip


def test_a_block_past_its_time_is_named_and_ends_the_process():
    done = _run("with watchdog('kernel k at M=1', 0.2):\n    time.sleep(30)\nprint('after')")
    assert done.returncode == 3
    assert done.stdout == "hung: kernel k at M=1 (over 0.2 s)\n"


def test_a_block_inside_its_time_runs_on():
    done = _run("with watchdog('k', 5):\n    time.sleep(0.05)\ntime.sleep(0.3)\nprint('after')")
    assert done.returncode == 0
    assert done.stdout == "after\n"
