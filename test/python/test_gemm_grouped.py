"""grouped_mm's checks and kernels, without a GPU: every bad call raises
before anything is launched, the offsets are checked where asked, the rule
picks its tiles by rows per group, and every configuration it can return
builds a strict-clean kernel that assembles without spills. (The launches
run on the GPU: bench/gemm/grouped.py.)"""

import re

import pytest
from test_gemm_launch import Array


class Offsets(Array):
    """An int32 device vector whose values the host check may read."""

    def __init__(self, ends, **kw):
        super().__init__((len(ends),), "<i4", **kw)
        self.ends = list(ends)

    def tolist(self):
        return self.ends


def _plan(a, b, offs, out=None, out_dtype=None, check_offsets=False):
    from nvwgmma.kernel.gemm.grouped import _plan

    return _plan(a, b, offs, out, out_dtype, check_offsets)


X, W_NK = Array((100, 64)), Array((4, 64, 32), strides=(2 * 32 * 64, 2, 2 * 64))  # w (G, N, K).mT


@pytest.mark.parametrize(
    "a,b,offs,kwargs,message",
    [
        (Array((100, 64), "<f4"), W_NK, Offsets([100] * 4), {}, "a's dtype must be bf16 or f16"),
        (X, Array((4, 64, 32), "<f4"), Offsets([100] * 4), {}, r"b's dtype must be a's \(f16\)"),
        (Array((2, 100, 64)), W_NK, Offsets([100] * 4), {}, r"a must be 2-D \(tokens x K\)"),
        (X, Array((64, 32)), Offsets([100] * 4), {}, r"b must be 3-D \(groups x K x N\)"),
        (Array((100, 64), strides=(2, 200)), W_NK, Offsets([100] * 4), {}, "a must be row-major"),
        (X, Array((4, 32, 32)), Offsets([100] * 4), {}, r"a's columns and b's rows must agree \(K\)"),
        (X, W_NK, Array((4,), "<i8"), {}, "offs must be a contiguous int32 vector of the 4 groups"),
        (X, W_NK, Offsets([100] * 3), {}, "offs must be a contiguous int32 vector of the 4 groups"),
        (X, W_NK, Offsets([100] * 4, device=1), {}, "offs must be on a's device cuda:0"),
        (Array((100, 60)), Array((4, 60, 32)), Offsets([100] * 4), {}, "a's leading stride must be a multiple of 16 bytes"),
        (X, W_NK, Offsets([100] * 4), {"out": Array((100, 48))}, r"out must be f16 of shape \(100, 32\)"),
        (X, W_NK, Offsets([100] * 4), {"out_dtype": "e4m3"}, "out_dtype must be bf16, f16 or f32"),
        (X, W_NK, Offsets([10, 5, 50, 100]), {"check_offsets": True}, "offs must be non-decreasing row ends from 0"),
        (X, W_NK, Offsets([10, 20, 50, 101]), {"check_offsets": True}, "offs must end at most at a's 100 rows"),
    ],
)  # fmt: skip
def test_bad_calls_raise_before_launch(a, b, offs, kwargs, message):
    with pytest.raises(ValueError, match=message):
        _plan(a, b, offs, **kwargs)


def test_a_good_call_reduces_to_its_problem():
    problem, operands, out = _plan(X, W_NK, Offsets([0, 10, 10, 100]), out=Array((100, 32)),
                                   check_offsets=True)  # fmt: skip
    assert problem == dict(tokens=100, n=32, k=64, groups=4, dtype="f16", out_dtype="f16",
                           b_major="K", max_rows=None, bias=None, scaled=False,
                           gate=None, block=False, counts=[0, 10, 0, 90])  # fmt: skip
    assert operands["b_bstride"] == 32 * 64 and operands["b_lead"] == 64
    w_kn = Array((4, 64, 32))  # row-major K x N per group: N-major
    unread = _plan(X, w_kn, Offsets([100] * 4), out=Array((100, 32)), check_offsets=False)[0]
    assert unread["b_major"] == "N" and unread["counts"] is None  # the offsets not read


def _plan_masked(a, b, counts, out=None):
    from nvwgmma.kernel.gemm.grouped import _plan

    return _plan(a, b, None, out, None, None, counts)


XM = Array((4, 16, 64))  # 4 groups of up to 16 rows


