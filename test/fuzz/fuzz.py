"""Differential IR fuzzer: no crash, ever; whatever verifies, assembles.

    python test/fuzz/fuzz.py --seed 1 --count 3000 [--jobs 2] [--report r.json]
        [--corpus DIR] [--no-ptxas]

Each input (test/fuzz/grammar.py: generated, then mostly mutated) goes,
in a worker process, through parse+verify, --nvwgmma-check-protocol,
--nvwgmma-insert-synchronization (whose output must then pass the check),
--convert-nvwgmma-to-nvvm followed by upstream --convert-nvvm-to-llvm,
--convert-nvwgmma-to-llvm, --nvwgmma-print-ptx and the full
--nvwgmma-to-llvm-pipeline. Properties:

1. nothing crashes: a worker that dies (abort, segfault) is found out, and
   its chunk re-run one input per process to name the input, which is saved;
2. every input the verifier accepts lowers to PTX that ptxas accepts:
   accepted inputs are lowered, batched into one module per few hundred,
   translated, compiled with llc and assembled; a rejected batch is bisected
   down to the inputs ptxas refuses.

Exit status 1 when either property fails. The report (JSON) holds the
counts: inputs, parsed, verified, protocol-clean, crashes, accepted but not
assemblable, and the time taken.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import grammar  # noqa: E402

PASSES = [
    "nvwgmma-check-protocol",
    "nvwgmma-insert-synchronization,nvwgmma-check-protocol",
    "convert-nvwgmma-to-nvvm,convert-nvvm-to-llvm",
    "convert-nvwgmma-to-llvm",
    "nvwgmma-print-ptx",
]
LOWER = "nvwgmma-to-llvm-pipeline"


def _quiet_stdout():
    """--nvwgmma-print-ptx writes to the process's stdout: send it nowhere."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)


class Checker:
    """Runs inputs through every pass pipeline. One context and one parsed
    PassManager per pipeline serve a whole chunk of inputs (a fresh module
    each), which is what makes a million inputs affordable."""

    def __init__(self):
        from nvwgmma import ir
        from nvwgmma.passmanager import PassManager

        self.ir = ir
        self.context = ir.Context()
        self.context.emit_error_diagnostics = False
        with self.context:
            self.pipelines = [
                (p, PassManager.parse(f"builtin.module({p})")) for p in [*PASSES, LOWER]
            ]

    def check(self, text: str) -> dict:
        """What one input did; raises nothing (a crash kills the process)."""
        ir = self.ir
        out = {"parsed": False, "verified": False, "protocol_clean": False, "lowered": None}
        with self.context:
            try:
                module = ir.Module.parse(text)
            except ir.MLIRError:
                return out
            out["parsed"] = out["verified"] = True
            out["mma_ops"] = text.count("nvwgmma.mma_async")
            # Upstream ops a mutation moved out of the function are upstream's
            # business (LLVM translation refuses them); nvwgmma's own are refused
            # by placement_c1. Such inputs still go through every pass.
            in_scope = all(op.operation.name == "llvm.func" for op in module.body.operations)
            # So are function names ptxas cannot take (a mutation may rename
            # @k to @nvwgmma.fence): compile_to_ptx refuses those up front.
            in_scope = in_scope and all(
                re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*", str(op.attributes["sym_name"]).strip('"'))
                for op in module.body.operations
            )
            for name, pm in self.pipelines:
                copy = module if name == LOWER else ir.Module.parse(text)
                try:
                    pm.run(copy.operation)
                    if name == PASSES[0]:
                        out["protocol_clean"] = True
                    if name == LOWER and in_scope:
                        out["lowered"] = str(module)
                except ir.MLIRError as error:
                    # Only the checker and the repairer may refuse a verified
                    # module; a lowering must not.
                    if name not in PASSES[:2]:
                        out["lowering_failed"] = f"{name}: {error}"[:2000]
        return out


def check_one(text: str) -> dict:
    return Checker().check(text)


def run_chunk(seed: int, start: int, count: int) -> list[dict]:
    _quiet_stdout()
    checker = Checker()
    return [checker.check(grammar.case(seed, i)) for i in range(start, start + count)]


