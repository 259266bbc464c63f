"""The hardware suite of docs/validation.md; skips without an sm_90 GPU."""

import os
import subprocess
import sys

import pytest

GPU_DIR = os.path.join(os.path.dirname(__file__), "..", "gpu")


def have_sm90():
    try:
        import cupy

        major = cupy.cuda.Device(0).compute_capability[:1]
        return major == "9"
    except Exception:
        return False


@pytest.mark.gpu
@pytest.mark.ptxas
@pytest.mark.skipif(not have_sm90(), reason="needs cupy and an sm_90 GPU")
def test_hardware_suite(tmp_path):
    ptx_dir = tmp_path / "hw"
    gen = subprocess.run(
        [sys.executable, os.path.join(GPU_DIR, "generate.py"), str(ptx_dir)],
        capture_output=True,
        text=True,
    )
    assert gen.returncode == 0, gen.stderr
    run = subprocess.run(
        [sys.executable, os.path.join(GPU_DIR, "runner.py"), str(ptx_dir), str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert ", 0 failed" in run.stdout


def test_runner_reference_accepts_exact_and_rejects_poison():
    """The runner's own check: a perfect result passes, the poison fails."""
    import numpy as np

    sys.path.insert(0, GPU_DIR)
    import configs
    import runner
    from nvwgmma import layouts as L

    rng = np.random.default_rng(0)
    for cfg in map(configs.with_lattice, configs.CONFIGS):
        inputs, ref = runner.prepare(cfg, rng)
        exact = L.pack_accumulator(L.to_bits(ref, cfg.d_type), cfg.d_type)
        assert runner.check(cfg, exact, ref)[0], cfg.name
        if not cfg.init_d:
            assert not runner.check(cfg, inputs["d"], ref)[0], cfg.name