@pytest.mark.parametrize(
    "a,counts,kwargs,message",
    [
        (X, None, {}, "grouped_mm needs offs= .* or counts= .*, exactly one, but got neither"),
        (X, Offsets([1] * 4), {}, r"a must be 3-D \(groups x rows x K\) with counts"),
        (Array((3, 16, 64)), Offsets([1] * 4), {}, "a's groups must be b's 4"),
        (Array((4, 16, 64), strides=(2 * 64 * 32, 128, 2)), Offsets([1] * 4), {}, "a's groups must be stacked rows"),
        (XM, Offsets([1] * 3), {}, "counts must be a contiguous int32 vector of the 4 groups' token counts"),
        (XM, Offsets([1] * 4), {"out": Array((64, 32))}, r"out must be f16 of shape \(4, 16, 32\)"),
    ],
)  # fmt: skip
def test_bad_masked_calls_raise_before_launch(a, counts, kwargs, message):
    if counts is None:  # through the public entry: a 2-D a needs offs or counts
        from nvwgmma.kernel.gemm.grouped import prepare_grouped

        with pytest.raises(ValueError, match=message):
            prepare_grouped(a, W_NK)
        return
    with pytest.raises(ValueError, match=message):
        _plan_masked(a, W_NK, counts, **kwargs)


def test_both_offs_and_counts_are_refused():
    from nvwgmma.kernel.gemm.grouped import _plan

    with pytest.raises(ValueError, match="exactly one, but got both"):
        _plan(XM, W_NK, Offsets([1] * 4), None, None, False, Offsets([1] * 4))


def test_a_masked_call_reduces_to_its_problem():
    # The counts are never read on the host: the kernel clamps them.
    problem, operands, _ = _plan_masked(XM, W_NK, Offsets([99, -1, 3, 16]), out=Array((4, 16, 32)))
    assert problem["tokens"] == 64 and problem["max_rows"] == 16 and problem["groups"] == 4


def test_a_config_of_another_call_is_refused():
    from nvwgmma.kernel.gemm.grouped import grouped_config, prepare_grouped

    wrong = grouped_config(100, 32, 64, 4, dtype="f16", b_major="N")
    with pytest.raises(ValueError, match="config.b_major must be this call's 'K', but got 'N'"):
        prepare_grouped(X, W_NK, offs=Offsets([100] * 4), out=Array((100, 32)), config=wrong,
                        check_offsets=False)  # fmt: skip


@pytest.mark.parametrize(
    "counts, max_rows, expected",
    [([1024] * 16, None, 128),  # DBRX's down projection: 3072 units, 24 waves of 128
     ([1024] * 8 + [1], None, 130),  # 1560 units: 12 waves; 130 CTAs hold them, not 132
     ([100, 0, 0], None, 24),  # fewer units than SMs: one each
     ([0, 0], None, 1),  # no rows routed: one CTA finds no unit
     (None, None, 132),  # offsets unread (a capture): one per SM, up to the bound
     (None, 64, 132)],  # masked: ceil(R / rows) per group
)  # fmt: skip
def test_the_grid_balances_the_units_where_the_offsets_were_read(counts, max_rows, expected):
    from nvwgmma.kernel.gemm.grouped import grouped_grid

    groups = len(counts) if counts is not None else 16
    problem = dict(tokens=sum(counts) if counts else 16 * 1024, n=6144 if counts else 4096,
                   groups=groups, counts=counts, max_rows=max_rows)  # fmt: skip
    assert grouped_grid(problem, 128, 256, 132) == expected


def test_a_group_table_too_small_for_the_call_is_refused():
    from dataclasses import replace

    from nvwgmma.kernel.gemm.grouped import grouped_config, prepare_grouped

    small = replace(grouped_config(100, 32, 64, 4, dtype="f16"), group_table=2)
    with pytest.raises(ValueError, match="config.group_table must hold this call's 4 groups"):
        prepare_grouped(X, W_NK, offs=Offsets([100] * 4), out=Array((100, 32)), config=small,
                        check_offsets=False)  # fmt: skip


