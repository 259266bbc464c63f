"""CI smoke over the checker's corpus (test/corpus): every correct kernel
checks clean at every depth of upstream's lowering (strict mode only says
what it could not prove), every seeded bug is caught wherever the IR can
show it, and nothing crashes."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import pytest

# Loaded by path: test/corpus on sys.path would make its triton/ folder the
# package `triton` for every later import (torch._dynamo's among them).
CORPUS = pathlib.Path(__file__).resolve().parents[1] / "corpus"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, CORPUS / f"{name}.py")
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


corpus = _load("corpus")

KERNELS = [p.stem for p in corpus.KERNELS]


@pytest.fixture(autouse=True)
def corpus_uses_the_tool_under_test(nvwgmma_opt, monkeypatch):
    monkeypatch.setattr(corpus, "nvwgmma_opt", lambda: nvwgmma_opt)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("depth", list(corpus.DEPTHS))
def test_correct_kernel_is_clean(kernel, depth):
    text = corpus.lower((corpus.HERE / "kernels" / f"{kernel}.mlir").read_text(), depth)
    normal = corpus.check(text, strict=False)
    assert not normal["crashed"] and normal["labels"] == [], normal["stderr"]
    strict = corpus.check(text, strict=True)
    assert not strict["crashed"], strict["stderr"]
    assert all(label.endswith(", strict") for label in strict["labels"]), strict["stderr"]


MUTANTS = [(k, m[0]) for k in KERNELS for m in corpus.MUTATIONS.get(k, [])]


@pytest.mark.parametrize("kernel,mutation", MUTANTS)
def test_seeded_bug_is_caught_at_every_depth(kernel, mutation):
    (edits, label) = next((m[2], m[3]) for m in corpus.MUTATIONS[kernel] if m[0] == mutation)
    mutant = corpus.mutate((corpus.HERE / "kernels" / f"{kernel}.mlir").read_text(), edits)
    for depth in corpus.DEPTHS:
        text = corpus.lower(mutant, depth)
        normal = corpus.check(text, strict=False)
        assert not normal["crashed"], (depth, normal["stderr"])
        # Below the nvgpu level the boxes are not in the IR, but a count
        # below what the mma_async read from the stage is still caught.
        assert label in normal["labels"], (depth, normal["stderr"])


def test_every_kernel_has_mutations():
    assert set(corpus.MUTATIONS) == set(KERNELS)


TRITON = [p.stem for p in corpus.TRITON]


@pytest.mark.parametrize("kernel", TRITON)
def test_triton_kernel_is_clean(kernel):
    text = (corpus.HERE / "triton" / f"{kernel}.mlir").read_text()
    normal = corpus.check(text, strict=False)
    assert not normal["crashed"] and normal["labels"] == [], normal["stderr"]
    # Triton builds its tensor maps in the kernel: the byte counts are in the
    # IR, so strict mode has nothing left to say either.
    strict = corpus.check(text, strict=True)
    assert strict["labels"] == [], strict["stderr"]


TRITON_MUTANTS = [(k, m[0]) for k in TRITON for m in corpus.TRITON_MUTATIONS.get(k, [])]


@pytest.mark.parametrize("kernel,mutation", TRITON_MUTANTS)
def test_triton_seeded_bug_is_caught(kernel, mutation):
    edit, label = next((m[2], m[3]) for m in corpus.TRITON_MUTATIONS[kernel] if m[0] == mutation)
    text = edit((corpus.HERE / "triton" / f"{kernel}.mlir").read_text())
    result = corpus.check(text, strict=False)
    assert not result["crashed"] and label in result["labels"], result["stderr"]


def test_random_mutants_never_crash_the_checker():
    long_run = _load("long_run")

    totals = long_run.run(count=3, seed=1)
    assert totals["mutants"] == 3 * (len(corpus.KERNELS) * len(corpus.DEPTHS) + len(corpus.TRITON))
    assert totals["crashes"] == 0
    assert totals["checked"] > 0


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("depth", ["nvvm-scf", "nvvm-cf"])
def test_raise_then_lower_gives_upstream_lowering_back(kernel, depth):
    """--nvwgmma-raise-nvvm then --convert-nvwgmma-to-nvvm on every corpus
    kernel as upstream lowered it: the same text, byte for byte."""
    import subprocess

    text = corpus.lower((corpus.HERE / "kernels" / f"{kernel}.mlir").read_text(), depth)
    raised = subprocess.run(
        [corpus.nvwgmma_opt(), "-", "--nvwgmma-raise-nvvm"],
        input=text,
        capture_output=True,
        text=True,
    )
    assert raised.returncode == 0, raised.stderr
    assert "nvvm.wgmma.mma_async" not in raised.stdout
    assert "nvwgmma.mma_async" in raised.stdout
    back = subprocess.run(
        [corpus.nvwgmma_opt(), "-", "--convert-nvwgmma-to-nvvm"],
        input=raised.stdout,
        capture_output=True,
        text=True,
    )
    assert back.returncode == 0, back.stderr
    assert back.stdout == text
