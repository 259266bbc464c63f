"""compile_to_ptx: llvm.func and gpu.module kernels down to PTX ptxas accepts."""

import re

import pytest

LLVM_KERNEL = """
llvm.func @kernel(%descA: i64, %descB: i64) attributes {nvvm.kernel} {
  %acc = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32)>
  nvwgmma.fence
  %d = nvwgmma.mma_async %descA, %descB, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, zero], A [f16, one, row], B [f16, one, col]
         : i64, !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
  nvwgmma.commit_group
  nvwgmma.wait_group 1
  llvm.return
}
"""

GPU_KERNEL = """
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel(%descA: i64, %descB: i64, %k: index) kernel {
      %acc = llvm.mlir.zero : !llvm.struct<(i32, i32, i32, i32)>
      %c0 = arith.constant 0 : index
      %first = arith.cmpi ne, %k, %c0 : index
      nvwgmma.fence
      %d = nvwgmma.mma_async %descA, %descB, %acc, #nvwgmma.shape<m = 64, n = 8, k = 32>,
             D [s32, %first], A [s8, one, row], B [u8, one, col]
             : i64, !llvm.struct<(i32, i32, i32, i32)> -> !llvm.struct<(i32, i32, i32, i32)>
      nvwgmma.commit_group
      nvwgmma.wait_group 0
      gpu.return
    }
  }
}
"""


@pytest.mark.ptxas
def test_llvm_func_kernel_to_ptx(ctx):
    from nvwgmma import ir
    from nvwgmma.compile import compile_to_ptx

    module = ir.Module.parse(LLVM_KERNEL)
    before = str(module)
    ptx = compile_to_ptx(module, assemble=True)
    assert str(module) == before  # the caller's module is not lowered
    assert ".version 8.0" in ptx and ".target sm_90a" in ptx
    assert "wgmma.fence.sync.aligned;" in ptx
    assert "wgmma.commit_group.sync.aligned;" in ptx
    assert re.search(r"wgmma.wait_group.sync.aligned\s+1;", ptx)
    assert "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16" in ptx


@pytest.mark.ptxas
def test_gpu_module_kernel_to_ptx_picks_version_84(ctx):
    from nvwgmma import ir
    from nvwgmma.compile import compile_to_ptx, required_ptx_version

    module = ir.Module.parse(GPU_KERNEL)
    assert required_ptx_version(module) == 84  # mixed s8 x u8
    ptx = compile_to_ptx(module, assemble=True)
    assert ".version 8.4" in ptx
    assert ".visible .entry kernel(" in ptx
    assert "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.u8" in ptx
    assert re.search(r"wgmma.wait_group.sync.aligned\s+0;", ptx)


def test_too_low_version_is_our_error_not_ptxas(ctx):
    from nvwgmma import ir
    from nvwgmma.compile import compile_to_ptx

    module = ir.Module.parse(GPU_KERNEL)
    with pytest.raises(
        ir.MLIRError, match=r"PTX ISA version must be 8.4 or later .*, but got 8.0 \(target_c2\)"
    ):
        compile_to_ptx(module, ptx_version=80)


def test_non_90a_target_is_refused(ctx):
    from nvwgmma import ir
    from nvwgmma.compile import compile_to_ptx

    module = ir.Module.parse(LLVM_KERNEL)
    with pytest.raises(
        ir.MLIRError, match=r"target must be sm_90a for .*, but got sm_90 \(target_c1\)"
    ):
        compile_to_ptx(module, chip="sm_90")


def test_lower_to_llvm_leaves_only_llvm(ctx):
    from nvwgmma import ir
    from nvwgmma.compile import lower_to_llvm

    module = ir.Module.parse(GPU_KERNEL)
    lower_to_llvm(module)
    text = str(module)
    assert "nvwgmma." not in text and "arith." not in text and "gpu.func" not in text
    assert "llvm.inline_asm" in text


@pytest.mark.ptxas
def test_command_line(tmp_path):
    import subprocess
    import sys

    src = tmp_path / "k.mlir"
    src.write_text(LLVM_KERNEL)
    out = tmp_path / "k.ptx"
    proc = subprocess.run(
        [sys.executable, "-m", "nvwgmma.compile", str(src), "-o", str(out), "--assemble"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "wgmma.fence.sync.aligned;" in out.read_text()


@pytest.mark.ptxas
def test_module_mixing_tma_mbarrier_setmaxnreg_and_wgmma_assembles(ctx):
    """TMA into shared::cta needs a newer PTX ISA than nvwgmma's ops; with no
    version asked for, compile_to_ptx raises it to what llc needs."""
    import pathlib

    from nvwgmma import ir
    from nvwgmma.compile import compile_to_ptx

    text = (pathlib.Path(__file__).parent / "data" / "mixed_tma_mbarrier.mlir").read_text()
    ptx = compile_to_ptx(ir.Module.parse(text), assemble=True)
    assert "cp.async.bulk.tensor.2d.shared::cta.global" in ptx
    assert "cp.async.bulk.tensor.2d.shared::cluster.global" in ptx
    assert "mbarrier.try_wait.parity" in ptx and "setmaxnreg.inc.sync.aligned.u32" in ptx
    assert "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16" in ptx


def test_explicit_version_too_low_for_tma_is_a_clean_error(ctx):
    import pathlib

    from nvwgmma import ir
    from nvwgmma.compile import CompileError, compile_to_ptx

    text = (pathlib.Path(__file__).parent / "data" / "mixed_tma_mbarrier.mlir").read_text()
    with pytest.raises(CompileError) as info:
        compile_to_ptx(ir.Module.parse(text), ptx_version=80)
    message = str(info.value)
    assert message.startswith("llc crashed") and "Cannot select: intrinsic" in message
    assert "Stack dump" not in message and len(message.splitlines()) <= 3