@pytest.mark.parametrize(
    "groups, dtype, table",
    [(8, "bf16", 8), (5, "bf16", 8), (256, "bf16", 256), (1024, "bf16", 1024),
     (1025, "bf16", 0),  # past the largest table: the scan
     # the block-scaled 128 x 128 tile's six stages leave no room: five and the table
     (256, "e4m3", 256), (1024, "e4m3", 1024), (8, "e4m3", 8)],
)  # fmt: skip
def test_the_group_table_holds_the_groups_where_it_fits(groups, dtype, table):
    """grouped_config keeps a table of the groups (the smallest power of two
    holding them) unless it would not fit beside the stages; the
    block-scaled tile gives up its sixth stage for one."""
    from nvwgmma.kernel.gemm.grouped import block_scaled_config, grouped_config

    config = grouped_config(groups * 1024, 4096, 7168, groups, dtype=dtype, out_dtype="bf16")
    if dtype == "e4m3":
        config = block_scaled_config(config)
        assert config.stages == (6 if groups <= 128 else 5)
    assert config.group_table == table and config.shared_memory_bytes <= 227 * 1024


@pytest.mark.parametrize(
    "tokens,groups,n,expected",
    [
        (256 * 8, 256, 4096, (1, 128)),  # DeepSeek-V3 decode: 8 rows per expert
        (64 * 8, 128, 1536, (1, 128)),  # Qwen3-30B decode, narrow N
        (4096 * 2, 8, 28672, (2, 256)),  # Mixtral prefill: 1024 rows per expert
        (4096 * 8, 128, 768, (2, 256)),  # 6 waves of 128 x 256, 8 of 192, 12 of 128
        (2048, 8, 1536, (2, 192)),  # 96 tiles of 256 columns (a wave), 128 of 192 (one)
        (1024, 8, 1536, (2, 128)),  # under a wave each: the narrowest tile's is shortest
    ],
)
def test_rule_picks_tiles_by_rows_per_group(tokens, groups, n, expected):
    from nvwgmma.kernel.gemm.grouped import PREFILL_TILES, grouped_config

    config = grouped_config(tokens, n, 4096, groups)
    assert (config.consumers, config.tile_n) == expected
    assert config.stages == (6 if config.consumers == 1 else PREFILL_TILES[config.tile_n][0])
    assert config.epilogue == "tma" and config.cluster_m == 1


def test_rule_counts_the_routed_rows_where_known():
    """Mixtral-8x7B's down projection at 512 tokens, Zipf-routed: as if
    balanced, 8 tile rows of 16 columns (128 tiles, a wave); the rows
    routed make 11 tile rows, 176 tiles of 256 columns (two waves, the
    second a third full) or 242 of 192 (two, nearly full). A gated output
    (whole gate/up pairs) and fp8 (192 unmeasured) keep 128 and 256."""
    from nvwgmma.kernel.gemm.grouped import grouped_config

    counts = [377, 188, 126, 94, 75, 63, 54, 47]
    assert grouped_config(1024, 4096, 14336, 8).tile_n == 256
    assert grouped_config(1024, 4096, 14336, 8, counts=counts).tile_n == 192
    assert grouped_config(1024, 4096, 14336, 8, counts=counts, gated=True).tile_n == 128
    assert grouped_config(1024, 4096, 14336, 8, counts=counts, dtype="e4m3").tile_n == 128
    # Fewer SMs: the same tiles make more waves.
    assert grouped_config(1024, 4096, 14336, 8, counts=counts, sms=66).tile_n == 256


# (tokens, N) reaching each of the rule's tiles (8 groups), for both weight
# layouts and both epilogues
RULE_CASES = [(64, 4096, "K", "tma"), (4096, 4096, "K", "tma"), (2048, 1536, "K", "tma"),
              (1024, 1536, "K", "tma"), (64, 4096, "N", "tma"), (4096, 4096, "N", "tma"),
              (2048, 1536, "N", "tma"), (1024, 1536, "N", "tma"),
              (64, 4100, "K", "registers"), (4096, 4100, "K", "registers"),
              (2048, 1524, "K", "registers"), (4096, 1548, "K", "registers")]  # fmt: skip


