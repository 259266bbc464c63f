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


UNARY_OPS = [*math_ops.UNARY, "sqrt", "rsqrt", "absf", "floor", "ceil", "round", "roundeven",
             "trunc", "sincos", "isinf", "isnan", "isfinite", "isnormal"]  # fmt: skip
ODD_TYPES = ["f32", "f16", "bf16", "f64", "f80", "f8E4M3FN", "vector<2xf32>", "vector<f32>",
             "vector<2x2xf16>", "vector<[4]xf32>", "tensor<4xf32>", "tensor<?xf32>",
             "vector<3xbf16>", "vector<2xf64>"]  # fmt: skip


def _bool_type(t):
    """t with its float element type replaced by i1."""
    return re.sub(r"(bf16|f16|f32|f64|f80|f8E4M3FN)", "i1", t)


def _odd_cases():
    """Every op on every type the parser takes, one function each; results
    are returned (a dead op would be erased before any pattern saw it)."""
    classify = ("isinf", "isnan", "isfinite", "isnormal")

    def fn(args, body, results):
        types = ", ".join(t for _, t in results)
        values = ", ".join(v for v, _ in results)
        return f"func.func @f({args}) -> ({types}) {{\n  {body}\n  return {values} : {types}\n}}"

    for t in ODD_TYPES:
        for op in UNARY_OPS:
            if op == "sincos":
                yield fn(f"%x: {t}", f"%y, %z = math.sincos %x : {t}", [("%y", t), ("%z", t)])
            else:
                r = _bool_type(t) if op in classify else t
                yield fn(f"%x: {t}", f"%y = math.{op} %x : {t}", [("%y", r)])
        for op in math_ops.BINARY + ["copysign"]:
            yield fn(f"%x: {t}", f"%y = math.{op} %x, %x : {t}", [("%y", t)])
        yield fn(f"%x: {t}", f"%y = math.fma %x, %x, %x : {t}", [("%y", t)])
        yield fn(f"%x: {t}", f"%y = math.clampf %x to [%x, %x] : {t}", [("%y", t)])
        yield fn(f"%x: {t}, %n: i32", f"%y = math.fpowi %x, %n : {t}, i32", [("%y", t)])
    for t in ["i1", "i8", "i64", "vector<2xi32>", "tensor<3xi16>", "index"]:
        yield fn(f"%x: {t}", f"%y = math.ipowi %x, %x : {t}", [("%y", t)])


@pytest.mark.parametrize("pipeline", ["nvwgmma-legalize-math", "nvwgmma-to-llvm-pipeline"])
def test_no_math_input_crashes_the_tools(nvwgmma_opt, tmp_path, pipeline):
    """Whatever math op on whatever type: rewritten or refused with a
    diagnostic, never an abort (upstream's approximations used to build
    vector ops, an unregistered dialect, on tensors)."""
    import subprocess

    source = tmp_path / "odd.mlir"
    source.write_text("\n// -----\n".join(_odd_cases()))
    proc = subprocess.run(
        [nvwgmma_opt, str(source), "--split-input-file", f"--{pipeline}"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    assert "Stack dump" not in proc.stderr and "LLVM ERROR" not in proc.stderr
    assert "(math_c1)" in proc.stderr  # the refusals are diagnostics