def isolate(seed: int, index: int) -> int:
    """Re-run one input in a fresh interpreter; its exit status."""
    code = (
        f"import sys; sys.path.insert(0, {HERE!r}); import fuzz, grammar; "
        f"fuzz._quiet_stdout(); fuzz.check_one(grammar.case({seed}, {index}))"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode


# ----------------------------------------------------------------------------
# ptxas: accepted inputs, batched


def _batch_text(items) -> str:
    """One module holding the kernels of several lowered inputs."""
    bodies = []
    for index, lowered in items:
        inner = lowered.strip()
        inner = inner[inner.index("{") + 1 : inner.rindex("}")]
        bodies.append(inner.replace("@k(", f"@k{index}("))
    return "module {\n" + "\n".join(bodies) + "\n}\n"


def _assembles(items, tools) -> bool:
    mlir_translate, llc, ptxas = tools
    llvm_ir = subprocess.run(
        [mlir_translate, "--mlir-to-llvmir"],
        input=_batch_text(items),
        capture_output=True,
        text=True,
    )
    if llvm_ir.returncode:
        return False
    ptx = subprocess.run(
        [llc, "-march=nvptx64", "-mcpu=sm_90a", "-mattr=+ptx84"],
        input=llvm_ir.stdout,
        capture_output=True,
        text=True,
    )
    if ptx.returncode:
        return False
    if ptxas is None:
        return True
    path = f"/tmp/nvwgmma-fuzz-{os.getpid()}.ptx"
    with open(path, "w") as f:
        f.write(ptx.stdout)
    ok = (
        subprocess.run(
            [ptxas, "-arch=sm_90a", path, "-o", os.devnull], capture_output=True
        ).returncode
        == 0
    )
    os.unlink(path)
    return ok


def refused(items, tools) -> list[int]:
    """The inputs of a batch that do not assemble (bisecting a refusal)."""
    if _assembles(items, tools):
        return []
    if len(items) == 1:
        return [items[0][0]]
    half = len(items) // 2
    return refused(items[:half], tools) + refused(items[half:], tools)


# ----------------------------------------------------------------------------


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--start", type=int, default=0, help="first input index")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--chunk", type=int, default=250)
    parser.add_argument("--batch", type=int, default=300, help="accepted inputs per ptxas run")
    parser.add_argument("--report", help="write the counts here (JSON)")
    parser.add_argument("--corpus", help="write crashing and refused inputs here")
    parser.add_argument("--no-ptxas", action="store_true", help="stop at llc")
    args = parser.parse_args(argv)

    from nvwgmma.tools import find_tool, require_tool

    tools = (
        require_tool("mlir-translate"),
        require_tool("llc"),
        None if args.no_ptxas else find_tool("ptxas"),
    )
    began = time.time()
    counts = dict(
        inputs=0,
        parsed=0,
        verified=0,
        protocol_clean=0,
        crashes=0,
        lowering_failures=0,
        accepted_not_assemblable=0,
        assembled=0,
        accepted_mma_ops=0,
    )
    bad: list[dict] = []
    pending: list[tuple[int, str]] = []

    def flush():
        nonlocal pending
        if not pending:
            return
        for index in refused(pending, tools):
            counts["accepted_not_assemblable"] += 1
            bad.append({"kind": "not assemblable", "index": index})
        counts["assembled"] += len(pending)
        pending = []

    chunks = [
        (s, min(args.chunk, args.start + args.count - s))
        for s in range(args.start, args.start + args.count, args.chunk)
    ]
    while chunks:
        with cf.ProcessPoolExecutor(args.jobs) as pool:
            futures = {pool.submit(run_chunk, args.seed, s, n): (s, n) for s, n in chunks}
            chunks = []
            for future in cf.as_completed(futures):
                start, n = futures[future]
                try:
                    results = future.result()
                except cf.process.BrokenProcessPool:
                    # Some worker died: find the input(s), one per process.
                    for index in range(start, start + n):
                        status = isolate(args.seed, index)
                        counts["inputs"] += 1
                        if status != 0:
                            counts["crashes"] += 1
                            bad.append({"kind": "crash", "index": index, "status": status})
                    continue
                if (
                    args.report
                    and counts["inputs"] // 50_000 != (counts["inputs"] + len(results)) // 50_000
                ):
                    progress = dict(counts, seconds=round(time.time() - began, 1), partial=True)
                    with open(args.report, "w") as f:
                        json.dump({"counts": progress, "failures": bad[:200]}, f, indent=1)
                    print("progress", json.dumps(progress), flush=True)
                for offset, r in enumerate(results):
                    index = start + offset
                    counts["inputs"] += 1
                    counts["parsed"] += r["parsed"]
                    counts["verified"] += r["verified"]
                    counts["protocol_clean"] += r["protocol_clean"]
                    counts["accepted_mma_ops"] += r.get("mma_ops", 0)
                    if "lowering_failed" in r:
                        counts["lowering_failures"] += 1
                        bad.append(
                            {
                                "kind": "lowering failed",
                                "index": index,
                                "error": r["lowering_failed"],
                            }
                        )
                    if r["lowered"] and re.search(r"wgmma", r["lowered"]):
                        pending.append((index, r["lowered"]))
                        if len(pending) >= args.batch:
                            flush()
    flush()
    counts["seconds"] = round(time.time() - began, 1)
    counts["seed"], counts["start"] = args.seed, args.start
    counts["ptxas"] = tools[2] is not None
    print(json.dumps(counts, indent=1))
    for item in bad[:20]:
        print("FAIL", json.dumps(item)[:500])
    if args.corpus and bad:
        os.makedirs(args.corpus, exist_ok=True)
        for item in bad:
            path = os.path.join(
                args.corpus, f"{item['kind'].replace(' ', '-')}-{item['index']}.mlir"
            )
            with open(path, "w") as f:
                f.write(grammar.case(args.seed, item["index"]))
    if args.report:
        with open(args.report, "w") as f:
            json.dump({"counts": counts, "failures": bad[:200]}, f, indent=1)
    failed = counts["crashes"] + counts["accepted_not_assemblable"] + counts["lowering_failures"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
