"""The PTX checker's corpus: correct PTX from Triton (two releases) and nvcc
(CUDA C++ in the C++ libraries' style), each with PTX-level seeded bugs.

    python test/frontends/ptx/ptx_corpus.py        # the tables, both halves

Split by source before any rule was tuned: **tuned on** Triton 3.9 (and
nvwgmma's own kernels, checked in CI through test/python/gemm_checks.py);
**held out**: Triton 3.5 and the CUDA C++ kernels. A bug is caught when
check_ptx reports an error on the mutant.
"""

from __future__ import annotations

import gzip
import pathlib
import re
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
TUNED = ("triton-3.9",)
HELD_OUT = ("triton-3.5", "cuda")

_MMA = re.compile(r"wgmma\.mma_async\S*\s+\{([^}]*)\}")
_WAIT = re.compile(r"wgmma\.wait_group\.sync\.aligned\s+(\d+)")
_TRY_WAIT = re.compile(r"(mbarrier\.try_wait\.parity\S*)\s+(\w+),\s*(\[[^\]]*\]),\s*([^,;]+)(.*);")


def kernels(source: str) -> dict[str, str]:
    folder = HERE / source / "kernels"
    return {p.name[: -len(".ptx.gz")]: gzip.decompress(p.read_bytes()).decode()
            for p in sorted(folder.glob("*.ptx.gz"))}  # fmt: skip


def _deepen(line: str) -> str:
    """`wgmma.wait_group.sync.aligned N` with N + 1."""
    return _WAIT.sub(
        lambda m: m.group(0)[: m.start(1) - m.start(0)] + str(int(m.group(1)) + 1), line
    )


def _lines_matching(lines: list[str], pattern: str) -> list[int]:
    return [i for i, line in enumerate(lines) if re.search(pattern, line)]


def _first_mma(lines: list[str]) -> int:
    found = _lines_matching(lines, r"wgmma\.mma_async")
    return found[0] if found else len(lines)


def mutants(text: str) -> dict[str, str]:
    """Each bug kind seeded once, where the kernel has the place for it."""
    lines = text.split("\n")
    out: dict[str, list[str]] = {}

    def edit(kind: str, at: int, replacement: list[str]) -> None:
        out[kind] = lines[:at] + replacement + lines[at + 1 :]

    fences = [i for i in _lines_matching(lines, r"^\s*wgmma\.fence") if i < _first_mma(lines)]
    if fences:
        edit("del_fence", fences[-1], [])
    waits = _lines_matching(lines, r"wgmma\.wait_group")
    if waits:
        last = waits[-1]
        edit("del_wait_last", last, [])
        edit("deepen_wait_last", last, [_deepen(lines[last])])
        regs = set()
        for m in _MMA.finditer(text):
            regs.update(r.strip() for r in m.group(1).split(","))
        for j in range(last + 1, len(lines)):
            tokens = set(re.findall(r"%\w+", lines[j]))
            if tokens & regs and not lines[j].lstrip().startswith(("wgmma", "//", "$")):
                out["early_read"] = lines[:last] + [lines[j]] + lines[last:j] + lines[j + 1 :]
                break
        commits = [i for i in _lines_matching(lines, r"wgmma\.commit_group") if i < last]
        if commits:
            edit("del_commit", commits[-1], [])
    if len(waits) > 1:
        edit("deepen_wait_loop", waits[0], [_deepen(lines[waits[0]])])
    proxy = _lines_matching(lines, r"^\s*(@\S+\s+)?fence\.proxy\.async")
    if proxy:
        out["del_proxy_fence"] = [line for i, line in enumerate(lines) if i not in proxy]
    tries = [
        i for i in _lines_matching(lines, r"mbarrier\.try_wait\.parity") if i < _first_mma(lines)
    ]
    if tries:
        at = tries[-1]
        m = _TRY_WAIT.search(lines[at])
        if m:
            edit("del_full_wait", at, [f"setp.eq.u32 {m.group(2)}, 0, 0;"])
            flipped = (f"{{ .reg .b32 flip; xor.b32 flip, {m.group(4).strip()}, 1; "
                       f"{m.group(1)} {m.group(2)}, {m.group(3)}, flip{m.group(5)}; }}")  # fmt: skip
            edit("flip_parity_full", at, [flipped])
    expects = _lines_matching(lines, r"mbarrier\.arrive\.expect_tx\S*\s+\S+,\s*\[[^\]]*\],\s*\d+")
    if expects:
        at = expects[0]
        edit("expect_tx_half", at,
             [re.sub(r"(\d+)(\s*;)", lambda m: str(int(m.group(1)) // 2) + m.group(2), lines[at])])  # fmt: skip
    for w in waits[:-1]:
        arrives = [i for i in _lines_matching(lines, r"mbarrier\.arrive(?!\.expect_tx)")
                   if w < i < w + 40]  # fmt: skip
        if arrives:
            a = arrives[0]
            out["release_before_wait"] = lines[:w] + [lines[a]] + lines[w:a] + lines[a + 1 :]
            break
    return {kind: "\n".join(body) for kind, body in out.items() if "\n".join(body) != text}


def run(sources) -> dict:
    from nvwgmma.ptx_check import check_ptx

    result = {"correct": 0, "false_alarms": [], "caught": {}, "total": {}, "missed": [],
              "bytes": 0, "seconds": 0.0}  # fmt: skip
    for source in sources:
        for name, text in kernels(source).items():
            start = time.perf_counter()
            errors = [f for f in check_ptx(text) if f.severity == "error"]
            result["seconds"] += time.perf_counter() - start
            result["bytes"] += len(text)
            result["correct"] += 1
            if errors:
                result["false_alarms"].append(f"{source}/{name}: {errors[0]}")
            for kind, mutant in mutants(text).items():
                result["total"][kind] = result["total"].get(kind, 0) + 1
                if any(f.severity == "error" for f in check_ptx(mutant)):
                    result["caught"][kind] = result["caught"].get(kind, 0) + 1
                else:
                    result["missed"].append(f"{source}/{name}.{kind}")
    return result


def table(title: str, r: dict) -> str:
    caught, total = sum(r["caught"].values()), sum(r["total"].values())
    rows = [f"## {title}",
            f"correct kernels: {r['correct']}, false alarms: {len(r['false_alarms'])}"]  # fmt: skip
    rows += [f"  false alarm {x}" for x in r["false_alarms"]]
    rows += [f"  {k}: {r['caught'].get(k, 0)}/{n}" for k, n in sorted(r["total"].items())]
    rows.append(f"seeded bugs caught: {caught} / {total}")
    rows += [f"  missed {m}" for m in r["missed"]]
    rows.append(f"checking speed: {r['bytes'] / max(r['seconds'], 1e-9) / 1e6:.1f} MB of PTX/s")
    return "\n".join(rows)


if __name__ == "__main__":
    halves = {"tuned half": TUNED, "held-out half": HELD_OUT}
    for title in sys.argv[1:] or list(halves):
        print(table(title, run(halves[title])))
