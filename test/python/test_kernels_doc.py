"""docs/kernels.md: its code blocks run in order, build a kernel that passes
the protocol checker, and the PTX assembles."""

import pathlib
import re

import pytest

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "kernels.md"


def doc_blocks(text=None):
    return re.findall(r"```python\n(.*?)```", text or DOC.read_text(), flags=re.S)


def run_doc(out_type="f32"):
    """The namespace the tutorial leaves behind (with its `ptx`). out_type
    "bf16-tma" gives part II the stmatrix + TMA-store epilogue."""
    code = "\n".join(doc_blocks())
    if out_type == "bf16-tma":
        code = code.replace('finish("f32")', 'finish("bf16")')
        code = code.replace('    finish_ws("f32")', "    finish_ws_tma()")
    for finish in ("finish", "finish_ws"):
        code = code.replace(f'{finish}("f32")', f'{finish}("{out_type}")')
    namespace = {}
    try:
        exec(compile(code, str(DOC), "exec"), namespace)
    finally:
        if "ctx" in namespace:
            namespace["ctx"].__exit__(None, None, None)
    return namespace


def test_tma_epilogue_variant():
    ptx2 = run_doc("bf16-tma")["ptx2"]
    assert ptx2.count("stmatrix.sync.aligned.m8n8.x4.shared.b16") == 8
    assert ptx2.count("cp.async.bulk.tensor.2d.global.shared::cta") == 2
    assert re.search(r"cp\.async\.bulk\.wait_group\.read\s+0;", ptx2) and "st.global" not in ptx2


@pytest.mark.parametrize("out_type", ["f32", "bf16"])
def test_tutorial_builds_a_verified_kernel(out_type):
    ns = run_doc(out_type)
    ptx = ns["ptx"]
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16") == 4
    assert "fence.proxy.async.shared::cta" in ptx
    ptx2 = ns["ptx2"]
    assert ptx2.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16") == 4
    assert ptx2.count("cp.async.bulk.tensor.2d.shared::cta.global") == 2
    assert "mbarrier.try_wait.parity" in ptx2 and "setmaxnreg.dec.sync.aligned.u32" in ptx2


@pytest.mark.ptxas
@pytest.mark.parametrize("name,out_type", [("ptx", "f32"), ("ptx2", "f32"), ("ptx2", "bf16-tma")])
def test_tutorial_kernels_assemble(name, out_type):
    from nvwgmma.compile import run_ptxas

    messages = run_ptxas(run_doc(out_type)[name], extra_args=["-v"])
    assert "0 bytes spill stores" in messages and "serialized" not in messages


@pytest.mark.parametrize("name,out_type", [("ptx", "f32"), ("ptx2", "f32"), ("ptx2", "bf16-tma"),
                                           ("attn_ptx", "f32")])  # fmt: skip
def test_tutorial_kernels_keep_the_protocol_in_ptx(name, out_type):
    from nvwgmma.ptx_check import require_clean_ptx

    require_clean_ptx(run_doc(out_type)[name])


def test_attention_part_builds_p_v_from_registers():
    ptx = run_doc()["attn_ptx"]
    mma = r"wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.bf16\.bf16"
    # S = Q Kᵀ: both operands descriptors; O += P V: A in four registers.
    assert len(re.findall(mma + r" \{[^}]*\}, %rd\d+, %rd\d+", ptx)) == 4
    assert len(re.findall(mma + r" \{[^}]*\}, \{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd\d+", ptx)) == 4
    assert ptx.count("cvt.rn.bf16x2.f32") == 16  # P: 32 f32 per thread into 16 bf16 pairs
    assert "rcp.approx.ftz.f32" in ptx and "mbarrier.try_wait.parity" in ptx


@pytest.mark.ptxas
def test_attention_part_assembles():
    from nvwgmma.compile import run_ptxas

    messages = run_ptxas(run_doc()["attn_ptx"], extra_args=["-v"])
    assert "0 bytes spill stores" in messages and "serialized" not in messages
    assert "injected" not in messages


def test_extending_the_gemm_builds_a_kernel_with_its_own_scheduler():
    """Part 18: build_gemm with a scheduler of the reader's and an extra
    parameter -- the scheduler reads it (the batch of every unit), the
    kernel passes the strict check (in the doc's code) and assembles."""
    from nvwgmma.compile import run_ptxas
    from nvwgmma.tools import find_tool

    ns = run_doc()
    ptx = ns["one_batch_ptx"]
    assert re.search(r"\.param \.[bu]32 gemm_param_15\b", ptx)
    assert re.search(r"ld\.param\.[bu]32\s+%r\d+, \[gemm_param_15\]", ptx)
    if find_tool("ptxas") is not None:
        assert "0 bytes spill stores" in run_ptxas(ptx, extra_args=["-v"])


@pytest.mark.parametrize(
    "extra,message",
    [
        ((("M", "i32"),), "an extra parameter's name must be a new identifier"),
        (
            (("which", "i32"), ("which", "i64")),
            "an extra parameter's name must be a new identifier",
        ),
        ((("which",),), r"extra_params must be \(name, MLIR type\) string pairs"),
        ("scheduler", "scheduler must be a callable \\(or None: the library's\\), but got int"),
    ],
)
def test_extra_params_are_checked(ctx, extra, message):
    from nvwgmma.kernel.gemm import build_gemm

    with pytest.raises((TypeError, ValueError), match=message):
        if extra == "scheduler":
            build_gemm(scheduler=42)
        else:
            build_gemm(extra_params=extra)
