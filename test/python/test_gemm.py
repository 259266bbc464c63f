"""Every shipped GEMM configuration (nvwgmma.kernel.gemm.SHIPPED, and the
ablation variants the benchmark measures) builds, verifies, passes the
protocol checker and assembles with ptxas: no spills, no wgmma
serialisation."""

import re

import pytest


def _library_configs():
    """What the pieces form beyond SHIPPED: both layouts of each operand,
    fp8 and masked register outputs, fused chains, a cluster with N-major B."""
    from nvwgmma.kernel.gemm import Activation, Alpha, Bias, GemmConfig, Residual, Scale

    return [
        GemmConfig(a_major="M", b_major="N"),
        GemmConfig(a_major="M"),
        GemmConfig(b_major="N", cluster_m=2),
        GemmConfig(epilogue="registers", stages=4, out_dtype="e4m3", fusion=(Scale(),)),
        GemmConfig(dtype="e4m3", out_dtype="e5m2", epilogue="registers", stages=4),
        GemmConfig(epilogue="registers", stages=4, out_dtype="f32", fusion=(Bias(dtype="f32"),)),
        GemmConfig(fusion=(Alpha(), Bias(), Activation("gelu"), Residual(beta=True))),
        GemmConfig(fusion=(Bias(axis="row"), Activation("gelu_tanh"))),
        GemmConfig(fusion=(Activation("silu"), Residual(dtype="f32"))),
        GemmConfig(out_dtype="f32", epilogue_chunks=2, fusion=(Activation("relu"),)),
        # The schedulers with a fix-up, on both tiles and both epilogues.
        GemmConfig(scheduler="split_k", splits=3),
        GemmConfig(tile_n=128, stages=6, scheduler="split_k", splits=4),
        GemmConfig(scheduler="stream_k", fusion=(Bias(), Activation("gelu"))),
        GemmConfig(tile_n=128, stages=6, scheduler="stream_k", a_major="M", b_major="N"),
        GemmConfig(dtype="e4m3", tile_n=128, stages=6, scheduler="split_k", splits=2),
        GemmConfig(out_dtype="f32", epilogue="registers", stages=4, scheduler="stream_k"),
        # Ping-pong, alone and with each fix-up scheduler.
        GemmConfig(schedule="pingpong", stages=4, fusion=(Bias(), Activation("silu"))),
        GemmConfig(schedule="pingpong", tile_n=128, stages=8, scheduler="split_k", splits=2),
        GemmConfig(
            schedule="pingpong", scheduler="stream_k", out_dtype="f32", epilogue="registers"
        ),  # fmt: skip
        GemmConfig(schedule="pingpong", dtype="e4m3", stages=4),
        # One warpgroup per 128 rows (rule 3's consumer: 256 threads, so the
        # kernel states its entry registers), with each scheduler and schedule.
        GemmConfig(
            tile_n=128, consumers=1, consumer_rows=128, stages=6, inflight=1, split_wait=True
        ),  # fmt: skip
        GemmConfig(
            dtype="e4m3",
            tile_n=128,
            consumers=1,
            consumer_rows=128,
            stages=6,
            scheduler="split_k",
            splits=3,
            fusion=(Bias(),),
        ),  # fmt: skip
        GemmConfig(tile_n=128, consumer_rows=128, stages=4, scheduler="stream_k", a_major="M"),
        GemmConfig(
            tile_n=128,
            consumer_rows=128,
            stages=6,
            schedule="pingpong",
            inflight=1,
            split_wait=True,
            out_dtype="f32",
            epilogue="registers",
        ),  # fmt: skip
        GemmConfig(tile_n=128, consumers=1, consumer_rows=128, stages=6, cluster_m=2),
        # Split wait on one 64-row block: the stage's K steps in two groups.
        GemmConfig(inflight=1, split_wait=True),
        GemmConfig(
            tile_n=128,
            consumers=1,
            stages=8,
            inflight=1,
            split_wait=True,
            scheduler="split_k",
            splits=2,
        ),  # fmt: skip
    ]


def _configs():
    from nvwgmma.kernel.gemm import ABLATIONS, SHIPPED

    return SHIPPED + list(ABLATIONS.values()) + _library_configs()


