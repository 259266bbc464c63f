"""The protocol checker on other front ends' IR: every kernel of every source
under test/frontends, correct and with each seeded bug, in normal and strict
mode.

Layout, one directory per source (a front end at a version):
  <source>/kernels/<kernel>.mlir[.gz]   correct IR as the front end emits it
  <source>/mutants/<kernel>.json        seeded bugs as line edits (mutate.py)
  <source>/README.md                    origin, versions, licence, generator

Kernels are split by family (FAMILIES below) before any rule is tuned:
`tune` families are what the checker was fixed on, `held-out` families are
only ever reported. `python test/frontends/corpus.py` prints both halves'
tables; test_frontends.py asserts them. Needs only nvwgmma-opt
(NVWGMMA_TOOLS_DIR or next to Python).
"""

from __future__ import annotations

import concurrent.futures
import gzip
import importlib.util
import json
import os
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent

# kernel-name pattern -> family. The split is by family, never by kernel:
# a family's every front end and version lands on the same side.
FAMILIES = [
    (r"dense_gemm_persistent|persistent|warp_specialized|_ws_", "warp-specialised GEMM"),
    (r"attention|flash", "attention"),
    (r"fp8|batched|grouped", "fp8 and batched GEMM"),
    (r"gemm|matmul", "pipelined GEMM"),
]
SPLIT = {
    "pipelined GEMM": "tune",
    "fp8 and batched GEMM": "tune",
    "warp-specialised GEMM": "held-out",
    "attention": "tune",
}
# Sources tuned on whole: the CuTe DSL kernels came with the issue that
# reported their false alarms, so none of them is unseen.
TUNE_SOURCES = {"cute-dsl"}
# Sources added after the rules were last changed: held out whole, every
# family (upstream's sm90 GEMM integration tests).
HELD_OUT_SOURCES = {"upstream-sm90"}
# Kernels written to tune on after the halves were reported: a persistent
# warp-specialised Gluon ring (the ring position carried across tiles,
# Triton's layout-conversion scratch written between tiles). The held-out
# warp-specialised kernels of the same front end are reported after it.
TUNE_KERNELS = {
    ("triton-3.9", "gluon_ws_persistent_matmul"),
    # Gluon's warp-specialised ring at other sizes (3 stages, 64-row tiles):
    # the 4-stage kernel stays held out.
    ("triton-3.9", "gluon_ws_matmul_3stage"),
    # Mosaic's flash attention with a TMA warpgroup at other sizes (3 stages,
    # 128-wide KV blocks): the 2-stage kernel of the same schedule stays held out.
    ("mosaic-0.10", "mosaic_flash_attention_warp_specialized_3stage"),
    ("mosaic-0.10", "mosaic_flash_attention_warp_specialized_3stage_lowered"),
}
# Correct kernels as their front end ships them that really break the
# protocol: (source, kernel pattern) -> (the rules the checker must report,
# why). Such a kernel's errors are findings, not false alarms; its mutants
# count as caught when they add errors, and those seeding only the rules it
# already breaks are masked (not counted: the finding reports that place).
KNOWN_FINDINGS = {
    ("upstream-nvgpu", r"^ch3_gemm_tma"): (
        ["protocol_c4"],
        "reads the accumulator with its wgmma group pending (no wait_group): undefined "
        "behaviour in the PTX ISA",
    ),
}
# Seeded edits that change no behaviour (the generator cannot tell from the
# text): (source, mutant id pattern) -> why. Not counted as bugs.
EQUIVALENT_MUTANTS = {
    ("upstream-sm90", r"^sm90_matmul_multistage_1.*\.(del|deepen)_wait_last$"): (
        "with one stage the loop waits for 0 after every mma_async (before "
        "refilling the stage), so no group is pending at the final wait"
    ),
}
ERROR = re.compile(r"error: .*\((protocol_c\d)\)")
NOTE_NOT_CHECKED = re.compile(r"warning: .*\(protocol_unchecked\)")


def family(kernel: str) -> str:
    for pattern, name in FAMILIES:
        if re.search(pattern, kernel):
            return name
    raise ValueError(f"kernel {kernel!r} belongs to no family")


