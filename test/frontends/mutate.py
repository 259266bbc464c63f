"""Seeded protocol bugs for any front end's IR, as line edits (corpus.apply).

    python test/frontends/mutate.py test/frontends/<source>

writes <source>/mutants/<kernel>.json for every kernel. The generator reads
the protocol instructions in every spelling the corpus holds (nvvm ops in
pretty or generic form, inline PTX) and places one bug of each kind where
the kernel has the instruction it needs:

  del_fence            the last wgmma fence before the first mma_async     c1
  del_wait_last        the last wgmma wait_group                           c4
  deepen_wait_last     the last wait_group N -> N + 1                      c4
  deepen_wait_loop     an earlier wait_group N -> N + 1 (in the loop)      c4/c7
  del_full_wait        a barrier wait a wgmma depends on                   c6
  del_empty_wait       a barrier wait a TMA load depends on                c6
  flip_parity_full     that full wait's parity p -> p ^ 1                  c9
  flip_parity_empty    that empty wait's parity p -> p ^ 1                 c9
  expect_tx_half       an expect_tx byte count halved                      c8
  release_before_wait  an in-loop wait_group moved below the next release  c7

A wait is "full" when the next protocol instruction after it is a fence or
mma_async, "empty" when it is an expect_tx or a TMA load.
"""

from __future__ import annotations

import json
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import corpus  # noqa: E402

FENCE = re.compile(r"nvvm\.wgmma\.fence\.aligned|\"wgmma\.fence|nvwgmma\.fence\b")
MMA = re.compile(r"wgmma\.mma_async|nvwgmma\.mma_async|nvgpu\.warpgroup\.mma\s")
WAIT_OP = re.compile(r"nvvm\.wgmma\.wait\.group\.sync\.aligned\"?(?:\(\))?\s*(?:<\{group = )?(\d+)")
WAIT_ASM = re.compile(r"wgmma\.wait_group\.sync\.aligned (\d+)")
BARRIER_WAIT = re.compile(r"mbarrier\.try_wait|mbarrier\.test\.wait|mbarrier\.test_wait")
EXPECT = re.compile(r"expect_tx")
TMA = re.compile(r"cp\.async\.bulk\.tensor[^\"]*shared[^\"]*global|cp\.async\.bulk\.tensor\.shared\.cluster\.global")  # fmt: skip
ARRIVE = re.compile(r"mbarrier\.arrive(?!\.expect_tx)|nvvm\.mbarrier\.arrive\b(?!\.expect)")
SSA = re.compile(r"%[\w.$-]+")


def _kind(line: str) -> str | None:
    if MMA.search(line):
        return "mma"
    if FENCE.search(line):
        return "fence"
    if WAIT_OP.search(line) or WAIT_ASM.search(line):
        return "wait_group"
    if BARRIER_WAIT.search(line):
        return "barrier_wait"
    if EXPECT.search(line):
        return "expect"
    if TMA.search(line):
        return "tma"
    if ARRIVE.search(line):
        return "arrive"
    return None


def _events(lines: list[str]) -> list[tuple[int, str]]:
    return [(i, k) for i, line in enumerate(lines) if (k := _kind(line))]


def _operands(line: str) -> list[str]:
    """The op's SSA operands in order (after the asm string for inline asm)."""
    if "llvm.inline_asm" in line:
        tail = line[line.rfind('"') + 1 :]
    else:
        tail = line.split("=", 1)[1] if re.match(r"\s*%", line) else line
        tail = tail.split(":", 1)[0] if "(" not in tail.split(":", 1)[0] else tail
    return SSA.findall(tail.split(" : ")[0])


def _operand_types(line: str) -> list[str]:
    m = re.search(r":\s*\(([^)]*)\)\s*->", line)
    if m:
        return [t.strip() for t in m.group(1).split(",")]
    m = re.search(r":\s*([^-]+?)(?:\s*->|$)", line.split('"')[-1])
    return [t.strip() for t in m.group(1).split(",")] if m else []


def _wait_depth(line: str) -> tuple[re.Match, int] | None:
    m = WAIT_OP.search(line) or WAIT_ASM.search(line)
    return (m, int(m.group(1))) if m else None


def _deepen(line_no: int, line: str) -> dict | None:
    found = _wait_depth(line)
    if not found:
        return None
    m, n = found
    old = m.group(0)
    new = old[: m.start(1) - m.start(0)] + str(n + 1) + old[m.end(1) - m.start(0) :]
    return {"op": "sub", "line": line_no + 1, "old": old, "new": new}


def _delete_wait(line_no: int, line: str) -> list[dict] | None:
    """A barrier wait removed while keeping the IR valid: an asm loses its
    instruction text, an op with an i1 result becomes the constant true."""
    if "llvm.inline_asm" in line:
        asm = re.search(r'"((?:[^"\\]|\\.)*)"', line.split("llvm.inline_asm", 1)[1])
        if not asm or (re.match(r"\s*%", line) and "-> !llvm.void" not in line):
            return None
        return [{"op": "sub", "line": line_no + 1, "old": f'"{asm.group(1)}"', "new": '""'}]
    m = re.match(r"(\s*)(%[\w.$-]+) = ", line)
    if m:
        return [{"op": "sub", "line": line_no + 1, "old": line.strip(),
                 "new": f"{m.group(2)} = llvm.mlir.constant(true) : i1"}]  # fmt: skip
    return [{"op": "comment", "line": line_no + 1}]


