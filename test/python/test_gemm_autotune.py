"""NVWGMMA_AUTOTUNE's choice among candidates: the fastest verified one,
never an unverified or failing one, cached by GPU and shape class in memory
and on disk (measure is faked: the GPU side is bench/gemm's)."""

import json

import pytest


@pytest.fixture
def tuner(tmp_path, monkeypatch):
    from nvwgmma.kernel.gemm import autotune

    monkeypatch.setenv("NVWGMMA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(autotune, "_picked", {})
    return autotune


H100, H200 = "NVIDIA H100 80GB HBM3 (132 SMs)", "NVIDIA H200 (132 SMs)"


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

    picked = tuner.tune(p, found[0], found, measure, H100)
    assert picked == found[2]
    assert len(calls) == len(found)
    stored = json.loads((tmp_path / "autotune.json").read_text())
    assert stored[f"{H100}: {tuner.shape_class(p)}"]["tile_n"] == found[2].tile_n
    # The same shape class again: no measuring, from memory then from disk.
    assert tuner.tune(_problem(m=100), found[0], found, lambda c: pytest.fail(), H100) == found[2]
    tuner._picked.clear()
    assert tuner.tune(p, found[0], found, lambda c: pytest.fail(), H100) == found[2]
    # Another GPU tunes the same shape class again.
    assert tuner.tune(p, found[0], found, lambda c: (1.0, True), H200) == found[0]
    assert len(json.loads((tmp_path / "autotune.json").read_text())) == 2


def test_a_pick_is_the_candidate_whatever_the_rule_chose(tuner, tmp_path):
    """Rule 3's choice (one consumer of 128 rows, split wait) tuned to the
    plain 128 x 256 tile is exactly that candidate, not a mix of the two;
    a pick stored before a field was tuned is tuned again."""
    from nvwgmma.kernel.gemm.config import check_config

    p = _problem(m=512, n=4096, k=4096)
    found = _candidates(p)
    assert (found[0].consumer_rows, found[0].split_wait) == (128, True)
    wide = next(c for c in found if c.tile_n == 256 and c.scheduler == "persistent")
    picked = tuner.tune(p, found[0], found, lambda c: (0.1 if c == wide else 1.0, True), H100)
    assert check_config(picked) == wide
    stale = {f"{H100}: {tuner.shape_class(p)}": {"tile_n": 256}}
    (tmp_path / "autotune.json").write_text(json.dumps(stale))
    tuner._picked.clear()
    again = tuner.tune(p, found[0], found, lambda c: (0.1 if c == wide else 1.0, True), H100)
    assert again == wide


def test_nothing_verified_keeps_the_rule(tuner):
    p = _problem()
    found = _candidates(p)
    assert tuner.tune(p, found[0], found, lambda c: (0.1, False), H100) == found[0]


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
