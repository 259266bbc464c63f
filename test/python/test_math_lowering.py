"""math ops through compile_to_ptx (nvwgmma-legalize-math): every case the
GPU check runs (test/gpu/math_ops.py) compiles and assembles; f64
transcendentals are refused with math_c1; gpu.module kernels get no
libdevice calls."""

import pathlib
import re
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "gpu"))

import math_ops  # noqa: E402  (test/gpu/math_ops.py: the kernels and cases)

CASES = list(math_ops.cases())


def _compile(source):
    from nvwgmma import ir
    from nvwgmma.compile import compile_to_ptx

    with ir.Context():
        return compile_to_ptx(ir.Module.parse(source))


@pytest.mark.ptxas
@pytest.mark.parametrize("op,t,fast", CASES, ids=[math_ops.name(*c) for c in CASES])
def test_every_case_compiles_and_assembles(op, t, fast):
    from nvwgmma.compile import run_ptxas

    ptx = _compile(math_ops.mlir_source(op, t, fast))
    assert ".extern" not in ptx  # no library call left for ptxas to resolve
    run_ptxas(ptx)


def test_afn_uses_the_sfu_and_accurate_does_not():
    fast = _compile(math_ops.mlir_source("exp", "f32", True))
    assert re.search(r"ex2\.approx\.ftz\.f32", fast)
    accurate = _compile(math_ops.mlir_source("exp", "f32", False))
    # The polynomial: no ex2 at all, a chain of FMAs.
    assert "ex2.approx" not in accurate
    assert len(re.findall(r"\bfma\.rn\.f32", accurate)) >= 5
    tanh = _compile(math_ops.mlir_source("tanh", "bf16", True))
    assert "tanh.approx.f32" in tanh


@pytest.mark.parametrize("op", ["exp", "log", "sin", "tanh", "erf", "exp2"])
def test_f64_transcendentals_are_refused(op):
    from nvwgmma import ir
    from nvwgmma.compile import compile_to_ptx

    source = f"""
llvm.func @k(%p: !llvm.ptr, %x: f64) attributes {{nvvm.kernel}} {{
  %y = math.{op} %x : f64
  llvm.store %y, %p : f64, !llvm.ptr
  llvm.return
}}"""
    with ir.Context():
        with pytest.raises(Exception) as raised:
            compile_to_ptx(ir.Module.parse(source))
    assert (
        f"operand of 'math.{op}' must be f32, f16 or bf16, or a 1-D vector of them (nvwgmma "
        "computes it in f32, lane by lane; PTX has no f64 instruction for it), but got f64 "
        "(math_c1)" in str(raised.value)
    )


@pytest.mark.ptxas
def test_gpu_module_kernels_get_no_libdevice_calls():
    from nvwgmma.compile import run_ptxas

    ops = ["exp", "log", "sqrt", "floor", "absf", "rsqrt", "tanh", "sin", "atan", "cbrt"]
    body = "\n".join(
        f"      %v{i} = math.{op} %v{i - 1} : f32" for i, op in enumerate(ops, start=1)
    )
    source = f"""
module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @kernel(%p: !llvm.ptr, %v0: f32) kernel {{
{body}
      llvm.store %v{len(ops)}, %p : f32, !llvm.ptr
      gpu.return
    }}
  }}
}}"""
    ptx = _compile(source)
    assert "__nv_" not in ptx
    assert "sqrt.rn.f32" in ptx and "cvt.rmi.f32.f32" in ptx
    run_ptxas(ptx)


def test_modules_without_math_are_left_alone():
    """The pass touches math ops only: a kernel with an inline-asm immediate
    operand and constants in two blocks keeps them (a module-wide pattern
    driver would merge the blocks and pass the immediate as a block
    argument, which llc refuses)."""
    from nvwgmma import ir
    from nvwgmma.passmanager import PassManager

    source = """
llvm.func @k(%c: i1) -> i32 {
  llvm.cond_br %c, ^a, ^b
^a:
  %one = llvm.mlir.constant(1 : i32) : i32
  %x = llvm.inline_asm has_side_effects "mov.u32 $0, $1;", "=r,n" %one : (i32) -> i32
  llvm.return %x : i32
^b:
  %two = llvm.mlir.constant(2 : i32) : i32
  %y = llvm.inline_asm has_side_effects "mov.u32 $0, $1;", "=r,n" %two : (i32) -> i32
  llvm.return %y : i32
}"""
    with ir.Context():
        module = ir.Module.parse(source)
        before = str(module)
        PassManager.parse("builtin.module(nvwgmma-legalize-math)").run(module.operation)
        assert str(module) == before
