"""The README's Python and nvwgmma-opt examples work exactly as written."""

import pathlib
import re
import subprocess

import pytest

README = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()


def blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


@pytest.mark.ptxas
def test_python_example_runs(capsys):
    (code,) = [b for b in blocks("python") if "compile_to_ptx" in b]
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "nvwgmma.wait_group 0" in out
    assert "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16" in out
    assert re.search(r"wgmma.wait_group.sync.aligned\s+0;", out)
    assert 'llvm.call_intrinsic "llvm.nvvm.wgmma.wait_group.sync.aligned"' in out


def test_nvwgmma_opt_example_runs(tmp_path, nvwgmma_opt):
    (script,) = [b for b in blocks("sh") if "cat > /tmp/k.mlir" in b]
    tool = nvwgmma_opt
    script = script.replace("/tmp/k.mlir", str(tmp_path / "k.mlir"))
    script = script.replace(".venv/bin/nvwgmma-opt", tool)
    proc = subprocess.run(["bash", "-c", "set -e\n" + script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "nvvm.wgmma.mma_async" in proc.stdout
    assert "llvm.inline_asm has_side_effects" in proc.stdout
    assert "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%d0, %d1, %d2, %d3}" in proc.stdout


def test_python_md_lattice_example_runs():
    """docs/python.md's lattice block is self-contained: its asserts hold."""
    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md").read_text()
    (code,) = [
        b
        for b in re.findall(r"```python\n(.*?)```", text, flags=re.S)
        if "from nvwgmma import lattice" in b
    ]
    exec(compile(code, "docs/python.md", "exec"), {})


def test_python_md_math_example_runs():
    """docs/python.md's math block compiles its kernel and its asserts hold."""
    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md").read_text()
    (code,) = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "math.erf" in b]
    exec(compile(code, "docs/python.md", "exec"), {})


def test_compiler_team_example_runs(tmp_path, nvwgmma_opt):
    """The plugin, raise and checker commands of "In your own tools"."""
    import sys

    (make_kernel,) = [b for b in blocks("sh") if "cat > /tmp/k.mlir" in b]
    make_kernel = make_kernel[: make_kernel.index("\nMLIR\n") + len("\nMLIR\n")]
    (script,) = [b for b in blocks("sh") if "nvwgmma.plugin" in b]
    script = make_kernel + script
    script = script.replace("/tmp/", str(tmp_path) + "/")
    script = script.replace(".venv/bin/nvwgmma-opt", nvwgmma_opt)
    script = script.replace(".venv/bin/python", sys.executable)
    proc = subprocess.run(["bash", "-c", "set -e\n" + script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    # mlir-opt with the plugin lowered nvwgmma to PTX inline asm ...
    assert "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16" in proc.stdout
    # ... and the raised upstream IR is nvwgmma again, checked clean.
    assert "nvwgmma.mma_async %arg0, %arg1, %arg2" in proc.stdout
    assert proc.stderr == ""