@pytest.mark.parametrize("tokens,n,b_major,epilogue", RULE_CASES)
def test_every_rule_config_builds_a_clean_kernel(ctx, tokens, n, b_major, epilogue):
    """What grouped_config can return: strict-checked, assembled, 0 spills;
    the scan clamps a decreasing offset (max) and the store stops at the
    group's end (min); under the TMA epilogue whole blocks take TMA; the
    consumers find a unit's group in the table by one ballot (8 groups)."""
    from gemm_checks import assert_waits_before_memory
    from nvwgmma.compile import compile_to_ptx, run_ptxas
    from nvwgmma.kernel.gemm.grouped import GROUP_PARAMS, _build, grouped_config
    from nvwgmma.passmanager import PassManager
    from nvwgmma.ptx_check import require_clean_ptx
    from nvwgmma.tools import find_tool

    config = grouped_config(tokens, n, 2048, 8, b_major=b_major, epilogue=epilogue)
    module, meta = _build(config)()
    assert meta["signature"][-2:] == [list(p) for p in GROUP_PARAMS]
    PassManager.parse("builtin.module(nvwgmma-check-protocol{strict=true})").run(module.operation)
    ptx = compile_to_ptx(module)
    require_clean_ptx(ptx)
    assert_waits_before_memory(ptx, meta)  # the group offsets are read after the wait
    assert "max.s32" in ptx and "min.u32" in ptx
    assert ("cp.async.bulk.tensor.3d.global.shared::cta" in ptx) == (epilogue == "tma")
    assert ptx.count("vote.sync.ballot.b32") == 1
    if find_tool("ptxas") is not None:
        messages = run_ptxas(ptx, extra_args=["-v"])
        assert "0 bytes spill stores" in messages and "serialized" not in messages.lower()


@pytest.mark.parametrize("tokens", [64, 4096])
def test_the_scanning_kernel_builds_clean(ctx, tokens):
    """Without a group table (more groups than the largest, or no room):
    each unit scans the offsets; strict-checked, assembled, 0 spills, and
    no shared-memory table is read (no ld.shared of an i32 outside TMA)
    and nothing is voted on; with the largest table the consumers vote
    twice (the block of 32 groups, then the group in it)."""
    from dataclasses import replace

    from nvwgmma.kernel.gemm.grouped import _build, grouped_config

    config = grouped_config(tokens * 2000, 4096, 2048, 2000)
    assert config.group_table == 0
    ptx = _assert_kernel_clean(_build(config)()[0])
    assert "ld.shared.u32" not in ptx and "ld.shared.b32" not in ptx and "vote." not in ptx
    tabled = _assert_kernel_clean(_build(replace(config, group_table=1024))()[0])
    assert "ld.shared.u32" in tabled or "ld.shared.b32" in tabled
    assert tabled.count("vote.sync.ballot.b32") == 2


def test_a_clustered_grouped_kernel_builds_clean(ctx):
    """cluster_m 2 (two CTAs on adjacent tile rows of one group, B
    multicast): strict-checked, assembled without spills, launched as a
    cluster. Slower than one CTA on every measured MoE row (0.63-0.87x,
    docs/performance.md), so no rule picks it; a config may."""
    from dataclasses import replace

    from nvwgmma.compile import compile_to_ptx, run_ptxas
    from nvwgmma.kernel.gemm.grouped import _build, grouped_config
    from nvwgmma.passmanager import PassManager
    from nvwgmma.ptx_check import require_clean_ptx
    from nvwgmma.tools import find_tool

    module, meta = _build(replace(grouped_config(4096, 4096, 2048, 8), cluster_m=2))()
    assert meta["cluster"] == [2, 1, 1]
    PassManager.parse("builtin.module(nvwgmma-check-protocol{strict=true})").run(module.operation)
    ptx = compile_to_ptx(module)
    require_clean_ptx(ptx)
    assert "multicast::cluster" in ptx and "%cluster_ctarank" in ptx
    if find_tool("ptxas") is not None:
        messages = run_ptxas(ptx, extra_args=["-v"])
        assert "0 bytes spill stores" in messages and "serialized" not in messages.lower()


def test_the_masked_kernel_builds_clean(ctx):
    """The masked layout's kernel (scheduler.Masked): strict-checked,
    assembled without spills, the counts clamped (max, min) on the device."""
    from gemm_checks import assert_waits_before_memory
    from nvwgmma.compile import compile_to_ptx, run_ptxas
    from nvwgmma.kernel.gemm.grouped import MASKED_PARAMS, _build, grouped_config
    from nvwgmma.passmanager import PassManager
    from nvwgmma.ptx_check import require_clean_ptx
    from nvwgmma.tools import find_tool

    module, meta = _build(grouped_config(64 * 8, 4096, 2048, 8), masked=True)()
    assert meta["signature"][-3:] == [list(p) for p in MASKED_PARAMS]
    PassManager.parse("builtin.module(nvwgmma-check-protocol{strict=true})").run(module.operation)
    ptx = compile_to_ptx(module)
    require_clean_ptx(ptx)
    assert_waits_before_memory(ptx, meta)
    assert "max.s32" in ptx and "min.s32" in ptx
    if find_tool("ptxas") is not None:
        assert "0 bytes spill stores" in run_ptxas(ptx, extra_args=["-v"])


