"""The checker's corpus: kernels in upstream's nvgpu dialect, lowered the way
upstream's GPU pipeline lowers them, at every depth, each with seeded bugs.

Depths (each upstream's own passes, run through nvwgmma-opt, which is
mlir-opt 22 plus nvwgmma):
  nvgpu     the source: nvgpu.warpgroup.mma, nvgpu.tma.async.load, nvgpu.mbarrier.*
  nvvm-scf  --convert-nvgpu-to-nvvm --canonicalize: nvvm ops, scf loops
  nvvm-cf   then --convert-scf-to-cf: natural CFG loops
  asm       then --convert-nvvm-to-llvm: wgmma.mma_async and try_wait.parity as inline PTX

`python test/corpus/corpus.py` prints the table of the closing note (kernel x
depth x {normal, strict}, and each mutation: caught or not); test_corpus.py
asserts it. Needs only nvwgmma-opt (NVWGMMA_TOOLS_DIR or next to Python).
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
KERNELS = sorted((HERE / "kernels").glob("*.mlir"))

DEPTHS = {
    "nvgpu": [],
    "nvvm-scf": ["--convert-nvgpu-to-nvvm", "--canonicalize"],
    "nvvm-cf": ["--convert-nvgpu-to-nvvm", "--canonicalize", "--convert-scf-to-cf"],
    "asm": [
        "--convert-nvgpu-to-nvvm",
        "--canonicalize",
        "--convert-scf-to-cf",
        "--convert-nvvm-to-llvm",
    ],
}

FULL_WAIT = "nvgpu.mbarrier.try_wait.parity %full[%s], %parity, %ticks : !full\n"
RING2_WAIT = "nvgpu.mbarrier.try_wait.parity %bars[%s], %parity, %ticks : !barriers\n"
FLIP = "%parity = arith.index_cast %bit : index to i1"
FLIPPED = "%p0 = arith.index_cast %bit : index to i1\n      %parity = arith.xori %p0, %true : i1"
RELEASE = """      %notFirst = arith.cmpi ne, %k, %c0 : index
      scf.if %notFirst {
        %atZero = arith.cmpi eq, %s, %c0 : index
        %sMinus1 = arith.subi %s, %c1 : index
        %prev = arith.select %atZero, %c2, %sMinus1 : index
        %t = nvgpu.mbarrier.arrive %empty[%prev] : !full -> !nvgpu.mbarrier.token
      }