@pytest.mark.parametrize("index", range(len(_configs())))
def test_gemm_configuration_assembles_cleanly(ctx, index):
    from gemm_checks import assert_clean

    config = _configs()[index]
    _, ptx = assert_clean(config)
    n, k = config.tile_n, {"bf16": 16, "f16": 16, "e4m3": 32, "e5m2": 32}[config.dtype]
    # One 128-byte row of K per stage: 4 instructions of 32 bytes each, per
    # 64-row block of a consumer.
    wgmma = f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{config.dtype}.{config.dtype}"
    assert ptx.count(wgmma) == 4 * config.consumer_rows // 64
    # 256-thread kernels name their entry registers (the increase's count),
    # and so do narrow 384-thread ones (their share, 168): ptxas drops
    # setmaxnreg otherwise.
    if config.consumers == 1 or config.tile_n <= 64:
        entry = config.consumer_regs if config.consumers == 1 else 168
        assert re.search(rf"\.maxnreg {entry}\b", ptx), ptx[:400]
    else:
        assert ".maxnreg" not in ptx


@pytest.mark.parametrize(
    "fields,groups",
    [
        # Two 64-row blocks: each block's four K steps are a group.
        (dict(tile_n=128, consumers=1, consumer_rows=128, stages=6), [4, 4]),
        # One block: the stage's first two K steps, then its last two.
        (dict(), [2, 2]),
    ],
)
def test_split_wait_waits_for_the_previous_stage_between_two_groups(ctx, fields, groups):
    import re

    from nvwgmma.compile import compile_to_ptx
    from nvwgmma.kernel.gemm import GemmConfig, build_gemm

    config = GemmConfig(inflight=1, split_wait=True, **fields)
    ptx = compile_to_ptx(build_gemm(config)[0])
    # Each group: a fence, its wgmmas, a commit (however the loop is laid out).
    found = [
        g.count("wgmma.mma_async") for g in re.findall(r"wgmma\.fence.*?commit_group", ptx, re.S)
    ]
    assert found == groups
    # The first group's commit is followed at once by the wait for the
    # previous stage's group; the only other wait drains the last one.
    assert re.search(r"commit_group\.sync\.aligned;\s+wgmma\.wait_group\.sync\.aligned\s+1;", ptx)
    assert re.findall(r"wait_group\.sync\.aligned\s+(\d)", ptx) == ["1", "0"]