def test_three_d_by_three_d_is_a_batched_matmul(monkeypatch):
    """torch._grouped_mm's 3-D x 3-D form goes to matmul's batched GEMM."""
    from nvwgmma.kernel.gemm import grouped, launch

    seen = {}
    monkeypatch.setattr(launch, "prepare", lambda a, b, **kw: seen.setdefault("call", (a, b)))
    grouped.prepare_grouped(XM, W_NK)
    assert seen["call"] == (XM, W_NK)


@pytest.mark.parametrize("masked", [False, True])
def test_the_arguments_name_every_kernel_parameter(masked):
    """What prepare_grouped passes matches the kernel's parameter list
    (runtime.named_args refuses a missing or unknown name)."""
    from nvwgmma.kernel import runtime
    from nvwgmma.kernel.gemm import KERNEL_SIGNATURE
    from nvwgmma.kernel.gemm.grouped import GROUP_PARAMS, MASKED_PARAMS, _arguments

    if masked:
        p, o, _ = _plan_masked(XM, W_NK, Offsets([1] * 4), out=Array((4, 16, 32)))
    else:
        p, o, _ = _plan(X, W_NK, Offsets([100] * 4), out=Array((100, 32)))
    signature = [list(s) for s in (*KERNEL_SIGNATURE, *(MASKED_PARAMS if masked else GROUP_PARAMS))]
    args = runtime.named_args(signature, **_arguments(p, o, b"m" * 128, b"m" * 128, b"m" * 128))
    assert len(args) == len(signature)


def _assert_kernel_clean(module):
    """Strict-checked, through the PTX checker, and (with ptxas) assembled
    without spills or serialised wgmmas; the PTX."""
    from nvwgmma.compile import compile_to_ptx, run_ptxas
    from nvwgmma.passmanager import PassManager
    from nvwgmma.ptx_check import require_clean_ptx
    from nvwgmma.tools import find_tool

    PassManager.parse("builtin.module(nvwgmma-check-protocol{strict=true})").run(module.operation)
    ptx = compile_to_ptx(module)
    require_clean_ptx(ptx)
    if find_tool("ptxas") is not None:
        messages = run_ptxas(ptx, extra_args=["-v"])
        assert "0 bytes spill stores" in messages and "serialized" not in messages.lower()
    return ptx


# -- fused epilogues: a per-group bias, an activation, fp8 row-wise scales


X8 = Array((100, 64), "|u1")
W8 = Array((4, 64, 32), "|u1", strides=(32 * 64, 1, 64))  # w (G, N, K).mT
SA, SB = Array((100,), "<f4"), Array((4, 32), "<f4")


def _plan_fused(a, b, bias=None, scale_a=None, scale_b=None, out=None):
    from nvwgmma.kernel.gemm.grouped import _plan

    return _plan(a, b, Offsets([100] * 4), out, None, False, None, bias, scale_a, scale_b)


@pytest.mark.parametrize(
    "a,b,kwargs,message",
    [
        (X, W_NK, {"bias": Array((4, 31))}, "bias must be a contiguous 4 x 32 tensor"),
        (X, W_NK, {"bias": Array((4, 32), "|u1")}, "bias's dtype must be bf16 or f16 or f32"),
        (X, W_NK, {"bias": Array((4, 32), device=1)}, "bias must be on a's device"),
        (X8, W8, {"scale_a": SA}, "needs scale_a and scale_b, both"),
        (X, W_NK, {"scale_a": SA, "scale_b": SB}, "a's dtype must be e4m3 or e5m2 with row-wise scales"),
        (X8, W8, {}, "a's dtype must be bf16 or f16 \\(fp8 takes scaled_grouped_mm\\)"),
        (X8, Array((4, 64, 32), "|u1"), {"scale_a": SA, "scale_b": SB}, "fp8 b must be K-major"),
        (X8, W8, {"scale_a": Array((99,), "<f4"), "scale_b": SB}, "scale_a must be a contiguous 100 tensor"),
        (X8, W8, {"scale_a": SA, "scale_b": Array((4, 32))}, "scale_b's dtype must be f32"),
    ],
)  # fmt: skip
def test_bad_fused_calls_raise_before_launch(fp8_bytes, a, b, kwargs, message):
    with pytest.raises(ValueError, match=message):
        _plan_fused(a, b, **kwargs)