def known_finding(source: str, kernel: str) -> tuple[list[str], str] | None:
    for (src, pattern), finding in KNOWN_FINDINGS.items():
        if src == source and re.search(pattern, kernel):
            return finding
    return None


def sources() -> list[pathlib.Path]:
    return sorted(p for p in HERE.iterdir() if (p / "kernels").is_dir())


def kernels(source: pathlib.Path) -> list[pathlib.Path]:
    return sorted((source / "kernels").glob("*.mlir*"))


def read(path: pathlib.Path) -> str:
    if path.suffix == ".gz":
        return gzip.decompress(path.read_bytes()).decode()
    return path.read_text()


def name_of(path: pathlib.Path) -> str:
    return path.name.split(".mlir")[0]


def mutants(source: pathlib.Path, kernel: str) -> list[dict]:
    path = source / "mutants" / f"{kernel}.json"
    return json.loads(path.read_text()) if path.exists() else []


def apply(text: str, edits: list[dict]) -> str:
    """Line edits, numbered by the unmutated text (1-based)."""
    lines = text.split("\n")
    before: dict[int, list[str]] = {}
    after: dict[int, list[str]] = {}
    dropped: set[int] = set()
    for e in edits:
        i = e["line"] - 1 if "line" in e else e["from"] - 1
        if e["op"] == "comment":
            lines[i] = "// " + lines[i]
        elif e["op"] == "sub":
            if e["old"] not in lines[i]:
                raise ValueError(f"edit {e} does not apply")
            lines[i] = lines[i].replace(e["old"], e["new"], 1)
        elif e["op"] == "insert_before":
            before.setdefault(i, []).append(e["text"])
        elif e["op"] == "move":
            after.setdefault(e["after"] - 1, []).append(lines[i])
            dropped.add(i)
        else:
            raise ValueError(f"unknown edit {e['op']!r}")
    out = []
    for i, line in enumerate(lines):
        out += before.get(i, [])
        if i not in dropped:
            out.append(line)
        out += after.get(i, [])
    return "\n".join(out)


