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
    n, k = config.tile_n, {"bf16": 16, "f16": 16, "e4m3": 32, "e5m2": 32}[config.dtype]
    # One 128-byte row of K per stage: 4 instructions of 32 bytes each.
    assert (
        ptx.count(f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{config.dtype}.{config.dtype}")
        == 4
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
        (dict(dtype="tf32"), "dtype must be one of bf16, f16, e4m3, e5m2, but got 'tf32'"),
        (dict(dtype="e4m3", tile_k=64), "tile_k must be one 128-byte swizzled row, 128 e4m3"),
        (dict(epilogue_chunks=3), "epilogue_chunks must split tile_n into multiples of 64"),
        (dict(tile_n=200), "tile_n must be a legal wgmma N that is a multiple of 64"),
        (dict(out_dtype="f32"), "must fit 227 KiB"),  # f32 C unchunked: 128 KB of staging
        (dict(stages=6), "must fit 227 KiB"),
    ],
)
def test_gemm_refuses_bad_configurations(ctx, kwargs, message):
    from nvwgmma.kernel.gemm import GemmConfig, build_gemm

    with pytest.raises(ValueError, match=message):
        build_gemm(GemmConfig(**kwargs))


@pytest.mark.parametrize(
    "m,n,k,cluster,expected",
    [
        (4096, 4096, 4096, 1, 128),  # 512 tiles: 4 waves of 128, not 116 x 4 + 16 x 3
        (8192, 8192, 8192, 1, 128),  # 2048 tiles: 16 waves
        (4096, 14336, 4096, 1, 128),  # 1792 tiles: 14 waves
        (1024, 1024, 4096, 1, 32),  # fewer tiles than SMs: one each
        (4096, 4096, 4096, 2, 128),  # 256 cluster units on 66 cluster slots
        (1280, 256, 4096, 2, 10),
    ],
)
def test_grid_is_persistent_and_balanced(m, n, k, cluster, expected):
    import sys

    from nvwgmma.kernel.gemm import PERSISTENT_MAX_K, grid_size

    meta = {
        "tile": [128, 256, 64],
        "cluster": [cluster, 1, 1],
        "persistent_max_k": PERSISTENT_MAX_K,
    }
    grid = grid_size(meta, m, n, k, 132)
    assert grid == expected and grid % cluster == 0
    tiles = (m // 128) * (n // 256)
    per_cta = [len(range(c, tiles // cluster, grid // cluster)) for c in range(grid // cluster)]
    assert max(per_cta) - min(per_cta) <= 1 and max(per_cta) == -(
        -tiles // cluster // (132 // cluster)
    )
    # The device runner launches with the generator's policy.
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parents[2] / "bench" / "gemm"))
    import run

    problem = __import__("types").SimpleNamespace(m=m, n=n, k=k)
    assert run._grid(meta, problem, 132, "balanced") == grid