def test_a_scaled_call_reduces_to_its_problem(fp8_bytes):
    problem, operands, _ = _plan_fused(X8, W8, bias=Array((4, 32), "<f4"), scale_a=SA, scale_b=SB,
                                       out=Array((100, 32)))  # fmt: skip
    assert problem["scaled"] and problem["bias"] == "f32" and problem["dtype"] == "e4m3"
    assert operands["scale_b"].shape == (4, 32)


def test_an_unknown_activation_is_refused():
    from nvwgmma.kernel.gemm.grouped import prepare_grouped

    with pytest.raises(ValueError, match="activation must be one of relu, gelu, gelu_tanh, silu"):
        prepare_grouped(X, W_NK, offs=Offsets([100] * 4), activation="tanh")


def test_the_scaled_arguments_name_every_kernel_parameter(fp8_bytes):
    from nvwgmma.kernel import runtime
    from nvwgmma.kernel.gemm import KERNEL_SIGNATURE
    from nvwgmma.kernel.gemm.grouped import GROUP_PARAMS, SCALE_PARAMS, _arguments

    p, o, _ = _plan_fused(X8, W8, scale_a=SA, scale_b=SB, out=Array((100, 32)))
    signature = [list(s) for s in (*KERNEL_SIGNATURE, *GROUP_PARAMS, *SCALE_PARAMS)]
    args = runtime.named_args(signature, **_arguments(p, o, b"m" * 128, b"m" * 128, b"m" * 128))
    assert len(args) == len(signature)


@pytest.mark.parametrize(
    "dtype,tokens,bias,activation,scaled",
    [("bf16", 64, "bf16", "silu", False), ("bf16", 4096, "f32", None, False),
     ("e4m3", 64, None, None, True), ("e4m3", 4096, "bf16", "gelu", True)],
)  # fmt: skip
def test_fused_grouped_kernels_build_clean(ctx, dtype, tokens, bias, activation, scaled):
    """The fused chains on both of the rule's tiles: strict-checked,
    assembled, 0 spills; the scaled kernel takes the two scale pointers
    last and loads them (f32) in the epilogue."""
    from dataclasses import replace

    from nvwgmma.kernel.gemm.grouped import SCALE_PARAMS, _build, grouped_chain, grouped_config

    config = grouped_config(tokens, 4096, 2048, 8, dtype=dtype, out_dtype="bf16")
    chain = grouped_chain(bias=bias, activation=activation, scaled=scaled)
    module, meta = _build(replace(config, fusion=chain))()
    params = [list(p) for p in SCALE_PARAMS]
    assert (meta["signature"][-2:] == params) == scaled
    loads_f32 = re.findall(r"llvm\.load %\S+ : !llvm\.ptr<1> -> f32", str(module))
    assert bool(loads_f32) == (scaled or bias == "f32")
    _assert_kernel_clean(module)


def test_a_scale_vector_names_an_extra_parameter():
    from nvwgmma.kernel.gemm.fusion import ScaleVector, check_chain

    with pytest.raises(ValueError, match="a grouped scale vector runs along columns"):
        check_chain((ScaleVector("row", "scale_a", grouped=True),), "bf16")
    with pytest.raises(
        ValueError, match="a scale vector's param must name an extra kernel parameter"
    ):
        check_chain((ScaleVector("row", "not a name"),), "bf16")


# -- a gated output: act(gate) * up from a weight of alternating 64-column blocks


def test_interleave_gate_up_alternates_64_column_blocks():
    np = pytest.importorskip("numpy")
    from nvwgmma.kernel.gemm.grouped import interleave_gate_up

    gate = np.arange(2 * 128 * 3).reshape(2, 128, 3)
    up = -gate
    w = interleave_gate_up(gate, up)
    assert w.shape == (2, 256, 3)
    assert (w[:, 0:64] == gate[:, 0:64]).all() and (w[:, 64:128] == up[:, 0:64]).all()
    assert (w[:, 128:192] == gate[:, 64:128]).all() and (w[:, 192:256] == up[:, 64:128]).all()
    with pytest.raises(ValueError, match="the gate/up width N must be a multiple of 64"):
        interleave_gate_up(gate[:, :96], up[:, :96])


