"""The pipeline rules of --nvwgmma-check-protocol (protocol_c6..c9) on the
kernels the repository ships: no false alarm on any correct one, even in
strict mode, and the seeded races of the issue caught on the real GEMM, with
short diagnostics."""

import functools
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "test" / "gpu"))


def check(module, strict=True):
    from nvwgmma.passmanager import PassManager

    option = "true" if strict else "false"
    PassManager.parse(f"builtin.module(nvwgmma-check-protocol{{strict={option}}})").run(
        module.operation
    )


def gemm_text(**overrides):
    from nvwgmma import ir
    from nvwgmma.kernel.gemm import GemmConfig, build_gemm

    with ir.Context(), ir.Location.unknown():
        module, _ = build_gemm(GemmConfig(dtype="bf16", out_dtype="bf16", **overrides))
        return str(module)


@pytest.fixture
def opt(nvwgmma_opt):
    return functools.partial(run_opt, nvwgmma_opt)


def run_opt(tool, text, *args):
    return subprocess.run(
        [tool, "-", *args, "-o", os.devnull],
        input=text,
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize("out_type", ["f32", "bf16", "bf16-tma"])
def test_tutorial_kernels_pass_strict(out_type):
    from test_kernels_doc import run_doc

    ns = run_doc(out_type)
    with ns["ctx"]:
        for name in ("module", "module2"):
            assert "nvwgmma.mma_async" in str(ns[name])
            check(ns[name])


def test_gemm_configurations_pass_strict():
    from nvwgmma import ir
    from nvwgmma.kernel.gemm import ABLATIONS, SHIPPED, build_gemm

    for config in [*SHIPPED, *ABLATIONS.values()]:
        with ir.Context(), ir.Location.unknown():
            module, _ = build_gemm(config)
            check(module)


def test_hardware_validation_kernels_pass_strict():
    import configs
    import kernels
    from nvwgmma import ir

    checked = 0
    for cfg in map(configs.with_lattice, configs.CONFIGS):
        with ir.Context(), ir.Location.unknown():
            check(kernels.build_module(cfg))
            checked += 1
    assert checked == len(configs.CONFIGS) >= 100


def mutate(text, old, new, count=1):
    assert text.count(old) == count, old
    return text.replace(old, new)


def drop_consumer_wait(text):
    """The consumer's wait on the full barrier (the one right before the fence)."""
    out, n = re.subn(r"\n *nvvm\.mbarrier\.try_wait\.parity [^\n]*(?=\n *nvwgmma\.fence)", "", text)
    assert n == 1
    return out


def producer_waits_round_parity(text):
    """The producer's empty-barrier wait on the round's parity, not its complement."""
    match = re.search(
        r"(%\d+) = arith\.xori (%\d+), %\d+ : i32\n(?:.*\n){0,2}?"
        r" *nvvm\.mbarrier\.try_wait\.parity %\d+, \1,",
        text,
    )
    assert match
    wait = match.group(0)
    return text.replace(wait, wait[: wait.rindex(match.group(1))] + match.group(2) + ",")


# The seeded races of the issue, on the shipped GEMM's IR.
@pytest.mark.parametrize(
    "inflight,mutation,label",
    [
        (1, lambda t: mutate(t, "nvwgmma.wait_group 1\n", "nvwgmma.wait_group 3\n"), "protocol_c7"),
        (1, lambda t: mutate(t, "nvwgmma.wait_group 1\n", "nvwgmma.wait_group 2\n"), "protocol_c7"),
        (0, drop_consumer_wait, "protocol_c6"),
        (
            0,
            lambda t: mutate(t, "constant(49152 : i32) : i32", "constant(32768 : i32) : i32"),
            "protocol_c8",
        ),
        (0, producer_waits_round_parity, "protocol_c9"),
    ],
    ids=["wait3-release1", "wait2-release1", "no-full-wait", "expect-tx", "producer-parity"],
)
def test_gemm_mutation_is_caught_with_a_short_diagnostic(opt, inflight, mutation, label):
    text = gemm_text(inflight=inflight)
    assert opt(text, "--nvwgmma-check-protocol").returncode == 0
    proc = opt(mutation(text), "--nvwgmma-check-protocol")
    assert proc.returncode != 0 and f"({label})" in proc.stderr
    # The error and its notes name the op and the rule, not the 128-member
    # accumulator (the source lines echoed under them are the input's own).
    messages = [line for line in proc.stderr.splitlines() if re.match(r"<stdin>:\d+:\d+: ", line)]
    assert messages and all("!llvm.struct" not in m and len(m) < 400 for m in messages)
    assert re.search(r"error: '[a-z._]+' ", messages[0])


def test_release_before_wait_in_the_gemm_is_caught(opt):
    text = gemm_text(inflight=0)
    # Move the release (the scf.if right after wait_group 0, which carries
    # the accumulators) before the wait.
    match = re.search(
        r"( +)(%\S+ = nvwgmma\.wait_group 0 \([^\n]*\)\n)(\1scf\.if %\d+ \{\n.*?\n\1\}\n)",
        text,
        re.S,
    )
    assert match and "nvvm.mbarrier.arrive" in match.group(3)
    moved = text.replace(match.group(0), match.group(3) + match.group(1) + match.group(2))
    proc = opt(moved, "--nvwgmma-check-protocol")
    assert (
        "(protocol_c7)" in proc.stderr and "released while that group may be pending" in proc.stderr
    )


def test_insert_synchronization_does_not_serialise_a_race(opt):
    text = mutate(gemm_text(inflight=1), "nvwgmma.wait_group 1\n", "nvwgmma.wait_group 3\n")
    proc = opt(text, "--nvwgmma-insert-synchronization")
    assert proc.returncode != 0 and "(protocol_c7)" in proc.stderr


def test_ring_load_records_the_box_bytes(ctx):
    from nvwgmma import ir
    from nvwgmma.kernel.gemm import GemmConfig, build_gemm

    module, meta = build_gemm(GemmConfig(dtype="bf16", out_dtype="bf16"))
    boxes = meta["boxes"]
    found = re.findall(r"nvwgmma\.tx_bytes = (\d+) : i64", str(module))
    assert [int(b) for b in found] == [boxes["A"]["bytes"], boxes["B"]["bytes"]]
    assert isinstance(module, ir.Module)


def test_mutated_pipelines_never_crash_the_checker(opt):
    """Deleting, duplicating or swapping lines of the correct pipelines gives
    IR that fails to parse or verify, or that the checker accepts or
    rejects -- never a crash (exit code above 1), in strict mode or not."""
    import random

    source = (ROOT / "test/lit/Transforms/nvwgmma-check-protocol/pipeline-valid.mlir").read_text()
    kernels = [k for k in source.split("// -----") if "func.func" in k]
    rng = random.Random(20261122)
    outcomes = {0: 0, 1: 0}
    for i in range(240):
        lines = rng.choice(kernels).splitlines()
        body = [n for n, line in enumerate(lines) if line.startswith("  ")]
        a, b = rng.sample(body, 2)
        kind = i % 3
        if kind == 0:
            del lines[a]
        elif kind == 1:
            lines.insert(b, lines[a])
        else:
            lines[a], lines[b] = lines[b], lines[a]
        args = ["--nvwgmma-check-protocol=strict=true"] if i % 2 else ["--nvwgmma-check-protocol"]
        proc = opt("\n".join(lines), *args)
        assert proc.returncode in (0, 1), (proc.returncode, proc.stderr[-2000:])
        outcomes[proc.returncode] += 1
    assert outcomes[0] and outcomes[1]
