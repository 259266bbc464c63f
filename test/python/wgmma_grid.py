"""The dense wgmma.mma_async grid compared between nvwgmma's verifier and ptxas.

A point is (atype, btype, dtype, n, k, a_source, satfinite, b1_op). Each point
has one PTX instruction, written here from the PTX ISA syntax independently
of nvwgmma's emitter, and one nvwgmma op. ptxas's verdicts over the grid are
committed in data/dense_verdicts.json (regenerate with
`python test/python/regenerate_verdicts.py`).
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import tempfile

INPUT_TYPES = ["f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8", "b1"]
D_TYPES = ["f16", "f32", "s32"]
NS = list(range(8, 257, 8))
KS = [8, 16, 32, 64, 128, 256]
A_SOURCES = ["desc", "regs"]
SATFINITE = [False, True]
# b1 has only .and.popc; .xor.popc is not expressible in nvwgmma (ptxas
# rejects it), so those points count as "refused" on our side.
B1_OPS = ["and", "xor"]

PTX_VERSION = "8.4"


def points():
    """Every grid point in a fixed order (the order of the verdict bits)."""
    for a, b, d, n, k, src, sat in itertools.product(
        INPUT_TYPES, INPUT_TYPES, D_TYPES, NS, KS, A_SOURCES, SATFINITE
    ):
        ops = B1_OPS if a == "b1" else [None]
        for op in ops:
            yield (a, b, d, n, k, src, sat, op)


SPARSE_KS = [16, 32, 64, 128, 256, 512]
SELECTORS = [0, 1, 2]


def sparse_points():
    """The sparse grid: (atype, btype, dtype, n, k, a_source, satfinite, selector)."""
    yield from itertools.product(
        INPUT_TYPES, INPUT_TYPES, D_TYPES, NS, SPARSE_KS, A_SOURCES, SATFINITE, SELECTORS
    )


def sparse_instruction(point) -> str:
    a, b, d, n, k, src, sat, sel = point
    opcode = f"wgmma.mma_async.sp.sync.aligned.m64n{n}k{k}.{d}.{a}.{b}"
    if a == "b1":
        opcode += ".and.popc"
    if sat:
        opcode += ".satfinite"
    reg = "f" if d == "f32" else "r"
    acc = ", ".join(f"{reg}{i}" for i in range(acc_count(d, n)))
    a_operand = "{a0, a1, a2, a3}" if src == "regs" else "da"
    operands = [f"{{{acc}}}", a_operand, "db", "m", str(sel), "p"] + _family_imms(a, src)
    return opcode + " " + ", ".join(operands) + ";"


def _family_imms(atype: str, a_source: str) -> list[str]:
    if atype in ("f16", "bf16"):
        return ["1", "1"] + (["0"] if a_source == "desc" else []) + ["0"]
    if atype in ("tf32", "e4m3", "e5m2"):
        return ["1", "1"]
    return []


def acc_count(dtype: str, n: int) -> int:
    return n // 4 if dtype == "f16" else n // 2


def instruction(point) -> str:
    """The PTX instruction of a point, as a user would write it."""
    a, b, d, n, k, src, sat, op = point
    opcode = f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.{d}.{a}.{b}"
    if op is not None:
        opcode += f".{op}.popc"
    if sat:
        opcode += ".satfinite"
    reg = "f" if d == "f32" else "r"
    acc = ", ".join(f"{reg}{i}" for i in range(acc_count(d, n)))
    a_operand = "{a0, a1, a2, a3}" if src == "regs" else "da"
    operands = [f"{{{acc}}}", a_operand, "db", "p"] + _family_imms(a, src)
    return opcode + " " + ", ".join(operands) + ";"


def ptx_file(lines: list[str]) -> str:
    body = "\n".join(lines)
    return f""".version {PTX_VERSION}
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pa) {{
.reg .b64 da, db;
.reg .f32 f<130>;
.reg .b32 r<130>;
.reg .b32 a<4>;
.reg .b32 m;
.reg .pred p;
ld.param.u64 da, [pa];
mov.b64 db, da;
setp.ne.b64 p, da, 0;
{body}
ret;
}}
"""


# 0-based line index of the first instruction in ptx_file's output.
_FIRST_LINE = ptx_file(["<first>"]).split("\n").index("<first>")


def _ptxas(text: str, ptxas: str) -> tuple[int, str]:
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        proc = subprocess.run(
            [ptxas, "-arch=sm_90a", path, "-o", os.devnull],
            capture_output=True,
            text=True,
        )
        return proc.returncode, proc.stderr
    finally:
        os.unlink(path)


def ptxas_verdicts(lines: list[str], ptxas: str) -> list[bool]:
    """ptxas's verdict on each instruction line.

    ptxas reports every bad line of a file by number, so a batch is assembled
    once; the lines it did not flag are then assembled together again and must
    pass, and any batch where that fails is split until each verdict stands on
    a clean run.
    """
    if not lines:
        return []
    rc, err = _ptxas(ptx_file(lines), ptxas)
    if rc == 0:
        return [True] * len(lines)
    bad = {int(m.group(1)) - 1 - _FIRST_LINE for m in re.finditer(r"line (\d+); error", err)}
    verdict = [i not in bad for i in range(len(lines))]
    kept = [line for line, ok in zip(lines, verdict) if ok]
    if not bad or (kept and _ptxas(ptx_file(kept), ptxas)[0] != 0):
        if len(lines) == 1:
            return [False]
        mid = len(lines) // 2
        return ptxas_verdicts(lines[:mid], ptxas) + ptxas_verdicts(lines[mid:], ptxas)
    return verdict


def ptxas_version(ptxas: str) -> str:
    out = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1]


def encode_bits(bits: list[bool]) -> str:
    import base64

    packed = bytearray((len(bits) + 7) // 8)
    for i, bit in enumerate(bits):
        if bit:
            packed[i // 8] |= 1 << (i % 8)
    return base64.b64encode(bytes(packed)).decode()


def decode_bits(text: str, count: int) -> list[bool]:
    import base64

    packed = base64.b64decode(text)
    return [bool(packed[i // 8] >> (i % 8) & 1) for i in range(count)]
