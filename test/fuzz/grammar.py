"""Random nvwgmma IR: grammar-aware generation and token-level mutation.

`generate(rng)` writes one module: an llvm.func kernel whose body mixes
fence / commit_group / wait_group / mma_async / mma_async.sp (dense values
drawn mostly from the legal lattice, sometimes from just outside it), runtime
scale-d values, register plumbing, and scf.for loops carrying accumulators.
`mutate(rng, text)` then damages it the way hand-written IR goes wrong:
numbers and keywords swapped, tokens dropped or duplicated, lines moved,
the text cut short. Both are pure functions of the random generator, so a
seed reproduces an input exactly.
"""

from __future__ import annotations

import random
import re

TYPES = ["f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8", "b1", "f32", "s32"]
BAD_TYPES = ["s4", "u4", "f64", "i8", "F16"]
# Families as PTX groups them, with their dense K and accumulator types. This
# is the fuzzer's own, deliberately independent picture: inputs only need to
# land near the lattice, the verifier and ptxas judge them.
FAMILIES = [
    (["f16"], 16, ["f16", "f32"]),
    (["bf16"], 16, ["f32"]),
    (["tf32"], 8, ["f32"]),
    (["e4m3", "e5m2"], 32, ["f16", "f32"]),
    (["s8", "u8"], 32, ["s32"]),
    (["b1"], 256, ["s32"]),
]
NS = [8, 16, 24, 32, 40, 48, 56, 64, 96, 128, 136, 192, 240, 248, 256]
ODD_NS = [0, 4, 12, 264, 512, -8]