"""

# kernel -> [(mutation, bug kind, [(old, new)], label)]
MUTATIONS = {
    "ring2_gemm": [
        ("no_full_wait", "missing wait", [("    " + RING2_WAIT, "")], "protocol_c6"),
        (
            "wait_group_1",
            "stage reuse",
            [
                (
                    "nvvm.wgmma.wait.group.sync.aligned 0\n    scf.yield",
                    "nvvm.wgmma.wait.group.sync.aligned 1\n    scf.yield",
                )
            ],
            "protocol_c7",
        ),
        (
            "flipped_parity",
            "parity",
            [
                (
                    FLIP,
                    FLIPPED.replace(
                        "      %parity", "    %true = arith.constant true\n    %parity"
                    ),
                )
            ],
            "protocol_c9",
        ),
        (
            "wrong_expect_tx",
            "expect_tx",
            [("expect_tx %bars[%ns], %c32768", "expect_tx %bars[%ns], %c16384")],
            "protocol_c8",
        ),
    ],
    "ws3_gemm": [
        ("no_full_wait", "missing wait", [("      " + FULL_WAIT, "")], "protocol_c6"),
        (
            # warpgroup.mma waits itself (waitGroup, 1 by default): deepen both.
            "wait_group_2",
            "stage reuse",
            [
                ("{transposeB}", "{transposeB, waitGroup = 2 : i64}"),
                ("nvvm.wgmma.wait.group.sync.aligned 1", "nvvm.wgmma.wait.group.sync.aligned 2"),
            ],
            "protocol_c7",
        ),
        (
            "release_before_wait",
            "stage reuse",
            [
                (RELEASE, ""),
                ("      %d = nvgpu.warpgroup.mma", RELEASE + "      %d = nvgpu.warpgroup.mma"),
            ],
            "protocol_c7",
        ),
        (
            "release_current_stage",
            "stage reuse",
            [("nvgpu.mbarrier.arrive %empty[%prev]", "nvgpu.mbarrier.arrive %empty[%s]")],
            "protocol_c7",
        ),
        ("flipped_full_parity", "parity", [(FLIP, FLIPPED)], "protocol_c9"),
        (
            "flipped_empty_parity",
            "parity",
            [
                ("%eparity = arith.xori %p, %true : i1", "%eparity = arith.xori %p, %false : i1"),
                (
                    "  %true = arith.constant true\n",
                    "  %true = arith.constant true\n  %false = arith.constant false\n",
                ),
            ],
            "protocol_c9",
        ),
        (
            "no_empty_wait",
            "missing wait",
            [("        nvgpu.mbarrier.try_wait.parity %empty[%s], %eparity, %ticks : !full\n", "")],
            "protocol_c6",
        ),
        (
            "wrong_expect_tx",
            "expect_tx",
            [("expect_tx %full[%s], %c32768", "expect_tx %full[%s], %c16384")],
            "protocol_c8",
        ),
    ],
    "prologue_ring_gemm": [
        (
            "no_full_wait",
            "missing wait",
            [("    nvgpu.mbarrier.try_wait.parity %bars[%k], %parity, %ticks : !barriers\n", "")],
            "protocol_c6",
        ),
        (
            "flipped_parity",
            "parity",
            [("%parity = arith.constant false", "%parity = arith.constant true")],
            "protocol_c9",
        ),
        (
            "wrong_expect_tx",
            "expect_tx",
            [
                (
                    "%stageBytes = arith.constant 32768 : index",
                    "%stageBytes = arith.constant 16384 : index",
                )
            ],
            "protocol_c8",
        ),
        (
            "missing_final_wait",
            "missing wait",
            [("nvvm.wgmma.wait.group.sync.aligned 0", "nvvm.wgmma.wait.group.sync.aligned 1")],
            "protocol_c4",
        ),
    ],
    "single_stage_gemm": [
        (
            "missing_final_wait",
            "missing wait",
            [("nvvm.wgmma.wait.group.sync.aligned 0", "nvvm.wgmma.wait.group.sync.aligned 1")],
            "protocol_c4",
        ),
    ],
}


# Triton's output (test/corpus/triton/generate.py): LLVM-dialect MLIR with
# natural loops, wgmma, wait_group, TMA, expect_tx and try_wait as inline PTX.
TRITON = sorted((HERE / "triton").glob("*.mlir"))


def _try_wait_line(text: str) -> str:
    return next(line for line in text.split("\n") if "mbarrier.try_wait.parity" in line)


def _drop_try_wait(text: str) -> str:
    line = _try_wait_line(text)
    asm = re.search(r'"(\\0A\{[^"]*try_wait[^"]*)"', line).group(1)
    return text.replace(line, line.replace(f'"{asm}"', '""'))


def _flip_try_wait_parity(text: str) -> str:
    line = _try_wait_line(text)
    addr, parity = re.search(r'"r,r" (%\w+), (%\w+)', line).groups()
    one = re.search(r"(%\w+) = llvm.mlir.constant\(1 : i32\) : i32", text).group(1)
    indent = line[: len(line) - len(line.lstrip())]
    flipped = line.replace(f'"r,r" {addr}, {parity}', f'"r,r" {addr}, %flipped_parity')
    return text.replace(
        line, f"{indent}%flipped_parity = llvm.xor {parity}, {one} : i32\n{flipped}"
    )


def _deepen_wait(old: int, new: int):
    def edit(text: str) -> str:
        before = f"wgmma.wait_group.sync.aligned {old};"
        if before not in text:
            raise ValueError(f"mutation does not apply: {before}")
        return text.replace(before, f"wgmma.wait_group.sync.aligned {new};", 1)

    return edit


# Triton kernel -> [(mutation, bug kind, edit(text) -> text, label)]
TRITON_MUTATIONS = {
    "triton_tma_matmul": [
        ("no_full_wait", "missing wait", _drop_try_wait, "protocol_c6"),
        ("wait_group_2", "stage reuse", _deepen_wait(1, 2), "protocol_c7"),
        ("flipped_parity", "parity", _flip_try_wait_parity, "protocol_c9"),
        ("final_wait_1", "missing wait", _deepen_wait(0, 1), "protocol_c4"),
    ],
    "triton_pointer_matmul": [
        ("final_wait_1", "missing wait", _deepen_wait(0, 1), "protocol_c4"),
    ],
    "triton_attention_fwd": [
        ("final_wait_1", "missing wait", _deepen_wait(0, 1), "protocol_c4"),
    ],
}


def nvwgmma_opt() -> str:
    search = [os.environ.get("NVWGMMA_TOOLS_DIR", ""), str(pathlib.Path(sys.executable).parent)]
    tool = shutil.which("nvwgmma-opt", path=os.pathsep.join(p for p in search if p))
    if tool is None:
        raise FileNotFoundError("nvwgmma-opt: install nvwgmma or set NVWGMMA_TOOLS_DIR")
    return tool


def mutate(text: str, edits) -> str:
    for old, new in edits:
        if old not in text:
            raise ValueError(f"mutation does not apply: {old!r}")
        text = text.replace(old, new, 1)
    return text


def lower(text: str, depth: str) -> str:
    if not DEPTHS[depth]:
        return text
    proc = subprocess.run(
        [nvwgmma_opt(), "-", *DEPTHS[depth]], input=text, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"lowering to {depth} failed: {proc.stderr[:2000]}")
    return proc.stdout


def check(text: str, strict: bool) -> dict:
    """Labels of the errors the checker reports (with ', strict' kept), and
    whether it crashed (a signal, or an exit code other than 0/1)."""
    option = "--nvwgmma-check-protocol" + ("=strict=true" if strict else "")
    proc = subprocess.run(
        [nvwgmma_opt(), "-", option, "-o", os.devnull], input=text, capture_output=True, text=True
    )
    labels = re.findall(r"error: .*\((protocol_\w+(?:, strict)?)\)$", proc.stderr, re.M)
    return {
        "labels": labels,
        "crashed": proc.returncode not in (0, 1),
        "returncode": proc.returncode,
        "stderr": proc.stderr,
    }


def kernel_rows():
    """(kernel, depth, normal labels, strict labels, crashed)."""
    for path in KERNELS:
        source = path.read_text()
        for depth in DEPTHS:
            text = lower(source, depth)
            normal, strict = check(text, False), check(text, True)
            yield (
                path.stem,
                depth,
                normal["labels"],
                strict["labels"],
                normal["crashed"] or strict["crashed"],
            )


def mutation_rows():
    """(kernel, mutation, bug kind, depth, expected label, caught, crashed)."""
    for path in KERNELS:
        source = path.read_text()
        for name, kind, edits, label in MUTATIONS.get(path.stem, []):
            mutant = mutate(source, edits)
            for depth in DEPTHS:
                text = lower(mutant, depth)
                normal, strict = check(text, False), check(text, True)
                yield (
                    path.stem,
                    name,
                    kind,
                    depth,
                    label,
                    label in normal["labels"],
                    normal["crashed"] or strict["crashed"],
                )


def triton_rows():
    """(kernel, mutation or None, normal labels, strict labels, expected, crashed)."""
    for path in TRITON:
        text = path.read_text()
        normal, strict = check(text, False), check(text, True)
        yield path.stem, None, normal["labels"], strict["labels"], None, normal["crashed"]
        for name, _kind, edit, label in TRITON_MUTATIONS.get(path.stem, []):
            mutant = check(edit(text), False)
            yield path.stem, name, mutant["labels"], [], label, mutant["crashed"]


def main() -> int:
    print("| kernel | depth | normal: errors | strict: reports |")
    print("|---|---|---|---|")
    for kernel, depth, normal, strict, crashed in kernel_rows():
        print(
            f"| {kernel} | {depth} | {len(normal)} | "
            f"{', '.join(sorted(set(strict))) or 'none'}{' CRASH' if crashed else ''} |"
        )
    print()
    print("| kernel | mutation | bug kind | " + " | ".join(DEPTHS) + " |")
    print("|---|---|---|" + "---|" * len(DEPTHS))
    rows = list(mutation_rows())
    by_mutation = {}
    for kernel, name, kind, _depth, label, caught, crashed in rows:
        cell = "caught" if caught else "MISSED"
        by_mutation.setdefault((kernel, name, kind, label), []).append(
            cell + (" CRASH" if crashed else "")
        )
    for (kernel, name, kind, label), cells in by_mutation.items():
        print(f"| {kernel} | {name} ({label}) | {kind} | " + " | ".join(cells) + " |")
    print()
    print("| Triton kernel (asm, CFG) | case | result |")
    print("|---|---|---|")
    triton = list(triton_rows())
    for kernel, name, normal, strict, label, crashed in triton:
        if name is None:
            result = f"{len(normal)} errors; strict: {', '.join(sorted(set(strict))) or 'none'}"
        else:
            result = "caught" if label in normal else "MISSED"
        print(
            f"| {kernel} | {name or 'correct'} ({label or '-'}) | {result}{' CRASH' if crashed else ''} |"
        )
    seeded = [r[5] for r in rows] + [lab in labs for _, n, labs, _, lab, _ in triton if n]
    crashes = sum(r[6] for r in rows) + sum(r[5] for r in triton)
    print(f"\ncaught {sum(seeded)} / {len(seeded)}; crashes {crashes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
