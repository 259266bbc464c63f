"""grouped_mm's checks and kernels, without a GPU: every bad call raises
before anything is launched, the offsets are checked where asked, the rule
picks its tiles by rows per group, and every configuration it can return
builds a strict-clean kernel that assembles without spills. (The launches
run on the GPU: bench/gemm/grouped.py.)"""

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
                           b_major="K")  # fmt: skip
    assert operands["b_bstride"] == 32 * 64 and operands["b_lead"] == 64
    w_kn = Array((4, 64, 32))  # row-major K x N per group: N-major
    assert _plan(X, w_kn, Offsets([100] * 4), out=Array((100, 32)))[0]["b_major"] == "N"


def test_a_config_of_another_call_is_refused():
    from nvwgmma.kernel.gemm.grouped import grouped_config, prepare_grouped

    wrong = grouped_config(100, 32, 64, 4, dtype="f16", b_major="N")
    with pytest.raises(ValueError, match="config.b_major must be this call's 'K', but got 'N'"):
        prepare_grouped(X, W_NK, offs=Offsets([100] * 4), out=Array((100, 32)), config=wrong,
                        check_offsets=False)  # fmt: skip


@pytest.mark.parametrize(
    "tokens,groups,n,expected",
    [
        (256 * 8, 256, 4096, (1, 128)),  # DeepSeek-V3 decode: 8 rows per expert
        (64 * 8, 128, 1536, (1, 128)),  # Qwen3-30B decode, narrow N
        (4096 * 2, 8, 28672, (2, 256)),  # Mixtral prefill: 1024 rows per expert
        (4096 * 8, 128, 768, (2, 128)),
    ],
)
def test_rule_picks_tiles_by_rows_per_group(tokens, groups, n, expected):
    from nvwgmma.kernel.gemm.grouped import grouped_config

    config = grouped_config(tokens, n, 4096, groups)
    assert (config.consumers, config.tile_n) == expected
    assert config.stages == (6 if config.consumers == 1 else 3)
    assert config.epilogue == "tma" and config.cluster_m == 1


# (tokens, N) reaching each branch of the rule, for both weight layouts
RULE_CASES = [(64, 4096, "K", "tma"), (4096, 4096, "K", "tma"), (4096, 1024, "K", "tma"),
              (64, 4096, "N", "tma"), (4096, 4096, "N", "tma"), (4096, 1024, "N", "tma"),
              (64, 4100, "K", "registers"), (4096, 4100, "K", "registers")]  # fmt: skip


@pytest.mark.parametrize("tokens,n,b_major,epilogue", RULE_CASES)
def test_every_rule_config_builds_a_clean_kernel(ctx, tokens, n, b_major, epilogue):
    """What grouped_config can return: strict-checked, assembled, 0 spills;
    the scan clamps a decreasing offset (max) and the store stops at the
    group's end (min); under the TMA epilogue whole blocks take TMA."""
    from nvwgmma.compile import compile_to_ptx, run_ptxas
    from nvwgmma.kernel.gemm.grouped import GROUP_PARAMS, _build, grouped_config
    from nvwgmma.passmanager import PassManager
    from nvwgmma.tools import find_tool

    config = grouped_config(tokens, n, 2048, 8, b_major=b_major, epilogue=epilogue)
    module, meta = _build(config)()
    assert meta["signature"][-2:] == [list(p) for p in GROUP_PARAMS]
    PassManager.parse("builtin.module(nvwgmma-check-protocol{strict=true})").run(module.operation)
    ptx = compile_to_ptx(module)
    assert "max.s32" in ptx and "min.u32" in ptx
    assert ("cp.async.bulk.tensor.3d.global.shared::cta" in ptx) == (epilogue == "tma")
    if find_tool("ptxas") is not None:
        messages = run_ptxas(ptx, extra_args=["-v"])
        assert "0 bytes spill stores" in messages and "serialized" not in messages.lower()