def _acc_type(d: str, n: int, rng: random.Random) -> str:
    count = max(n // 4 if d == "f16" else n // 2, 0)
    member = "f32" if d == "f32" else "i32"
    if rng.random() < 0.05:
        count += rng.choice([-1, 1])
    if rng.random() < 0.03:
        member = rng.choice(["f16", "i64", "f32", "i32"])
    count = min(max(count, 1), 130)
    return "!llvm.struct<(" + ", ".join([member] * count) + ")>"


def _first_member(struct_type: str) -> str:
    return struct_type[len("!llvm.struct<(") :].split(",")[0].rstrip(")>")


FRAG_MEMBERS = ["i32", "vector<2xf16>", "vector<2xbf16>", "f32", "vector<4xi8>"]


class _Body:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.lines: list[str] = []
        self.next = 0
        self.frags: dict[str, str] = {}

    def fresh(self) -> str:
        self.next += 1
        return f"%v{self.next}"

    def emit(self, line: str, indent: int):
        self.lines.append("  " * indent + line)

    def mma(self, acc: str, acc_type: str, cfg, indent: int, sparse: bool) -> str:
        rng = self.rng
        a_types, k, d_types, n, d = cfg
        a = rng.choice(a_types)
        b = rng.choice(a_types)
        if rng.random() < 0.03:
            a = rng.choice(TYPES + BAD_TYPES)
        if rng.random() < 0.03:
            b = rng.choice(TYPES)
        kk = 2 * k if sparse else k
        if rng.random() < 0.03:
            kk = rng.choice([8, 16, 32, 64, 128, 256, 512])
        m = 64 if rng.random() < 0.97 else rng.choice([32, 128])
        if rng.random() < 0.3:
            natural = {"f16": "vector<2xf16>", "bf16": "vector<2xbf16>", "tf32": "f32"}
            frag_member = natural.get(a, "vector<4xi8>") if rng.random() < 0.3 else "i32"
            if rng.random() < 0.05:
                frag_member = rng.choice(FRAG_MEMBERS)
            count = 4 if rng.random() < 0.97 else rng.choice([3, 5])
            frag_type = "!llvm.struct<(" + ", ".join([frag_member] * count) + ")>"
            a_val = self.fresh()
            self.emit(f"{a_val} = llvm.mlir.zero : {frag_type}", indent)
        else:
            a_val, frag_type = "%a", "i64"
        scale = rng.choice(["one", "zero", "%p", "one", "one"])
        integer = a in ("s8", "u8", "b1")
        transposable = a in ("f16", "bf16")
        sat = ", satfinite" if rng.random() < (0.3 if a in ("s8", "u8") else 0.02) else ""
        la = "col" if rng.random() < (0.2 if transposable and a_val == "%a" else 0.02) else "row"
        lb = "row" if rng.random() < (0.2 if transposable else 0.02) else "col"
        sa = "neg" if rng.random() < (0.02 if integer else 0.15) else "one"
        sb = "neg" if rng.random() < (0.02 if integer else 0.15) else "one"
        res = self.fresh()
        op = "nvwgmma.mma_async.sp" if sparse else "nvwgmma.mma_async"
        sparsity = ""
        if sparse:
            sel = rng.choice([0, 0, 0, 1, 1, 2, 3])
            sparsity = f"sparsity [%m, {sel}], "
        self.emit(
            f"{res} = {op} {a_val}, %b, {acc}, {sparsity}"
            f"#nvwgmma.shape<m = {m}, n = {n}, k = {kk}>, "
            f"D [{d}, {scale}{sat}], A [{a}, {sa}, {la}], B [{b}, {sb}, {lb}] "
            f": {frag_type}, {acc_type} -> {acc_type}",
            indent,
        )
        return res

    def sequence(self, acc: str, acc_type: str, cfg, indent: int, depth: int) -> str:
        rng = self.rng
        for _ in range(rng.randint(1, 6)):
            choice = rng.random()
            if choice < 0.15:
                self.emit("nvwgmma.fence", indent)
            elif choice < 0.5:
                acc = self.mma(acc, acc_type, cfg, indent, sparse=rng.random() < 0.2)
            elif choice < 0.62:
                self.emit("nvwgmma.commit_group", indent)
            elif choice < 0.74:
                group = rng.choice([0, 0, 1, 2, 3, -1, 2**63 - 1, 2**63])
                self.emit(f"nvwgmma.wait_group {group}", indent)
            elif choice < 0.82:
                # A non-wgmma access to the accumulator registers.
                reg = self.fresh()
                self.emit(f"{reg} = llvm.extractvalue {acc}[0] : {acc_type}", indent)
                new = self.fresh()
                self.emit(f"{new} = llvm.insertvalue {reg}, {acc}[0] : {acc_type}", indent)
                acc = new
            elif choice < 0.9 and depth < 2:
                loop = self.fresh()
                iv = self.fresh()
                carried = self.fresh()
                self.emit(
                    f"{loop} = scf.for {iv} = %lb to %ub step %st iter_args({carried} = {acc})"
                    f" -> ({acc_type}) : i32 {{",
                    indent,
                )
                out = self.sequence(carried, acc_type, cfg, indent + 1, depth + 1)
                self.emit(f"scf.yield {out} : {acc_type}", indent + 1)
                self.emit("}", indent)
                acc = loop
            else:
                self.emit("nvwgmma.fence", indent)
        return acc


def generate(rng: random.Random) -> str:
    """One random module holding nvwgmma ops."""
    a_types, k, d_types = rng.choice(FAMILIES)
    n = rng.choice(NS) if rng.random() < 0.93 else rng.choice(ODD_NS)
    d = rng.choice(d_types) if rng.random() < 0.93 else rng.choice(TYPES)
    cfg = (a_types, k, d_types, n, d)
    acc_type = _acc_type(d, n, rng)
    body = _Body(rng)
    body.emit(f"%acc0 = llvm.mlir.zero : {acc_type}", 1)
    out = body.sequence("%acc0", acc_type, cfg, 1, 0)
    if rng.random() < 0.7:
        body.emit("nvwgmma.commit_group", 1)
        body.emit(f"nvwgmma.wait_group {rng.choice([0, 0, 0, 1])}", 1)
    # Kernels return nothing: the result leaves through global memory.
    body.emit(f"%first = llvm.extractvalue {out}[0] : {acc_type}", 1)
    body.emit(f"llvm.store %first, %out : {_first_member(acc_type)}, !llvm.ptr<1>", 1)
    body.emit("llvm.return", 1)
    return (
        "llvm.func @k(%a: i64, %b: i64, %p: i1, %m: i32, %lb: i32, %ub: i32, "
        "%st: i32, %out: !llvm.ptr<1>) attributes {nvvm.kernel} {\n"
        + "\n".join(body.lines)
        + "\n}\n"
    )


_TOKEN = re.compile(r"%[\w.]+|#?[\w.]+|-?\d+|\S")
REPLACEMENTS = TYPES + BAD_TYPES + [
    "one", "zero", "neg", "row", "col", "satfinite", "0", "1", "-1", "64", "8", "256",
    "%p", "%a", "%b", "%m", "i64", "i32", "f32", "nvwgmma.fence", "sparsity", "[", "]",
    "<", ">", ",", ":", "->", "9223372036854775808", "nvwgmma.mma_async", "}",
]  # fmt: skip


def mutate(rng: random.Random, text: str) -> str:
    """Damage `text` with 1-4 token- or line-level edits."""
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        if kind < 0.6:
            tokens = list(_TOKEN.finditer(text))
            if not tokens:
                break
            tok = rng.choice(tokens)
            start, end = tok.span()
            edit = rng.random()
            if edit < 0.5:
                text = text[:start] + rng.choice(REPLACEMENTS) + text[end:]
            elif edit < 0.75:
                text = text[:start] + text[end:]
            else:
                text = text[:end] + " " + tok.group() + text[end:]
        elif kind < 0.85:
            lines = text.split("\n")
            if len(lines) < 3:
                break
            i = rng.randrange(1, len(lines) - 1)
            line = lines.pop(i)
            if rng.random() < 0.5:
                lines.insert(rng.randrange(1, len(lines)), line)
            text = "\n".join(lines)
        else:
            text = text[: rng.randrange(len(text) + 1)]
    return text


def case(seed: int, index: int) -> str:
    """Input `index` of the run seeded `seed`: generated, then (mostly) mutated."""
    rng = random.Random(seed * 1_000_003 + index)
    text = generate(rng)
    if rng.random() < 0.6:
        text = mutate(rng, text)
    return text