@pytest.mark.parametrize(
    "fields", [{}, dict(tile_n=128, consumers=1, consumer_rows=128), dict(schedule="pingpong")]
)
def test_warpgroup_index_is_broadcast_before_the_roles_split(ctx, fields):
    """The warpgroup index comes from lane 0 (shfl.sync.idx), in every
    thread before any branch: what lets ptxas keep the consumers' wgmma
    descriptors in uniform registers (see _ir.warpgroup_index)."""
    import re

    from nvwgmma.compile import compile_to_ptx
    from nvwgmma.kernel.gemm import GemmConfig, build_gemm

    ptx = compile_to_ptx(build_gemm(GemmConfig(**fields))[0])
    shuffles = re.findall(r"shfl\.sync\.idx\.b32\s+%r\d+, (%r\d+), 0, 31, -1;", ptx)
    assert len(shuffles) == 1
    index = re.search(r"shr\.u32\s+" + shuffles[0] + r", %r\d+, 7;", ptx)
    assert index is not None, "the broadcast value is tid / 128"
    assert ptx.index("shfl.sync.idx") < ptx.index("bra")


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
        (dict(epilogue_chunks=3), "epilogue_chunks must split tile_n into multiples of 16"),
        (dict(tile_n=200), "tile_n must be a legal wgmma N that is a multiple of 16"),
        (dict(out_dtype="f32"), "must fit 227 KiB"),  # f32 C unchunked: 128 KB of staging
        (dict(stages=6), "must fit 227 KiB"),
        (dict(dtype="e4m3", b_major="N"), "a_major and b_major must be K for e4m3 inputs"),
        (dict(out_dtype="e4m3"), "out_dtype must be bf16, f16 or f32 for the tma epilogue"),
        (dict(a_major="N"), "a_major must be one of K, M, but got 'N'"),
        (dict(fusion=("gelu",)), "fusion must hold Alpha, Bias, Activation, Residual, Scale"),
        (dict(scheduler="split"), "scheduler must be one of persistent, split_k, stream_k"),
        (dict(splits=2), "splits must be 1 unless scheduler is 'split_k', but got 2"),
        (dict(scheduler="split_k"), r"splits must be in \[2, 64\], but got 1"),
        (dict(scheduler="stream_k", cluster_m=2), "cluster_m must be 1 with the stream_k"),
        (dict(group_table=24), r"group_table must be 0 or a power of two \(the search halves"),
        (dict(group_table=2048), r"group_table must be in \[0, 1024\], but got 2048"),
        (
            dict(schedule="pingpong", cluster_m=2),
            "the pingpong schedule takes 2 consumers and "
            "cluster_m 1, but got consumers=2, cluster_m=2",
        ),
        (dict(schedule="pingpong", consumers=1), "the pingpong schedule takes 2 consumers"),
        (dict(schedule="pp"), "schedule must be one of cooperative, pingpong, but got 'pp'"),
        (dict(consumer_rows=96), "consumer_rows must be one of 64, 128, but got 96"),
        (dict(consumer_rows=128.0), "consumer_rows must be an int, but got float"),
        (
            dict(consumer_rows=128),
            "tile_n must be at most 192 with consumer_rows 128 .its two accumulators take "
            "tile_n registers per thread., but got 256",
        ),
        (
            dict(tile_n=128, consumer_rows=128, split_wait=True),
            "split_wait takes inflight 1 .it waits for the previous stage's group between a "
            "stage's two wgmma groups., but got inflight=0",
        ),
        (dict(split_wait=1), "split_wait must be a bool"),
        (
            dict(tile_n=128, consumers=3),
            r"registers must be multiples of 8 within what the CTA launches with "
            r"\(3 x consumer \+ producer <= 4 x 128 = 512\), but got 232 and 40",
        ),
        (dict(consumer_regs=236), r"registers must be multiples of 8 .* but got 236 and 40"),
        (dict(producer_regs=16), r"producer_regs must be in \[24, 256\], but got 16"),
        (
            dict(store_transposed=True, out_dtype="f32", epilogue_chunks=2),
            "a transposed C through the TMA epilogue must be 16-bit in one chunk "
            r"\(stmatrix.trans\), but got out_dtype 'f32', epilogue_chunks 2",
        ),
    ],
)
def test_gemm_refuses_bad_configurations(ctx, kwargs, message):
    from nvwgmma.kernel.gemm import GemmConfig, build_gemm

    with pytest.raises((ValueError, TypeError), match=message):
        build_gemm(GemmConfig(**kwargs))


def test_with_fields_replaces_typed_fields():
    from nvwgmma.kernel.gemm import GemmConfig
    from nvwgmma.kernel.gemm.config import with_fields

    got = with_fields(GemmConfig(), "consumer_rows=128,tile_n=128,split_wait=1,schedule=pingpong")
    assert (got.consumer_rows, got.tile_n, got.split_wait, got.schedule) == (
        128,
        128,
        True,
        "pingpong",
    )
    assert with_fields(GemmConfig(), "tile_k=None,defer_store_wait=0").defer_store_wait is False
    for bad in ("tilen=128", "tile_n", "fusion=()"):
        with pytest.raises(ValueError, match="expected field=value pairs of GemmConfig fields"):
            with_fields(GemmConfig(), bad)
    with pytest.raises(
        ValueError, match="expected 0, 1, true or false for split_wait, but got 'yes'"
    ):
        with_fields(GemmConfig(), "split_wait=yes")


@pytest.mark.parametrize(
    "chain,message",
    [
        (("Activation", "tanh"), "activation must be one of relu, gelu, gelu_tanh, silu"),
        (("Bias", "diag"), "bias axis must be row or col, but got 'diag'"),
        (("twice", None), "fusion must hold at most one Bias"),
    ],
)
def test_fusion_chain_refuses_bad_operations(chain, message):
    from nvwgmma.kernel.gemm import Activation, Bias
    from nvwgmma.kernel.gemm.fusion import check_chain

    kind, arg = chain
    ops = {
        "Activation": (Activation(arg),),
        "Bias": (Bias(axis=arg),),
        "twice": (Bias(), Bias(dtype="f32")),
    }[kind]
    with pytest.raises(ValueError, match=message):
        check_chain(ops, "bf16")


