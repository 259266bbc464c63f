"""Every shipped GEMM configuration (nvwgmma.kernel.gemm.SHIPPED, and the
ablation variants the benchmark measures) builds, verifies, passes the
protocol checker and assembles with ptxas: no spills, no wgmma
serialisation."""

import pytest


def _configs():
    from nvwgmma.kernel.gemm import ABLATIONS, SHIPPED

    return SHIPPED + list(ABLATIONS.values())


@pytest.mark.parametrize("index", range(len(_configs())))
def test_gemm_configuration_assembles_cleanly(ctx, index):
    from nvwgmma.compile import compile_to_ptx, run_ptxas
    from nvwgmma.kernel.gemm import build_gemm
    from nvwgmma.passmanager import PassManager

    config = _configs()[index]
    module, meta = build_gemm(config)
    PassManager.parse("builtin.module(nvwgmma-check-protocol)").run(module.operation)
    ptx = compile_to_ptx(module)
    n = config.tile_n
    assert (
        ptx.count(f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{config.dtype}.{config.dtype}") == 4
    )
    assert meta["dynamic_smem"] <= 227 * 1024
    from nvwgmma.tools import find_tool

    if find_tool("ptxas") is None:
        pytest.skip("ptxas not found")
    messages = run_ptxas(ptx, extra_args=["-v"])
    assert "0 bytes spill stores, 0 bytes spill loads" in messages, messages
    assert "serialized" not in messages.lower(), messages


def test_gemm_cli_writes_ptx_and_metadata(tmp_path):
    import json
    import subprocess
    import sys

    ptx, meta = tmp_path / "g.ptx", tmp_path / "g.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "nvwgmma.kernel.gemm",
            "--dtype",
            "bf16",
            "--out-dtype",
            "bf16",
            "--ptx",
            str(ptx),
            "--json",
            str(meta),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(meta.read_text())
    assert data["block"] == [384, 1, 1] and data["tile"] == [128, 256, 64]
    assert ".entry gemm" in ptx.read_text()


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(dtype="e4m3"), "dtype must be bf16 or f16"),
        (dict(tile_n=200), "tile_n must be a legal wgmma N that is a multiple of 64"),
        (dict(out_dtype="f32"), "epilogue must be registers for f32 output"),
        (dict(stages=6), "must fit 227 KiB"),
    ],
)
def test_gemm_refuses_bad_configurations(ctx, kwargs, message):
    from nvwgmma.kernel.gemm import GemmConfig, build_gemm

    with pytest.raises(ValueError, match=message):
        build_gemm(GemmConfig(**kwargs))
