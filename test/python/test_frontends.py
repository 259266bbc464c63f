"""The protocol checker on other front ends' IR (test/frontends): every
correct kernel is free of errors, every seeded bug outside the recorded
misses is caught (and the recorded misses are still missed, so the list
stays true), no pass aborts on any kernel or mutant, and every kernel whose
pipeline rules could not all be related says so."""

from __future__ import annotations

import concurrent.futures
import importlib.util
import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parents[1] / "frontends"


def _load():
    spec = importlib.util.spec_from_file_location("frontends_corpus", HERE / "corpus.py")
    module = sys.modules["frontends_corpus"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


corpus = _load()

# Seeded bugs the checker does not catch yet, each with why. The list is
# asserted both ways: a new miss fails, and so does a miss that got caught.
KNOWN_MISSES: dict[str, str] = {}


def _id(r):
    return f"{r['source']}/{r['mutant']['id']}" if r["mutant"] else f"{r['source']}/{r['kernel']}"


def test_every_kernel_has_a_family_and_both_halves_have_kernels():
    halves = {c["half"] for c in corpus.cases() if c["mutant"] is None}
    assert halves == {"tune", "held-out"}


def test_checker_on_every_front_end(nvwgmma_opt, monkeypatch):
    """One pass over the corpus (it is the slow part), three outcomes."""
    monkeypatch.setattr(corpus, "tool", lambda: nvwgmma_opt)
    results = corpus.run_all()
    halves = corpus.summary(results).values()
    # Correct kernels: no errors, but for the known findings, exactly theirs.
    assert [f for h in halves for f in h["flagged"]] == []
    findings = {_id(r) for r in results if r["mutant"] is None and r["finding"]}
    assert len(findings) == 4 and sum(len(h["findings"]) for h in halves) == 4
    # Seeded bugs: caught, but for the recorded misses, which stay missed.
    missed = {m for h in halves for m in h["missed"]}
    assert missed - set(KNOWN_MISSES) == set(), "newly missed"
    assert set(KNOWN_MISSES) - missed == set(), "now caught: drop from KNOWN_MISSES"
    # The normal-mode warning and the strict-mode errors tell the same story.
    for r in results:
        if r["mutant"] is None:
            assert r["normal"]["unchecked"] == ("strict)" in r["strict"]["stderr"]), _id(r)


PASSES = [
    "--nvwgmma-insert-synchronization",
    "--nvwgmma-verify-inline-asm",
    "--nvwgmma-check-target",
    "--nvwgmma-print-ptx",
    "--nvwgmma-raise-nvvm",
    "--convert-nvwgmma-to-nvvm",
    "--convert-nvwgmma-to-llvm",
    "--nvwgmma-legalize-math",
]


def test_no_pass_aborts(nvwgmma_opt, monkeypatch):
    """Every pass over every correct kernel; the repairing pass over every
    mutant too. A pass may fail with a diagnostic, never abort."""
    monkeypatch.setattr(corpus, "tool", lambda: nvwgmma_opt)
    jobs = []
    for case in corpus.cases():
        text = corpus.read(case["path"])
        if case["mutant"] is None:
            jobs += [(text, p) for p in PASSES]
        else:
            jobs.append((corpus.apply(text, case["mutant"]["edits"]), PASSES[0]))

    def run(job):
        text, flag = job
        return flag, corpus.aborted(corpus.run(text, flag))

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        aborted = [flag for flag, bad in pool.map(run, jobs) if bad]
    assert aborted == []