def _checker_corpus():
    spec = importlib.util.spec_from_file_location(
        "checker_corpus", HERE.parent / "corpus" / "corpus.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The tool under test, found as test/corpus finds it (NVWGMMA_TOOLS_DIR, or
# next to this Python).
tool = _checker_corpus().nvwgmma_opt


def run(text: str, flag: str) -> subprocess.CompletedProcess:
    """nvwgmma-opt with one pass flag over `text`."""
    return subprocess.run([tool(), "-", flag, "-o", os.devnull], input=text,
                          capture_output=True, text=True)  # fmt: skip


def aborted(proc: subprocess.CompletedProcess) -> bool:
    """A crash (a signal, an LLVM ERROR), as opposed to a diagnostic."""
    return proc.returncode < 0 or "PLEASE submit a bug report" in proc.stderr


def check(text: str, strict: bool = False) -> dict:
    """Runs the checker: its rules fired, whether it said rules went
    unchecked, and whether the tool aborted."""
    r = run(text, "--nvwgmma-check-protocol" + ("=strict=true" if strict else ""))
    rules = ERROR.findall(r.stderr)
    return {
        "rules": sorted(set(rules)),
        "errors": len(rules),
        "unchecked": bool(NOTE_NOT_CHECKED.search(r.stderr)),
        "aborted": aborted(r),
        "stderr": r.stderr,
    }


def cases() -> list[dict]:
    """Every (source, kernel, mutant or None) of the corpus."""
    out = []
    for source in sources():
        for path in kernels(source):
            kernel = name_of(path)
            base = {"source": source.name, "kernel": kernel, "path": path}
            base["family"] = family(kernel)
            base["half"] = (
                "tune"
                if source.name in TUNE_SOURCES or (source.name, kernel) in TUNE_KERNELS
                else "held-out"
                if source.name in HELD_OUT_SOURCES
                else SPLIT[base["family"]]
            )
            base["finding"] = known_finding(source.name, kernel)
            out.append({**base, "mutant": None})
            for m in mutants(source, kernel):
                out.append({**base, "mutant": m})
    return out


def run_case(case: dict) -> dict:
    text = read(case["path"])
    if case["mutant"] is not None:
        text = apply(text, case["mutant"]["edits"])
    normal = check(text)
    # Strict mode on the correct kernels only: what it adds is the places
    # the normal-mode warning counts.
    strict = check(text, strict=True) if case["mutant"] is None else normal
    # What the unmutated kernel already reports (a known finding's errors).
    baseline = 0
    if case["finding"] and case["mutant"] is not None:
        baseline = check(read(case["path"]))["errors"]
    return {**case, "normal": normal, "strict": strict, "baseline": baseline}


def run_all(jobs: int | None = None) -> list[dict]:
    with concurrent.futures.ThreadPoolExecutor(jobs or os.cpu_count()) as pool:
        return list(pool.map(run_case, cases()))


def summary(results: list[dict]) -> dict:
    """Per half: false alarms, seeded bugs caught (by kind and source),
    kernels whose pipeline rules were not checked, aborts."""
    halves: dict[str, dict] = {}
    for r in results:
        h = halves.setdefault(r["half"], {
            "kernels": 0, "false_alarms": 0, "flagged": [], "unchecked": [],
            "mutants": 0, "caught": 0, "missed": [], "by_kind": {}, "aborts": 0,
            "findings": [], "masked": [], "equivalent": [],
        })  # fmt: skip
        h["aborts"] += r["normal"]["aborted"] + r["strict"]["aborted"]
        if r["mutant"] is None:
            h["kernels"] += 1
            if r["finding"] and r["normal"]["rules"] == r["finding"][0]:
                h["findings"].append(f"{r['source']}/{r['kernel']}: {r['finding'][0]}")
            elif r["normal"]["errors"]:
                h["false_alarms"] += r["normal"]["errors"]
                h["flagged"].append(f"{r['source']}/{r['kernel']}: {r['normal']['rules']}")
            if r["normal"]["unchecked"]:
                h["unchecked"].append(f"{r['source']}/{r['kernel']}")
            continue
        if any(src == r["source"] and re.search(pattern, r["mutant"]["id"])
               for src, pattern in EQUIVALENT_MUTANTS):  # fmt: skip
            h["equivalent"].append(f"{r['source']}/{r['mutant']['id']}")
            continue
        kind = r["mutant"]["kind"]
        expected = {f"protocol_{e}" for e in r["mutant"]["expected"].split("/")}
        if r["finding"] and expected <= set(r["finding"][0]):
            h["masked"].append(f"{r['source']}/{r['mutant']['id']}")
            continue
        caught = r["normal"]["errors"] > r["baseline"]
        h["mutants"] += 1
        h["caught"] += caught
        k = h["by_kind"].setdefault(kind, [0, 0])
        k[0] += caught
        k[1] += 1
        if not caught:
            h["missed"].append(f"{r['source']}/{r['mutant']['id']}")
    return halves


def main() -> int:
    results = run_all()
    halves = summary(results)
    for half in ("tune", "held-out"):
        h = halves.get(half)
        if not h:
            continue
        print(f"## {half} half")
        print(f"correct kernels: {h['kernels']}, false alarms: {h['false_alarms']}")
        for f in h["flagged"]:
            print(f"  flagged {f}")
        for f in h["findings"]:
            print(f"  known finding {f}")
        print(f"pipeline rules not checked (said so): {len(h['unchecked'])}")
        for u in h["unchecked"]:
            print(f"  unchecked {u}")
        print(f"seeded bugs caught: {h['caught']} / {h['mutants']}; aborts: {h['aborts']}")
        if h["masked"]:
            print(f"  masked by a known finding (not counted): {len(h['masked'])}")
        if h["equivalent"]:
            print(f"  equivalent mutants (no bug, not counted): {len(h['equivalent'])}")
        for kind, (c, n) in sorted(h["by_kind"].items()):
            print(f"  {kind}: {c}/{n}")
        for m in h["missed"]:
            print(f"  missed {m}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
