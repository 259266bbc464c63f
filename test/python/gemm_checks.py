"""What every buildable GEMM configuration must pass: build, the strict
protocol check on the MLIR and on the PTX, and (where ptxas is installed) assembly without spills or
wgmma serialisation or any other performance loss ptxas reports. Returns
(meta, ptx), once per configuration and process: the shipped, ablation and
returnable sets overlap, and each configuration costs a build, a strict
check and ptxas."""

import functools
import re

import pytest


@functools.cache
def assert_clean(config):
    from nvwgmma.compile import compile_to_ptx, run_ptxas
    from nvwgmma.kernel.gemm import build_gemm
    from nvwgmma.passmanager import PassManager
    from nvwgmma.ptx_check import require_clean_ptx
    from nvwgmma.tools import find_tool

    module, meta = build_gemm(config)
    PassManager.parse("builtin.module(nvwgmma-check-protocol{strict=true})").run(module.operation)
    ptx = compile_to_ptx(module)
    require_clean_ptx(ptx)  # the protocol again, after LLVM scheduled it
    assert meta["dynamic_smem"] <= 227 * 1024
    assert_waits_before_memory(ptx, meta)
    if find_tool("ptxas") is None:
        pytest.skip("ptxas not found")
    messages = run_ptxas(ptx, extra_args=["-v"])
    assert "0 bytes spill stores, 0 bytes spill loads" in messages, messages
    assert "serialized" not in messages.lower(), messages
    # e.g. C7508: setmaxnreg ignored where the entry register count is unknown
    assert "potential performance loss" not in messages.lower(), messages
    return meta, ptx


# An instruction reading or writing global memory (a TMA copy included).
GLOBAL_ACCESS = re.compile(r"^\s*(?:@!?%p\d+\s+)?(?:ld|st|red|atom|cp)\.\S*global", re.M)


def assert_waits_before_memory(ptx: str, meta: dict) -> None:
    """A kernel meta calls programmatic waits on the previous grid
    (griddepcontrol.wait) before its first global memory access, and
    never lets the next one launch early."""
    assert meta["programmatic"]
    wait = ptx.find("griddepcontrol.wait;")
    first = GLOBAL_ACCESS.search(ptx)
    assert 0 <= wait < first.start(), (wait, first)
    assert "griddepcontrol.launch_dependents" not in ptx


def wgmma_loops(ptx: str) -> list[list[str]]:
    """The SASS of every loop of `ptx`'s kernel that issues wgmmas (HGMMA),
    one instruction text per entry: assembled with ptxas, disassembled with
    nvdisasm (skips where either is missing)."""
    import os
    import subprocess
    import tempfile

    from nvwgmma.tools import find_tool

    ptxas, nvdisasm = find_tool("ptxas"), find_tool("nvdisasm")
    if ptxas is None or nvdisasm is None:
        pytest.skip("ptxas or nvdisasm not found")
    with tempfile.TemporaryDirectory() as tmp:
        source, cubin = os.path.join(tmp, "k.ptx"), os.path.join(tmp, "k.cubin")
        with open(source, "w") as f:
            f.write(ptx)
        subprocess.run([ptxas, "-arch=sm_90a", source, "-o", cubin], check=True)
        sass = subprocess.run([nvdisasm, "-c", cubin], check=True, capture_output=True,
                              text=True).stdout  # fmt: skip
    code, labels = [], {}
    for label, text in SASS_LINE.findall(sass):
        if label:  # a branch target: the next instruction
            labels[label] = len(code)
        else:
            code.append(text.strip())
    loops = []
    for i, text in enumerate(code):
        target = BRANCH.search(text)
        if target and labels.get(target.group(1), i + 1) <= i:
            body = code[labels[target.group(1)] : i + 1]
            if any(t.startswith("HGMMA") for t in body):
                loops.append(body)
    return loops


SASS_LINE = re.compile(r"^(?:(\.L_x_\d+):|\s+/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;)", re.MULTILINE)
BRANCH = re.compile(r"BRA `\((\.L_x_\d+)\)")
