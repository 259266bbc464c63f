"""NVWGMMA_AUTOTUNE's choice among candidates: the fastest verified one,
never an unverified or failing one, cached by shape class in memory and on
disk (measure is faked: the GPU side is bench/gemm's)."""

import json

import pytest


@pytest.fixture
def tuner(tmp_path, monkeypatch):
    from nvwgmma.kernel.gemm import autotune

    monkeypatch.setenv("NVWGMMA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(autotune, "_picked", {})
    return autotune


def _problem(m=128, n=4096, k=14336):
    from nvwgmma.kernel.gemm.launch import Problem

    return Problem.of(m, n, k, 1, "bf16", "bf16", "K", "K")


def _candidates(p):
    from nvwgmma.kernel.gemm import candidates

    return candidates(p.m, p.n, p.k)


def test_picks_the_fastest_verified_candidate(tuner, tmp_path):
    p = _problem()
    found = _candidates(p)
    times = {c: 1.0 + i for i, c in enumerate(found)}
    fastest = found[-1]
    times[fastest] = 0.1  # fastest, but wrong
    times[found[2]] = 0.5
    calls = []

    def measure(config):
        calls.append(config)
        if config == found[1]:
            raise RuntimeError("cuLaunchKernel failed")
        return times[config], config != fastest

    picked = tuner.tune(p, found[0], found, measure)
    assert picked == found[2]
    assert len(calls) == len(found)
    stored = json.loads((tmp_path / "autotune.json").read_text())
    assert stored[tuner.shape_class(p)]["tile_n"] == found[2].tile_n
    # The same shape class again: no measuring, from memory then from disk.
    assert tuner.tune(_problem(m=100), found[0], found, lambda c: pytest.fail()) == found[2]
    tuner._picked.clear()
    assert tuner.tune(p, found[0], found, lambda c: pytest.fail()) == found[2]


def test_nothing_verified_keeps_the_rule(tuner):
    p = _problem()
    found = _candidates(p)
    assert tuner.tune(p, found[0], found, lambda c: (0.1, False)) == found[0]


def test_shape_classes_round_m_up():
    from nvwgmma.kernel.gemm.autotune import shape_class

    assert shape_class(_problem(m=100)) == shape_class(_problem(m=128))
    assert shape_class(_problem(m=129)) != shape_class(_problem(m=128))
    assert shape_class(_problem(m=1)) == shape_class(_problem(m=64))
    assert shape_class(_problem(k=4096)) != shape_class(_problem())


def test_enabled_by_the_environment(monkeypatch):
    from nvwgmma.kernel.gemm import autotune

    monkeypatch.delenv("NVWGMMA_AUTOTUNE", raising=False)
    assert not autotune.enabled()
    monkeypatch.setenv("NVWGMMA_AUTOTUNE", "0")
    assert not autotune.enabled()
    monkeypatch.setenv("NVWGMMA_AUTOTUNE", "1")
    assert autotune.enabled()


def test_outputs_are_checked_against_the_reference():
    import numpy as np
    from nvwgmma.kernel.gemm.autotune import _close, _equal

    ref = np.ones((4, 4), dtype=np.float32)
    assert _close(ref + 1e-4, ref) and not _close(ref * 2, ref)
    assert not _close(ref * np.nan, ref)
    assert _equal(ref, ref.copy()) and not _equal(ref, ref + 1e-7 * 8)