def _parity(line: str) -> str | None:
    """The wait's parity operand (nvgpu's form indexes its barrier group:
    `%group[%i], %parity, %ticks`)."""
    if "nvgpu.mbarrier.try_wait.parity" in line:
        m = re.search(r"\], (%[\w.$-]+)", line)
        return m.group(1) if m else None
    ops = _operands(line)
    return ops[1] if len(ops) >= 2 else None


def _flip_parity(line_no: int, line: str) -> list[dict] | None:
    types = _operand_types(line)
    parity = _parity(line)
    if parity is None:
        return None
    ty = types[1] if len(types) > 1 and re.fullmatch(r"i\d+", types[1]) else "i32"
    if "nvgpu.mbarrier.try_wait.parity" in line:  # its custom form states no operand types
        ty = "i1"
    indent = re.match(r"\s*", line).group(0)
    one = f"{indent}%mut_one = llvm.mlir.constant(1 : {ty}) : {ty}"
    flip = f"{indent}%mut_par = llvm.xor {parity}, %mut_one : {ty}"
    at = line.index(parity, line.rfind('"') + 1 if "llvm.inline_asm" in line else 0)
    old = line[at - 1 : at + len(parity) + 1]
    new = old[0] + "%mut_par" + old[-1]
    return [
        {"op": "insert_before", "line": line_no + 1, "text": one},
        {"op": "insert_before", "line": line_no + 1, "text": flip},
        {"op": "sub", "line": line_no + 1, "old": old, "new": new},
    ]


def _halve_expect(line_no: int, line: str, lines: list[str]) -> list[dict] | None:
    literal = re.search(r"\], (\d+);", line)
    if literal:
        n = int(literal.group(1))
        return [{"op": "sub", "line": line_no + 1, "old": f"], {n};", "new": f"], {n // 2};"}]
    ops = _operands(line)
    if len(ops) < 2:
        return None
    count = ops[1]
    nvgpu = "nvgpu.mbarrier.arrive.expect_tx" in line
    if nvgpu:  # `%group[%i], %count`: an index operand
        count = re.search(r"\], (%[\w.$-]+)", line).group(1)
    define = re.compile(rf"^\s*{re.escape(count)} = .*constant\D*(\d+)")
    for other in lines:
        m = define.match(other)
        if m:
            n = int(m.group(1))
            ty = _operand_types(line)[1] if len(_operand_types(line)) > 1 else "i32"
            indent = re.match(r"\s*", line).group(0)
            after = line.index("], ") if nvgpu else line.find(ops[0]) + len(ops[0])
            at = line.index(count, after)
            half = (f"arith.constant {n // 2} : index" if nvgpu
                    else f"llvm.mlir.constant({n // 2} : {ty}) : {ty}")  # fmt: skip
            return [
                {"op": "insert_before", "line": line_no + 1, "text": f"{indent}%mut_tx = {half}"},
                {"op": "sub", "line": line_no + 1,
                 "old": line[at - 1 : at + len(count) + 1],
                 "new": line[at - 1] + "%mut_tx" + line[at + len(count)]},
            ]  # fmt: skip
    return None


def _rendezvous(lines: list[str], i: int) -> bool:
    """A wait on a barrier the same thread arrived on just before: a
    rendezvous of warpgroups (Mosaic's schedule barriers), not a ring's."""
    ops = _operands(lines[i])
    if not ops:
        return False
    window = lines[max(0, i - 16) : i]

    def key(name: str) -> str:
        # The address by what computes it (two GEPs of one slot are one).
        for line in reversed(window):
            m = re.match(rf"\s*{re.escape(name)} = (.*)", line)
            if m:
                return m.group(1)
        return name

    target = key(ops[0])
    for line in window:
        arrive_ops = _operands(line)
        if ARRIVE.search(line) and not EXPECT.search(line) and arrive_ops:
            if any(key(o) == target for o in arrive_ops):
                return True
    return False


def _before_rendezvous(lines: list[str], events: list[tuple[int, str]], n: int) -> bool:
    """Every arrive between event n and the next other protocol op is
    followed by a wait on the same barrier (a rendezvous)."""
    arrives = 0
    for j, k in events[n + 1 :]:
        if k == "arrive":
            arrives += 1
        elif k == "barrier_wait":
            if not _rendezvous(lines, j):
                return False
            arrives -= 1
        else:
            break
    return arrives == 0


def _varying_parity(lines: list[str], i: int) -> bool:
    """The wait's parity is not a constant (a ring's wait, in a loop)."""
    parity = _parity(lines[i])
    if parity is None:
        return False
    define = re.compile(rf"\s*{re.escape(parity)} = (.*)")
    for line in lines[:i]:
        m = define.match(line)
        if m:
            return "constant" not in m.group(1)
    return True