def test_fused_epilogue_emits_the_chain(ctx):
    """Each operation shows in the PTX: the GELU's ex2 and rcp.approx (no
    full-precision division), ReLU's max, the bias and residual loads."""
    from nvwgmma.compile import compile_to_ptx
    from nvwgmma.kernel.gemm import Activation, Bias, GemmConfig, Residual, build_gemm

    plain = compile_to_ptx(build_gemm(GemmConfig())[0])
    gelu = compile_to_ptx(build_gemm(GemmConfig(fusion=(Bias(), Activation("gelu"))))[0])
    relu = compile_to_ptx(build_gemm(GemmConfig(fusion=(Activation("relu"), Residual())))[0])
    assert "ex2.approx" not in plain and "ld.global" not in plain
    assert gelu.count("ex2.approx.f32") == 128 and gelu.count("rcp.approx.ftz.f32") == 128
    assert "div.rn" not in gelu and "ld.global.b16" in gelu
    assert relu.count("max.f32") == 128 and relu.count("ld.global.b16") == 128


@pytest.mark.parametrize(
    "dtype,rows,major,split,box,count",
    [
        ("bf16", 128, "K", 1, (64, 128), 1),
        ("bf16", 256, "K", 2, (64, 128), 2),
        ("bf16", 256, "N", 1, (64, 64), 4),
        ("bf16", 128, "M", 1, (64, 64), 2),
        ("e4m3", 256, "K", 1, (128, 256), 1),
    ],
)
def test_operand_loads_fill_the_tile(dtype, rows, major, split, box, count):
    """The boxes of an operand tile cover it exactly, each at the offset
    the descriptor's layout expects (MN-major: one 8 KiB atom column each,
    the leading byte offset apart)."""
    from nvwgmma.kernel.gemm.mainloop import operand_loads

    k = 128 if dtype == "e4m3" else 64
    loads = operand_loads(dtype, rows, k, major, split=split)
    assert loads.box.box == box and loads.count == count
    assert loads.box.bytes * loads.count == loads.geometry.tile_bytes
    if major != "K":
        assert loads.box.bytes == loads.geometry.leading_byte_offset == 8192


