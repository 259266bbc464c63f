"""On-device autotuning for `matmul` (NVWGMMA_AUTOTUNE=1): the first call
of a shape class runs every candidate of `selector.candidates` on the
call's own inputs, keeps those whose output matches the rule's choice (and,
for split-K / stream-K, is bit-identical when run again), and picks the
fastest; the pick is cached by GPU and shape class in memory and in
`$NVWGMMA_CACHE_DIR/autotune.json` (an H100's pick is not an H200's). An unverified configuration is never
picked: a candidate that fails its check (or its launch) drops out.

A shape class: M rounded up to a power of two (decode batches of 100 and
128 tune once), exact N, K and batch, dtypes, layouts, C alignment and the
epilogue chain.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace

__all__ = ["enabled", "shape_class", "tune"]

# GemmConfig fields a tuned pick may change from the rule's choice: every
# field in which the candidates differ (the rest follow from the problem).
TUNED_FIELDS = ("tile_n", "consumers", "consumer_rows", "stages", "inflight", "split_wait",
                "schedule", "scheduler", "splits", "cluster_m")  # fmt: skip
_picked: dict = {}


def enabled() -> bool:
    return os.environ.get("NVWGMMA_AUTOTUNE", "") not in ("", "0")


def shape_class(problem) -> str:
    from .fusion import chain_tag

    m = 1 << max(6, (problem.m - 1).bit_length())
    p = problem
    return (f"m{m}_n{p.n}_k{p.k}_b{p.batch}_{p.dtype}_{p.out_dtype}_{p.a_major}{p.b_major}"
            f"_{'a' if p.c_aligned else 'u'}_{chain_tag(p.fusion) or 'plain'}")  # fmt: skip


def _cache_file() -> str:
    from ..cache import cache_dir

    return os.path.join(cache_dir(), "autotune.json")


def _load() -> dict:
    try:
        with open(_cache_file()) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _store(key: str, fields: dict) -> None:
    table = _load()
    table[key] = fields
    path = _cache_file()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.{os.getpid()}"
    with open(temporary, "w") as f:
        json.dump(table, f, indent=1, sort_keys=True)
    os.replace(temporary, path)  # concurrent tuners never leave a torn file


def tune(problem, chosen, candidates, measure, gpu: str):
    """The configuration for `problem` on `gpu` (runtime.device_name): a
    cached pick for the GPU and the problem's shape class, else the fastest
    of `candidates` (the rule's `chosen` among them) for which
    `measure(config)` returns (milliseconds, verified=True)."""
    key = f"{gpu}: {shape_class(problem)}"
    fields = _picked.get(key) or _load().get(key)
    if fields is not None and set(fields) != set(TUNED_FIELDS):
        fields = None  # stored before a field was tuned: tune again
    if fields is None:
        best, best_ms = chosen, None
        for config in candidates:
            try:
                ms, verified = measure(config)
            except (RuntimeError, ValueError):  # a launch or load failure drops it
                continue
            if verified and (best_ms is None or ms < best_ms):
                best, best_ms = config, ms
        fields = {name: getattr(best, name) for name in TUNED_FIELDS}
        _store(key, fields)
    _picked[key] = fields
    return replace(chosen, **fields)


def measure_on(trial, reference, stream, repeat: int = 10):
    """A `measure` for tune: `trial(config)` gives (launch, out); its output
    is checked against `reference` (the rule's choice's output) and timed
    over `repeat` launches on `stream`."""
    from .. import runtime

    def measure(config):
        launch, out = trial(config)
        launch()
        verified = _close(out, reference)
        if verified and config.scheduler != "persistent":
            first = _copy(out)
            launch()
            verified = _equal(first, out)
        return runtime.elapsed_ms(launch, stream, repeat), verified

    return measure


def _as_float(x):
    if type(x).__module__.split(".")[0] == "torch":
        return x.float()
    return x.astype("float32")


def _copy(x):
    return x.clone() if hasattr(x, "clone") else x.copy()


def _equal(x, y) -> bool:
    return bool((_as_float(x) == _as_float(y)).all())


def _close(x, reference, tolerance: float = 1e-2) -> bool:
    """Relative (Frobenius) difference under `tolerance`: two correct
    kernels differ by their output rounding, a wrong one by O(1)."""
    a, b = _as_float(x), _as_float(reference)
    difference = float(((a - b) ** 2).sum()) ** 0.5
    scale = float((b**2).sum()) ** 0.5
    return difference == difference and difference <= tolerance * max(scale, 1e-30)