def mutants(kernel: str, text: str) -> list[dict]:
    lines = text.split("\n")
    events = _events(lines)
    found: list[dict] = []

    def add(kind: str, expected: str, desc: str, edits: list[dict] | None) -> None:
        if edits:
            found.append({"id": f"{kernel}.{kind}", "kind": kind, "expected": expected,
                          "desc": desc, "edits": edits})  # fmt: skip

    mmas = [i for i, k in events if k == "mma"]
    if mmas:
        fences = [i for i, k in events if k == "fence" and i < mmas[0]]
        if fences:
            add("del_fence", "c1", f"delete the fence on line {fences[-1] + 1}",
                [{"op": "comment", "line": fences[-1] + 1}])  # fmt: skip
    waits = [i for i, k in events if k == "wait_group"]
    if waits:
        last = waits[-1]
        if "llvm.inline_asm" in lines[last] and re.match(r"\s*%", lines[last]):
            m = WAIT_ASM.search(lines[last])
            edits = [{"op": "sub", "line": last + 1, "old": m.group(0), "new": "// no wait"}]
        else:
            edits = [{"op": "comment", "line": last + 1}]
        add("del_wait_last", "c4", f"delete the last wait_group (line {last + 1})", edits)
        add("deepen_wait_last", "c4", f"last wait_group N -> N + 1 (line {last + 1})",
            [e] if (e := _deepen(last, lines[last])) else None)  # fmt: skip
        inner = [i for i in waits[:-1] if any(m < i for m in mmas)]
        if inner:
            add("deepen_wait_loop", "c4/c7", f"wait_group N -> N + 1 (line {inner[-1] + 1})",
                [e] if (e := _deepen(inner[-1], lines[inner[-1]])) else None)  # fmt: skip
            arrives = [i for i, k in events if k == "arrive" and i > inner[-1]]
            if (
                arrives
                and _wait_depth(lines[inner[-1]])
                and not re.match(r"\s*%", lines[inner[-1]])
            ):
                add("release_before_wait", "c7",
                    f"move the wait_group on line {inner[-1] + 1} below the release on line {arrives[0] + 1}",
                    [{"op": "move", "from": inner[-1] + 1, "to": inner[-1] + 1, "after": arrives[0] + 1}])  # fmt: skip
    full = empty = None
    for n, (i, k) in enumerate(events):
        if k != "barrier_wait" or _rendezvous(lines, i):
            continue
        after = next((k2 for _, k2 in events[n + 1 :] if k2 != "barrier_wait"), None)
        # A rendezvous of warpgroups (an arrive, then a wait on it) may come
        # between a full wait and the mma_async it guards (Mosaic).
        reads = next((k2 for _, k2 in events[n + 1 :]
                      if k2 not in ("barrier_wait", "arrive")), None)  # fmt: skip
        if full is None and (after in ("fence", "mma") or (
                reads in ("fence", "mma") and _before_rendezvous(lines, events, n))):  # fmt: skip
            full = i
        elif after in ("expect", "tma") and empty is None and i > (mmas[0] if mmas else 0):
            empty = i
    if empty is None and mmas:
        # A warp-specialised producer may come before the consumer's mma in
        # the text: its wait is the one in a loop (a parity that varies).
        for n, (i, k) in enumerate(events):
            after = next((k2 for _, k2 in events[n + 1 :] if k2 != "barrier_wait"), None)
            if (k == "barrier_wait" and i < mmas[0] and after in ("expect", "tma")
                    and not _rendezvous(lines, i) and _varying_parity(lines, i)):  # fmt: skip
                empty = i
                break
    if full is not None:
        add("del_full_wait", "c6", f"delete the full-barrier wait on line {full + 1}",
            _delete_wait(full, lines[full]))  # fmt: skip
        add("flip_parity_full", "c9", f"parity of the full-barrier wait on line {full + 1} flipped",
            _flip_parity(full, lines[full]))  # fmt: skip
    if empty is not None:
        add("del_empty_wait", "c6", f"delete the empty-barrier wait on line {empty + 1}",
            _delete_wait(empty, lines[empty]))  # fmt: skip
        add("flip_parity_empty", "c9", f"parity of the empty-barrier wait on line {empty + 1} flipped",
            _flip_parity(empty, lines[empty]))  # fmt: skip
    expects = [i for i, k in events if k == "expect"]
    if expects:
        i = expects[-1]
        add("expect_tx_half", "c8", f"expect_tx count halved on line {i + 1}",
            _halve_expect(i, lines[i], lines))  # fmt: skip
    for m in found:  # every mutant must apply
        corpus.apply(text, m["edits"])
    return found


def main(source: pathlib.Path) -> None:
    (source / "mutants").mkdir(exist_ok=True)
    for path in corpus.kernels(source):
        kernel = corpus.name_of(path)
        found = mutants(kernel, corpus.read(path))
        (source / "mutants" / f"{kernel}.json").write_text(json.dumps(found, indent=1) + "\n")
        print(kernel, [m["kind"] for m in found])


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