def test_a_gated_call_halves_the_output():
    from nvwgmma.kernel.gemm.grouped import _plan

    w = Array((4, 64, 256), strides=(2 * 256 * 64, 2, 2 * 64))
    problem, _, _ = _plan(X, w, Offsets([100] * 4), Array((100, 128)), None, False, gate="silu")
    assert problem["gate"] == "silu" and problem["n"] == 256
    with pytest.raises(ValueError, match=r"out must be f16 of shape \(100, 128\)"):
        _plan(X, w, Offsets([100] * 4), Array((100, 256)), None, False, gate="silu")
    narrow = Array((4, 64, 192), strides=(2 * 192 * 64, 2, 2 * 64))
    with pytest.raises(ValueError, match="a gated output needs b's N in whole gate/up pairs"):
        _plan(X, narrow, Offsets([100] * 4), None, None, False, gate="silu")


def test_a_gated_config_needs_the_registers_epilogue():
    from nvwgmma.kernel.gemm import GemmConfig
    from nvwgmma.kernel.gemm.config import check_config

    with pytest.raises(ValueError, match="a gated output needs the registers epilogue"):
        check_config(GemmConfig(gate="silu"))
    with pytest.raises(ValueError, match="gate must be one of relu, gelu, gelu_tanh, silu"):
        check_config(GemmConfig(gate="tanh", epilogue="registers"))


@pytest.mark.parametrize("tokens,dtype", [(64, "bf16"), (4096, "bf16"), (4096, "e4m3")])
def test_gated_grouped_kernels_build_clean(ctx, tokens, dtype):
    """A gated kernel on the rule's tiles: strict-checked, assembled, 0
    spills; it stores half of B's columns (N / 2, a divide by 2)."""
    from dataclasses import replace

    from nvwgmma.compile import compile_to_ptx, run_ptxas
    from nvwgmma.kernel.gemm.grouped import _build, grouped_chain, grouped_config
    from nvwgmma.passmanager import PassManager
    from nvwgmma.ptx_check import require_clean_ptx
    from nvwgmma.tools import find_tool

    config = grouped_config(tokens, 4096, 2048, 8, dtype=dtype, epilogue="registers")
    config = replace(config, fusion=grouped_chain(scaled=dtype == "e4m3"))
    stores = {}
    for gate in (None, "silu"):
        module, _ = _build(replace(config, gate=gate))()
        PassManager.parse("builtin.module(nvwgmma-check-protocol{strict=true})").run(
            module.operation
        )
        ptx = compile_to_ptx(module)
        require_clean_ptx(ptx)
        stores[gate] = (len(re.findall(r"st\.global", ptx)), len(re.findall(r"ex2\.approx", ptx)))
    # Half the columns stored; one SiLU exponential per stored element.
    assert stores["silu"][0] * 2 == stores[None][0] and stores[None][1] == 0
    assert stores["silu"][1] == config.tile_n // 4 * (config.tile_m // 64 // config.consumers)
    if find_tool("ptxas") is not None:
        messages = run_ptxas(ptx, extra_args=["-v"])
        assert "0 bytes spill stores" in messages and "serialized" not in messages.lower()


def test_a_block_scaled_call_takes_block_scales(fp8_bytes):
    """(T, K/128) and (G, N/128, K/128) scales make the call block-scaled."""
    sa, sb = Array((100, 1), "<f4"), Array((4, 1, 1), "<f4")
    problem, _, _ = _plan_fused(X8, W8, scale_a=sa, scale_b=sb, out=Array((100, 32)))
    assert problem["scaled"] and problem["block"]
    with pytest.raises(ValueError, match="scale_b must be a contiguous 4 x 1 x 1 tensor"):
        _plan_fused(X8, W8, scale_a=sa, scale_b=Array((4, 32), "<f4"))


@pytest.mark.parametrize("tokens,groups,stages", [(64, 8, 8), (4096, 8, 6), (32768, 256, 5)])
def test_block_scaled_grouped_kernels_build_clean(ctx, tokens, groups, stages):
    """The rule's tiles with block scales (block_scaled_config: 128 columns,
    as many stages as fit beside the group table): strict-checked,
    assembled, 0 spills, the scales last; promoting beside the next K tile
    spills here."""
    from nvwgmma.kernel.gemm import grouped

    config = grouped.block_scaled_config(
        grouped.grouped_config(tokens, 4096, 2048, groups, dtype="e4m3", out_dtype="bf16")
    )
    assert (config.tile_n, config.inflight, config.k_order) == (128, 0, "forward")
    assert config.stages == stages and config.block_scales and config.group_table >= groups
    module, meta = grouped._build(config)()
    assert meta["signature"][-2:] == [list(p) for p in grouped.SCALE_PARAMS]
    _assert_kernel_clean(module)