@pytest.mark.parametrize(
    "m,n,k,batch,expected",
    [
        (1000, 4096, 4096, 1, 128),  # 8 x 16 tiles, the last row ragged
        (4097, 4099, 4104, 1, 113),  # 33 x 17 = 561 tiles: 5 waves of 113, not 132 + a ragged 33
        (1, 4096, 4096, 1, 16),  # one tile row
        (7, 7, 64, 1, 1),
        (1024, 1024, 1024, 16, 128),  # 16 batches x 8 x 4 tiles
    ],
)
def test_grid_covers_ragged_and_batched_problems(m, n, k, batch, expected):
    from nvwgmma.kernel.gemm import PERSISTENT_MAX_K, grid_size

    meta = {"tile": [128, 256, 64], "cluster": [1, 1, 1], "persistent_max_k": PERSISTENT_MAX_K}
    grid = grid_size(meta, m, n, k, 132, batch)
    tiles = batch * -(-m // 128) * -(-n // 256)
    assert grid == expected and grid <= 132 and -(-tiles // grid) == -(-tiles // min(132, tiles))


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
    tiles = -(-m // 128) * -(-n // 256)
    per_cta = [len(range(c, tiles // cluster, grid // cluster)) for c in range(grid // cluster)]
    assert max(per_cta) - min(per_cta) <= 1 and max(per_cta) == -(
        -tiles // cluster // (132 // cluster)
    )
    # The device runner launches with the generator's policy.
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parents[2] / "bench" / "gemm"))
    import run

    problem = __import__("types").SimpleNamespace(m=m, n=n, k=k)
    assert run._grid(meta, problem, 132, "balanced") == grid


def test_fixup_hands_partials_over_with_release_and_acquire(ctx):
    """Split-K's writer stores its partial as 16-byte vectors, then one
    thread releases (fence.release.gpu, then the flag's atomic add: the
    NVPTX backend drops a release atomicrmw's ordering); the finisher's
    thread spins on an acquire load, resets the flag, and the warpgroup
    syncs before the adds."""
    from nvwgmma.compile import compile_to_ptx
    from nvwgmma.kernel.gemm import GemmConfig, build_gemm

    module, _ = build_gemm(GemmConfig(scheduler="split_k", splits=2))
    ptx = compile_to_ptx(module)
    lines = [line.strip() for line in ptx.splitlines()]
    # 128 registers per thread: 32 vector stores and 32 vector loads.
    assert sum(line.startswith("st.global.v4.b32") for line in lines) == 32
    assert sum(line.startswith("ld.global.v4") for line in lines) == 32
    fence = next(i for i, line in enumerate(lines) if line == "fence.release.gpu;")
    assert lines[fence + 1].startswith("atom.global.add.u32")
    spin = next(i for i, line in enumerate(lines) if line.startswith("ld.acquire.gpu.global.b32"))
    assert "bra" in lines[spin + 2] and lines[spin + 1].startswith("setp.eq")
    assert any(line.startswith("st.global.b32") and line.endswith(", 0;") for line in lines)


def test_pingpong_consumers_take_turns(ctx):
    """Ping-pong: each stage is released by the one consumer that read it
    (empty barriers expect 1 arrival, not 2), both consumers read A from
    the stage's first row, and the turn barriers pair a 256-thread
    bar.sync with a bar.arrive."""
    from nvwgmma.compile import compile_to_ptx
    from nvwgmma.kernel.gemm import GemmConfig, build_gemm

    module, meta = build_gemm(GemmConfig(schedule="pingpong", stages=4))
    assert meta["tile"] == [64, 256, 64] and meta["block"] == [384, 1, 1]
    text = str(module)
    assert text.count("nvvm.barrier.arrive") == 1
    ptx = compile_to_ptx(module)
    lines = [line.strip() for line in ptx.splitlines()]
    inits = [line for line in lines if line.startswith("mbarrier.init")]
    assert len(inits) == 8  # 4 full + 4 empty, all expecting one arrival
    assert len({line.split(",")[-1] for line in inits}) == 1
    assert sum(line.startswith("bar.arrive") for line in lines) == 1
    assert any(line.startswith("bar.sync") and line.endswith(", 256;") for line in lines)


class _Grouped:
    """A scheduler for the extension tests: the data-parallel tiles, with A
    read from batch 0, B from the `group` parameter's batch, and the store
    bounded by the `limit` parameter's rows."""

    def __new__(cls, config, args, rank):
        from dataclasses import replace

        from nvwgmma import ir
        from nvwgmma.dialects import arith
        from nvwgmma.kernel.gemm.scheduler import Persistent

        class Grouped(Persistent):
            def work(self, unit):
                zero = arith.constant(ir.IntegerType.get_signless(32), 0)
                return replace(super().work(unit), a_batch=zero, b_batch=args["group"],
                               rows=args["limit"])  # fmt: skip

        return Grouped(config, args["M"], args["N"], args["K"], args["batch"], rank=rank)


def test_per_operand_batches_and_row_limits(ctx):
    """Work.a_batch / b_batch reach A's and B's loads (B's batch is the
    group parameter), Work.rows bounds the registers store (min with M);
    the kernel passes the strict check and assembles."""
    from nvwgmma.compile import compile_to_ptx, run_ptxas
    from nvwgmma.kernel.gemm import GemmConfig, build_gemm
    from nvwgmma.passmanager import PassManager
    from nvwgmma.tools import find_tool

    config = GemmConfig(epilogue="registers")
    extra = (("group", "i32"), ("limit", "i32"))
    module, meta = build_gemm(config, scheduler=_Grouped, extra_params=extra)
    PassManager.parse("builtin.module(nvwgmma-check-protocol{strict=true})").run(module.operation)
    ptx = compile_to_ptx(module)
    group = re.search(r"ld\.param\.b32\s+(%r\d+), \[gemm_param_15\];", ptx).group(1)
    loads = re.findall(r"cp\.async\.bulk\.tensor\.3d\S* \[[^\]]*\], \[%rd\d+, \{([^}]*)\}\]", ptx)
    assert len(loads) == 2 and loads[1].split(", ")[-1] == group  # B's batch
    assert loads[0].split(", ")[-1] != group
    assert "min.u32" in ptx
    assert meta["signature"][-2:] == [["group", "i32"], ["limit", "i32"]]
    if find_tool("ptxas") is not None:
        assert "0 bytes spill stores" in run_ptxas(ptx, extra_args=["-v"])


def test_row_limits_under_the_tma_epilogue_take_both_paths(ctx):
    """A bounded tile under the TMA epilogue: blocks inside the bounds leave
    through stmatrix and a TMA store, the block the bound cuts from
    registers (masked); strict-clean, assembled without spills."""
    from nvwgmma.compile import compile_to_ptx, run_ptxas
    from nvwgmma.kernel.gemm import GemmConfig, build_gemm
    from nvwgmma.passmanager import PassManager
    from nvwgmma.tools import find_tool

    module, _ = build_gemm(GemmConfig(), scheduler=_Grouped,
                           extra_params=(("group", "i32"), ("limit", "i32")))  # fmt: skip
    PassManager.parse("builtin.module(nvwgmma-check-protocol{strict=true})").run(module.operation)
    ptx = compile_to_ptx(module)
    assert "stmatrix" in ptx and "cp.async.bulk.tensor.3d.global.shared::cta" in ptx
    assert "st.global" in ptx and "min.u32" in ptx
    if find_tool("ptxas") is not None:
        assert "0 bytes spill stores" in run_ptxas(ptx, extra_args=["-v"])


def test_grouped_scheduler_builds_a_clean_kernel(ctx):
    """scheduler.Grouped in a kernel (the group offsets and count as extra
    parameters, C from registers): strict-checked and assembled, 0 spills."""
    from nvwgmma.compile import compile_to_ptx, run_ptxas
    from nvwgmma.kernel.gemm import GemmConfig, build_gemm
    from nvwgmma.kernel.gemm.scheduler import Grouped
    from nvwgmma.passmanager import PassManager
    from nvwgmma.tools import find_tool

    def grouped(config, args, rank):
        return Grouped(config, args["M"], args["N"], args["K"], args["offs"], args["groups"],
                       rank=rank)  # fmt: skip

    module, meta = build_gemm(GemmConfig(epilogue="registers"), scheduler=grouped,
                              extra_params=(("offs", "!llvm.ptr<1>"), ("groups", "i32")))  # fmt: skip
    PassManager.parse("builtin.module(nvwgmma-check-protocol{strict=true})").run(module.operation)
    ptx = compile_to_ptx(module)
    assert "ld.global" in ptx and "min.u32" in ptx  # the offsets read; the store bounded
    if find_tool("ptxas") is not None:
        messages = run_ptxas(ptx, extra_args=["-v"])
        assert "0 bytes spill stores" in messages and "serialized" not in messages.lower()


def test_the_wait_check_fails_on_a_load_before_the_wait(ctx):
    """assert_waits_before_memory finds a global access ahead of the wait,
    and a launch-early trigger; a generated kernel passes it."""
    from gemm_checks import assert_waits_before_memory
    from nvwgmma.compile import compile_to_ptx
    from nvwgmma.kernel.gemm import build_gemm
    from nvwgmma.kernel.gemm.selector import decode_config

    module, meta = build_gemm(decode_config(16, 8192, 8192))
    ptx = compile_to_ptx(module)
    assert_waits_before_memory(ptx, meta)
    early = ptx.replace(
        "griddepcontrol.wait;", "ld.global.u32 %r1, [%rd1];\n\tgriddepcontrol.wait;"
    )
    with pytest.raises(AssertionError):
        assert_waits_before_memory(early, meta)
    trigger = ptx.replace(
        "griddepcontrol.wait;", "griddepcontrol.wait;\n\tgriddepcontrol.launch_dependents;"
    )
    with pytest.raises(AssertionError):
        assert_waits_before_memory(trigger, meta)
    with pytest.raises(AssertionError):
        assert_waits_before_memory(ptx, dict(meta, programmatic=False))
