"""The C++ side of the installed package, as a compiler team uses it: the
mlir-opt plugin's path, and an out-of-tree consumer (its own *-opt and a C
program) configured with find_package(NVWGMMA), built and lit-tested against
the installed tree: the wheel's site-packages/nvwgmma, or, when testing a
CMake build tree (NVWGMMA_TOOLS_DIR), a `cmake --install` of it."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from nvwgmma import plugin

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONSUMER = ROOT / "test" / "install" / "consumer"


def run(*command, **kwargs):
    proc = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert proc.returncode == 0, f"{' '.join(map(str, command))}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_plugin_path_names_a_loadable_plugin():
    path = plugin.plugin_path()
    assert os.path.isfile(path) and path.endswith("libNVWGMMAPlugin.so")
    out = run(sys.executable, "-m", "nvwgmma.plugin")
    assert out.strip() == path
    args = run(sys.executable, "-m", "nvwgmma.plugin", "--mlir-opt-args").split()
    assert args == [f"--load-dialect-plugin={path}", f"--load-pass-plugin={path}"]


def test_plugin_module_reports_a_missing_prefix(monkeypatch, tmp_path):
    monkeypatch.setattr(plugin, "_prefixes", lambda: [str(tmp_path)])
    with pytest.raises(FileNotFoundError, match="cannot find the mlir-opt plugin"):
        plugin.plugin_path()
    monkeypatch.setattr(sys, "argv", ["x"])
    assert plugin.main([]) == 1


def test_upstream_mlir_opt_runs_our_passes_from_the_plugin(tmp_path):
    from nvwgmma.tools import require_tool

    kernel = tmp_path / "k.mlir"
    kernel.write_text((CONSUMER / "test" / "consumer.mlir").read_text())
    out = run(
        require_tool("mlir-opt"),
        *plugin.mlir_opt_args(),
        str(kernel),
        "--pass-pipeline=builtin.module(convert-nvwgmma-to-nvvm,convert-nvvm-to-llvm)",
    )
    assert "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16" in out
    assert "nvwgmma." not in out


def installed_prefix(tmp_path) -> tuple[pathlib.Path, list[str]]:
    """NVWGMMA_DIR of the installed tree, and extra CMake definitions."""
    tools = os.environ.get("NVWGMMA_TOOLS_DIR")
    if not tools:
        return pathlib.Path(plugin.cmake_dir()), []
    build = pathlib.Path(tools).resolve().parent
    prefix = tmp_path / "prefix"
    run("cmake", "--install", str(build), "--prefix", str(prefix), "--component", "nvwgmma-dev")
    cache = (build / "CMakeCache.txt").read_text().splitlines()
    defs = [
        "-D" + line.replace(":PATH=", "=").replace(":UNINITIALIZED=", "=")
        for line in cache
        if line.startswith(("MLIR_DIR:", "LLVM_DIR:"))
    ]
    return prefix / "lib" / "cmake" / "nvwgmma", defs


@pytest.mark.skipif(
    not (shutil.which("cmake") and shutil.which("ninja")), reason="needs cmake and ninja"
)
def test_out_of_tree_consumer_builds_and_passes_its_lit_test(tmp_path):
    config_dir, defs = installed_prefix(tmp_path)
    assert (config_dir / "NVWGMMAConfig.cmake").is_file()
    build = tmp_path / "consumer"
    # Only NVWGMMA_DIR: the package finds the MLIR and LLVM it needs itself.
    run(
        "cmake", "-G", "Ninja", "-S", str(CONSUMER), "-B", str(build),
        f"-DNVWGMMA_DIR={config_dir}", *defs,
    )  # fmt: skip
    run("ninja", "-C", str(build))
    from nvwgmma.tools import require_tool

    filecheck = pathlib.Path(require_tool("llc")).with_name("FileCheck")
    out = run(
        sys.executable, "-c", "from lit.main import main; main()", "-v",
        str(CONSUMER / "test"),
        "--param", f"consumer_bin={build}",
        "--param", f"filecheck={filecheck}",
    )  # fmt: skip
    assert "Passed: 1" in out, out