def test_the_bench_roofline_is_the_slower_of_flops_and_bytes():
    """bench/gemm/grouped.py's least time for a layer: Mixtral's gate/up at
    16 rows per expert reads every expert's weights (8 x 28672 x 4096 bf16,
    1.88 GB: 561 us at 3.35 TB/s) and does 30 GFLOP (31 us at 989 TFLOP/s);
    an empty expert's weights are not read; an unknown GPU has none."""
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench" / "gemm"))
    from grouped import roofline_ms

    h100 = "NVIDIA H100 80GB HBM3"
    weights = 8 * 28672 * 4096 * 2
    moved = weights + 2 * (128 * 4096 + 128 * 28672)
    assert roofline_ms(h100, [16] * 8, 28672, 4096) == pytest.approx(moved / 3.35e12 * 1e3)
    assert roofline_ms(h100, [32] * 4 + [0] * 4, 28672, 4096) == pytest.approx(
        (weights / 2 + 2 * (128 * 4096 + 128 * 28672)) / 3.35e12 * 1e3)  # fmt: skip
    # 32768 rows: the flops bound (2 x 32768 x 28672 x 4096 at 989 TFLOP/s).
    assert roofline_ms(h100, [4096] * 8, 28672, 4096) == pytest.approx(
        2 * 32768 * 28672 * 4096 / 989e12 * 1e3)  # fmt: skip
    assert roofline_ms("NVIDIA A100-SXM4-80GB", [16] * 8, 28672, 4096) is None


def test_the_bench_passes_its_run_flag_and_refuses_others(monkeypatch):
    """bench/gemm/grouped.py's --rule-only and half flags reach run()
    through two_step's flags; an unknown option is refused."""
    import pathlib
    import sys

    root = pathlib.Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "bench" / "gemm"))
    sys.path.insert(0, str(root / "examples"))
    import grouped

    calls = []
    monkeypatch.setattr(grouped, "run", lambda d, o, **flags: calls.append(flags) or 0)
    assert grouped.main(["run", "ptx", "--out", "out", "--rule-only"]) == 0
    assert grouped.main(["run", "ptx", "--out", "out", "--held-out"]) == 0
    off = dict(rule_only=False, tuned=False, held_out=False)
    assert calls == [{**off, "rule_only": True}, {**off, "held_out": True}]
    assert {m for m, *_ in grouped.layers("tuned")} == set(grouped.TUNED)
    assert {m for m, *_ in grouped.layers("held-out")} == set(grouped.MODELS) - set(grouped.TUNED)
    with pytest.raises(SystemExit):
        grouped.main(["run", "ptx", "--all-candidates"])


@pytest.mark.parametrize("groups", [8, 16, 32])
def test_the_consumers_mainloop_stays_on_the_uniform_datapath(ctx, groups):
    """The consumers count the group table by vote: their K loop's stage,
    phase and descriptor arithmetic stays in uniform registers, as in the
    dense kernel of the same tile -- no R2UR before the wgmmas. (Halving
    the table in every role, ptxas moved it to per-thread registers from
    16 groups up: 3-4 % on large experts, docs/performance.md.)"""
    from gemm_checks import wgmma_loops
    from nvwgmma.compile import compile_to_ptx
    from nvwgmma.kernel.gemm import build_gemm
    from nvwgmma.kernel.gemm.grouped import _build, grouped_config
    from nvwgmma.kernel.gemm.launch import Problem, problem_config

    config = grouped_config(groups * 1024, 6144, 10752, groups, counts=[1024] * groups)
    assert config.group_table == groups and (config.tile_m, config.tile_n) == (128, 256)
    dense = problem_config(Problem.of(1024, 6144, 10752, groups, "bf16", "bf16", "K", "K"))
    for module in (_build(config)()[0], build_gemm(dense)[0]):
        k_loop = min(wgmma_loops(compile_to_ptx(module)), key=len)
        assert not [t for t in k_loop if t.startswith("R2UR")], k_loop
