"""nvwgmma.kernel.attention without a GPU: every shipped configuration and
each technique's ablation builds, passes the strict protocol checker and
assembles with 0 spills and no wgmma serialisation; the launcher's checks
raise before anything is loaded; a launch against a recording driver
passes the 4-D tensor maps, grid and parameters the kernel expects.
(Numbers on the GPU: bench/attention/run.py.)"""

import ctypes
import re

import pytest
from test_gemm_launch import Array, RecordingDriver, record_runtime


def _assert_clean(config):
    from nvwgmma.compile import compile_to_ptx, run_ptxas
    from nvwgmma.kernel.attention import build_attention
    from nvwgmma.passmanager import PassManager
    from nvwgmma.ptx_check import require_clean_ptx
    from nvwgmma.tools import find_tool

    module, meta = build_attention(config)
    PassManager.parse("builtin.module(nvwgmma-check-protocol{strict=true})").run(module.operation)
    ptx = compile_to_ptx(module)
    require_clean_ptx(ptx)  # the protocol again, after LLVM scheduled it
    assert meta["dynamic_smem"] == config.shared_memory_bytes <= 227 * 1024
    if find_tool("ptxas") is None:
        pytest.skip("ptxas not found")
    messages = run_ptxas(ptx, extra_args=["-v"])
    assert "0 bytes spill stores, 0 bytes spill loads" in messages, messages
    assert "serialized" not in messages.lower(), messages
    # No wgmma.fence (warpgroup.arrive) that ptxas had to add itself.
    assert "injected" not in messages, messages
    return meta, ptx


def _configs():
    from nvwgmma.kernel.attention import shipped_configs

    shipped = shipped_configs()
    d128 = next(c for c in shipped if c.head_dim == 128 and c.dtype == "bf16" and not c.causal
                and not c.varlen)  # fmt: skip
    ablations = [
        d128.replace(overlap=False, persistent=False, speculative=False),
        d128.replace(pingpong=False),
        d128.replace(overlap=False, pingpong=False, persistent=False, speculative=False),
    ]
    # The other scheduling: persistent where the default is not, and back;
    # the dynamic tile walk (attention.tiles) at every head dim.
    ablations += [c.replace(persistent=not c.persistent) for c in shipped
                  if c.dtype == "bf16" and not c.varlen]  # fmt: skip
    ablations += [c.replace(persistent=True, dynamic=True, consumer_regs=232, producer_regs=40)
                  for c in shipped if c.dtype == "bf16" and not c.varlen]  # fmt: skip
    # O through stmatrix and TMA stores, head dims 64 and 128, each scheduling.
    ablations += [c.replace(tma_store=True) for c in shipped
                  if c.head_dim < 256 and c.dtype == "bf16" and not c.varlen]  # fmt: skip
    ablations += [c.replace(tma_store=True, persistent=True) for c in shipped
                  if c.head_dim == 128 and c.dtype == "bf16" and c.causal and not c.varlen]  # fmt: skip
    # 192-row tiles (three consumers) at head dim 64, each scheduling.
    # (160 registers: the speculative fallback would spill.)
    ablations += [c.replace(consumers=3, pingpong=False, consumer_regs=160, producer_regs=32,
                            tma_store=False, speculative=False)
                  for c in shipped if c.head_dim == 64 and c.dtype == "bf16"]  # fmt: skip
    # The speculative softmax flipped where it is on (at 256 its fallback spills).
    ablations += [c.replace(speculative=False) for c in shipped
                  if c.speculative and not c.varlen and c.dtype != "f16"]  # fmt: skip
    # Lazy rescaling flipped, at every head dim.
    ablations += [c.replace(lazy_rescale=not c.lazy_rescale) for c in shipped
                  if c.dtype == "bf16" and not c.varlen]  # fmt: skip
    # The softmax's exponentials as an f32 polynomial instead of the SFU.
    # (The f32 polynomial with the speculative fallback spills: both off.)
    ablations += [c.replace(fast_exp2=False, speculative=False) for c in shipped
                  if c.dtype == "bf16" and not c.varlen]  # fmt: skip
    # Part of them on the FMA pipe (fastmath.exp2_fma), every dtype.
    ablations += [c.replace(fma_exp2=n) for c in shipped for n in (1, 3)
                  if c.head_dim == 128 and not c.causal and not c.varlen]  # fmt: skip
    return shipped + ablations


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"dynamic": True}, "dynamic needs persistent"),
        ({"speculative": True, "overlap": False},
         "speculative is a step of the overlapped loop, but got overlap=False"),
        ({"persistent": True, "varlen": True}, "persistent needs dense sequences and overlap"),
        # 2 x 240 + 32 = 512 assembles, but setmaxnreg.inc would wait forever
        # for registers the 168-register launch never gave back.
        ({"producer_regs": 32}, r"2 x consumer \+ producer <= 3 x 168 = 504\), but got 240 and 32"),
        ({"consumers": 3, "pingpong": False, "head_dim": 64},
         r"3 x consumer \+ producer <= 4 x 128 = 512\), but got 240 and 24"),
        ({"consumers": 3, "pingpong": False, "consumer_regs": 160, "producer_regs": 32},
         "3 consumers take head_dim 64 and block_n <= 128 .*, but got head_dim 128, block_n 128"),
        ({"consumers": 3}, r"pingpong takes 2 consumers \(it alternates two\), but got 3"),
        ({"consumers": 3, "pingpong": False, "consumer_regs": 160, "producer_regs": 32,
          "head_dim": 64, "tma_store": True},
         r"3 consumers store O from registers \(tma_store spills .*\), but got tma_store=True"),
        ({"consumers": 4}, "consumers must be 2 or 3, but got 4"),
        ({"tma_store": True, "varlen": True}, "tma_store needs dense sequences .*, but got varlen=True"),
        ({"tma_store": True, "head_dim": 256, "block_n": 64},
         "must fit 227 KiB of shared memory, but need 263224 bytes"),
        ({"consumer_regs": 236}, "registers must be multiples of 8"),
        ({"stages": 5}, r"stages must be in \[1, 4\], but got 5"),
        ({"block_n": 96}, "block_n must be 64, 128, 176 or 192, but got 96"),
        ({"fma_exp2": 9}, r"fma_exp2 must be an int in \[0, 8\], but got 9"),
        ({"fma_exp2": 2, "fast_exp2": False}, "fma_exp2 splits fast_exp2's exponentials"),
        ({"dtype": "e4m3", "block_n": 176}, "e4m3 takes block_n a multiple of 32, but got 176"),
        ({"dtype": "e5m2"}, "dtype must be bf16, f16 or e4m3, but got 'e5m2'"),
    ],
)  # fmt: skip
def test_bad_configurations_are_refused(changes, message):
    from nvwgmma.kernel.attention import AttentionConfig, build_attention

    with pytest.raises(ValueError, match=message):
        build_attention(AttentionConfig().replace(**changes))


@pytest.mark.parametrize("config", _configs(), ids=lambda c: c.name)
def test_every_configuration_is_clean(ctx, config):
    meta, ptx = _assert_clean(config)
    d, bn, k, t = config.head_dim, config.block_n, config.k_instr, config.dtype
    # S = Q Kᵀ: m64n{bn}k16 (fp8: k32) from shared memory; O += P V:
    # m64n{d}k16 with P from registers ({4 registers}) and V transposed
    # (MN-major: the trans-b immediate); fp8 reads Vᵀ K-major, no immediate.
    s_mma = re.findall(rf"wgmma\.mma_async\.sync\.aligned\.m64n{bn}k{k}\.f32\.{t}\.{t} ", ptx)
    tail = r"p, 1,\s+1;" if config.fp8 else r"p, 1,\s+1, 1;"
    pv = re.findall(
        rf"wgmma\.mma_async\.sync\.aligned\.m64n{d}k{k}\.f32\.{t}\.{t} "
        r"\{[^}]*\}, \{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd\d+, " + tail,
        ptx,
    )
    assert s_mma and pv, "both GEMMs, P·V with A from registers"
    assert "ex2.approx.ftz.f32" in ptx and "shfl.sync.bfly.b32" in ptx
    # A thread's bn / 2 scores of a block (twice with overlap: the first
    # block and the loop); without fast_exp2 only the two rows' corrections
    # stay on the SFU.
    ex2 = len(re.findall(r"ex2\.approx\.ftz\.f32", ptx))
    assert ex2 >= bn // 2 if config.fast_exp2 else ex2 <= 4, ex2
    # exp2_fma adds and subtracts 1.5 x 2^23 (0f4B400000): fma_exp2 of
    # every 8 scores (with overlap twice: the first block and the loop),
    # the rest on the SFU.
    # speculative: block j's fast softmax and its exact fallback.
    softmaxes = 1 + config.overlap + config.speculative
    assert ptx.count("0f4B400000") == 2 * softmaxes * (bn // 2) * config.fma_exp2 // 8
    if config.fast_exp2:  # the rest, and a few corrections of O
        sfu = softmaxes * (bn // 2) * (8 - config.fma_exp2) // 8
        assert sfu <= ex2 <= sfu + 8, (sfu, ex2)
    # lazy_rescale compares the maximum's growth with 8.0 (0f41000000).
    assert ("0f41000000" in ptx) == config.lazy_rescale
    # speculative: the row sums against 2^8 (0f43800000) and a vote per
    # consumer on its own named barrier (7, 8).
    votes = re.findall(r"bar\.red\.or\.pred %q, (\d+), 128, %p;", ptx)
    assert sorted(votes) == (["7", "8"] if config.speculative else []), votes
    assert ("0f43800000" in ptx) == config.speculative
    ids = set(re.findall(r"bar(?:rier)?\.(?:sync|arrive)(?:\.aligned)?\s+(\S+),", ptx))
    assert all(i.isdigit() for i in ids), ids  # named-barrier ids are immediates
    if config.pingpong:
        assert {"5", "6"} <= ids
    assert meta["block"] == [128 * (1 + config.consumers), 1, 1]
    stores = re.findall(r"cp\.async\.bulk\.tensor\.4d\.global\.shared::cta", ptx)
    if config.tma_store:  # per consumer branch, one box per 64 columns of O (16-bit)
        assert len(stores) == config.consumers * d // 64 and "stmatrix" in ptx
    else:
        assert not stores
    # Boxes one swizzle atom wide: 128 bytes, 64 where a row holds only 64.
    atom = min(d, 128) if config.fp8 else 64
    assert meta["boxes"]["Q"]["box"] == [atom, 1, 64, 1]
    assert meta["boxes"]["K"]["box"] == [atom, 1, bn, 1]
    assert meta["boxes"]["O"]["box"] == [64, 1, 64, 1]  # 16-bit O, fp8's too (bf16)
    if config.fp8:  # Vᵀ: keys innermost, then the head dim
        assert meta["boxes"]["V"]["box"] == [min(bn, 128), d, 1, 1]
        assert ".e4m3x2.f32" in ptx  # P rounded to fp8 (cvt.rn.satfinite)
        # P's fragments: quad shuffles, or none where V's keys are permuted.
        assert ("shfl.sync.idx" in ptx) != config.v_permuted
    else:
        assert meta["boxes"]["V"]["box"] == [64, 1, bn, 1]


def q(b=2, s=256, h=4, d=128, **kw):
    return Array((b, s, h, d), "<V2", **kw)


def q8(b=2, s=256, h=4, d=128, **kw):
    """An fp8 (e4m3) tensor, head dim contiguous."""
    return Array((b, s, h, d), "<V1", **kw)


def vt8(b=2, s=256, h=4, d=128, **kw):
    """An fp8 V stored (batch, heads, d, keys), viewed (batch, keys, heads, d)."""
    return Array((b, s, h, d), "<V1", strides=(h * d * s, 1, d * s, s), **kw)


@pytest.mark.parametrize(
    "args,kwargs,message",
    [
        ((q(), q(), q(d=64)), {}, "the head dim must be 64, 128 or 256 for q, k and v"),
        ((q(d=96), q(d=96), q(d=96)), {}, "the head dim must be 64, 128 or 256"),
        ((q(), q(h=3), q(h=3)), {}, "q's heads must be a multiple of k's heads"),
        ((q(), q(b=1), q(b=1)), {}, "k must have q's batch 2"),
        ((q(), q(), q(s=128)), {}, "k and v must have one shape"),
        ((Array((2, 256, 4, 128), "<f4"),) * 3, {}, "q must be bf16, f16 or e4m3, but got f32"),
        ((q(), Array((2, 256, 4, 128), "<f2"), q()), {}, "k must have q's dtype bf16"),
        ((Array((256, 4, 128), "<V2"), q(), q()), {}, r"q must be \(batch, seq, heads, head dim\)"),
        ((q(strides=(256 * 512 * 2, 512 * 2, 128 * 2, 4)), q(), q()), {},
         r"q must have a contiguous head dimension"),
        ((q(strides=(256 * 4 * 130 * 2, 4 * 130 * 2, 130 * 2 + 2, 2)), q(), q()), {},
         "strides must be multiples of 16 bytes"),
        ((q(address=(1 << 20) + 8), q(), q()), {}, "q must be 16-byte aligned"),
        ((q(s=0), q(), q()), {}, "the problem must not be empty"),
        ((Array((100, 4, 128), "<V2"),) * 3, {"cu_seqlens_q": Array((3,), "<i4")},
         "varlen attention needs cu_seqlens_q, cu_seqlens_k and max_seqlen_q"),
        ((Array((100, 4, 128), "<V2"),) * 3,
         {"cu_seqlens_q": Array((3,), "<i8"), "cu_seqlens_k": Array((3,), "<i4"), "max_seqlen_q": 60},
         "cu_seqlens_q must be a contiguous int32 vector"),
        ((q(), q(), q()), {"v_descale": 2.0}, "descales scale fp8 inputs, so q must be e4m3"),
        ((q8(), q8(), q8(strides=(256 * 4 * 128, 4 * 128, 128, 2))), {},
         r"v must have a contiguous head dimension or keys \(stride 1\)"),
        ((q8(), q8(), vt8()), {"k_descale": -1.0}, "k_descale must be finite and positive, but got -1.0"),
        ((q8(), q8(), vt8()), {"q_descale": "2"}, "q_descale must be a number, but got str"),
        ((q8(), q8(), vt8(s=250)), {}, "v's strides must be multiples of 16 bytes"),
        ((q8(), q8(), vt8()), {"config": "bf16"}, "config.dtype must be q's dtype e4m3, but got bf16"),
        ((Array((100, 4, 128), "<V1"),) * 3,
         {"cu_seqlens_q": Array((3,), "<i4"), "cu_seqlens_k": Array((3,), "<i4"), "max_seqlen_q": 60},
         r"e4m3 varlen attention needs max_seqlen_k \(V's transposed copy is dense\)"),
        ((Array((100, 4, 128), "<V1"),) * 2 + (Array((100, 4, 128), "<V1", strides=(1, 12800, 100)),),
         {"cu_seqlens_q": Array((3,), "<i4"), "cu_seqlens_k": Array((3,), "<i4"), "max_seqlen_q": 60,
          "max_seqlen_k": 60},
         "e4m3 varlen attention takes v with a contiguous head dimension"),
    ],
)  # fmt: skip
def test_bad_calls_raise_before_launch(args, kwargs, message, monkeypatch):
    from nvwgmma.kernel.attention import launch

    monkeypatch.setattr(launch, "load_kernel", lambda c: pytest.fail("loaded"))
    if kwargs.get("config") == "bf16":
        from nvwgmma.kernel.attention import default_config

        kwargs = {**kwargs, "config": default_config(128)}
    # cupy presents bf16 as "<V2" (fp8 "<V1"); the tensor reader names it here.
    monkeypatch.setattr(launch, "_tensor", _bf16_tensor(launch._tensor))
    with pytest.raises(ValueError, match=message):
        launch.attention(*args, **kwargs)


@pytest.mark.parametrize("seq,causal,persistent", [(512, True, False), (1023, True, False),
                                                    (1024, True, True), (16384, True, True),
                                                    (512, False, True)])  # fmt: skip
def test_d256_scheduling_follows_the_length(seq, causal, persistent, monkeypatch):
    """Causal at head dim 256: one CTA per tile below 1024 queries, the
    paired persistent walk from there (measured: 16 % slower at 512, 1-10 %
    faster from 1024); every such configuration is shipped (precompiled)."""
    from nvwgmma.kernel.attention import launch, shipped_configs

    monkeypatch.setattr(launch, "_tensor", _bf16_tensor(launch._tensor))
    x = q(s=seq, d=256)
    config = launch.plan(x, x, x, causal=causal).config
    assert config.persistent is persistent and config.lazy_rescale
    assert config in shipped_configs()


def _bf16_tensor(read):
    def tensor(value, what):
        t = read(value, what)
        if t.dtype == "<V2":
            t.dtype = "bf16"
        if t.dtype == "<V1":
            t.dtype = "e4m3"
        if t.dtype == "<i4":
            t.dtype = "int32"
        return t

    return tensor


class _Driver(RecordingDriver):
    def cuLaunchKernel(self, function, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        from nvwgmma.kernel.attention import SIGNATURE

        pointers = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        kinds = {"i32": ctypes.c_int32, "i64": ctypes.c_int64, "f32": ctypes.c_float}
        values = {
            name: ctypes.cast(pointers[i], ctypes.POINTER(kinds.get(t, ctypes.c_uint64)))[0]
            for i, (name, t) in enumerate(SIGNATURE)
        }
        self.launches.append(((gx, gy, gz), (bx, by, bz), smem, stream, values))
        return (0,)


def _recording(monkeypatch, tmp_path):
    """A recording driver behind runtime and tensormap, with empty map
    pool, workspaces and kernel cache, kernels compiled into tmp_path."""
    from nvwgmma.kernel.attention import launch

    driver = record_runtime(monkeypatch, tmp_path, _Driver())
    monkeypatch.setattr(launch, "_tensor", _bf16_tensor(launch._tensor))
    return driver


@pytest.mark.parametrize("varlen", [False, True])
def test_attention_launch_path(ctx, tmp_path, monkeypatch, varlen):
    """GQA (8 query heads on 2 K/V heads), Sq != Sk, against a recording
    driver: the tensor maps are 4-D (head dim, heads, tokens, batch) over
    the tensors' own strides, the grid covers the query blocks, heads and
    batch, and the parameters are in SIGNATURE's order."""
    from nvwgmma.kernel.attention import launch

    driver = _recording(monkeypatch, tmp_path)
    d = 128
    if varlen:
        qa, ka = Array((300, 8, d), "<V2"), Array((500, 2, d), "<V2", address=2 << 20)
        va = Array((500, 2, d), "<V2", address=4 << 20)
        kwargs = {"cu_seqlens_q": Array((3,), "<i4", address=5 << 20),
                  "cu_seqlens_k": Array((3,), "<i4", address=6 << 20), "max_seqlen_q": 200}  # fmt: skip
        out, lse = Array((300, 8, d), "<V2", address=3 << 20), Array((8, 300), "<f4")
    else:
        qa, ka = Array((2, 300, 8, d), "<V2"), Array((2, 500, 2, d), "<V2", address=2 << 20)
        va = Array((2, 500, 2, d), "<V2", address=4 << 20)
        kwargs = {}
        out, lse = Array((2, 300, 8, d), "<V2", address=3 << 20), Array((2, 8, 300), "<f4")
    launch.attention(qa, ka, va, causal=True, out=out, lse=lse, **kwargs)
    (grid, block, smem, _, values), = driver.launches  # fmt: skip
    assert block == (384, 1, 1) and smem == launch.load_kernel(launch.plan(
        qa, ka, ka, causal=True, **kwargs).config)[1]["dynamic_smem"]  # fmt: skip
    if varlen:
        assert grid == (2, 8, 2)  # ceil(200 / 128) query blocks
        assert [e[2] for e in driver.encoded] == [(d, 8, 300, 1), (d, 2, 500, 1), (d, 2, 500, 1)]
        assert [e[1] for e in driver.encoded] == [1 << 20, 2 << 20, 4 << 20]
        assert values["cuQ"] == 5 << 20 and values["cuK"] == 6 << 20
        assert (values["o_batch"], values["o_row"], values["lse_batch"], values["lse_head"]) == (
            0, 8 * d, 0, 300)  # fmt: skip
    else:
        # Causal and dense: persistent over pairs of query blocks, 2 x 8 x 2 units.
        assert grid == (32, 1, 1)
        # Q, K, V, then O's map: dense head dim 128 stores O through TMA.
        assert [e[2] for e in driver.encoded] == [(d, 8, 300, 2), (d, 2, 500, 2), (d, 2, 500, 2),
                                                  (d, 8, 300, 2)]  # fmt: skip
        assert driver.encoded[0][3] == (d * 2, 8 * d * 2, 300 * 8 * d * 2)
        assert driver.encoded[3][1] == values["O"] and values["tmO"] != 0
        assert (values["Sq"], values["Sk"], values["o_row"], values["o_head"]) == (
            300,
            500,
            8 * d,
            d,
        )
        assert (values["lse_batch"], values["lse_head"]) == (8 * 300, 300)
    assert [e[4] for e in driver.encoded][:3] == [(64, 1, 64, 1), (64, 1, 128, 1), (64, 1, 128, 1)]
    assert values["group"] == 4
    # varlen: not persistent; dense: one K/V head's 4 query heads (the driver's tiny L2)
    assert values["section"] == (1 if varlen else 4)
    assert values["scale_log2"] == pytest.approx(1.4426950408889634 / d**0.5)
    assert values["O"] == 3 << 20
    if varlen:
        assert values["tmO"] == values["tmQ"]  # unread: O leaves from registers


def test_tma_store_maps_o_like_q(ctx, tmp_path, monkeypatch):
    """tma_store: a fourth 4-D map over O's own strides with Q's box, passed
    as tmO; an out TMA cannot address is refused before launch."""
    from nvwgmma.kernel.attention import default_config, launch

    driver = _recording(monkeypatch, tmp_path)
    d, config = 128, default_config(128).replace(tma_store=True)
    qa = Array((2, 300, 8, d), "<V2")
    # O padded to 9 heads' worth per token: its own strides, not Q's.
    out = Array(
        (2, 300, 8, d), "<V2", address=3 << 20, strides=(300 * 9 * d * 2, 9 * d * 2, d * 2, 2)
    )  # bytes
    lse = Array((2, 8, 300), "<f4", address=5 << 20)
    launch.attention(qa, qa, qa, out=out, lse=lse, config=config)
    (_, _, _, _, values), = driver.launches  # fmt: skip
    # Q, K (V is the same array: its map is K's), then O.
    assert len(driver.encoded) == 3
    _, address, sizes, strides, box = driver.encoded[-1]
    assert (address, sizes, box) == (3 << 20, (d, 8, 300, 2), (64, 1, 64, 1))
    assert strides == (d * 2, 9 * d * 2, 300 * 9 * d * 2)
    assert values["tmO"] != 0
    bad = Array((2, 300, 8, d), "<V2", address=(3 << 20) + 8)
    with pytest.raises(ValueError, match="out must be 16-byte aligned for TMA"):
        launch.attention(qa, qa, qa, out=bad, lse=lse, config=config)


def test_dynamic_walk_gets_zeroed_counters(ctx, tmp_path, monkeypatch):
    """A dynamic walk: one CTA per SM (or per tile), and `sched` points at
    a zeroed 8-byte workspace of its own, the same one on every launch on
    the stream (the kernel leaves it zero); the static walk passes 0."""
    from nvwgmma.kernel.attention import default_config, launch

    driver = _recording(monkeypatch, tmp_path)
    qa = Array((4, 1024, 16, 64), "<V2")
    out = Array((4, 1024, 16, 64), "<V2", address=3 << 20)
    lse = Array((4, 16, 1024), "<f4", address=5 << 20)
    dynamic = default_config(64, causal=True).replace(persistent=True, dynamic=True,
                                                      consumer_regs=232, producer_regs=40)  # fmt: skip
    for config in (dynamic, dynamic, default_config(64, causal=True)):
        launch.attention(qa, qa, qa, causal=True, out=out, lse=lse, config=config)
    grids = [g for g, *_ in driver.launches]
    assert grids[:2] == [(132, 1, 1)] * 2  # 8 x 16 x 4 = 512 tiles
    assert grids[2] == (132, 1, 1)  # the static walk: 4 x 16 x 4 = 256 paired units
    # The recording driver's L2 holds 132 bytes: one K/V head per section.
    assert [values["section"] for *_, values in driver.launches] == [1, 1, 1]
    scheds = [values["sched"] for *_, values in driver.launches]
    assert scheds[0] == scheds[1] != 0 and scheds[2] == 0
    assert driver.allocated.count(8) == 1  # beside the tensor-map pool
    assert [(a, v, n) for a, v, n, _ in driver.zeroed if a == scheds[0]] == [(scheds[0], 0, 8)]


def test_precompile_writes_every_shipped_configuration(tmp_path, monkeypatch):
    from nvwgmma.kernel.attention import __main__ as cli
    from nvwgmma.kernel.attention import launch

    written = []
    monkeypatch.setattr(launch, "write_kernel", lambda d, c: written.append(c) or f"{d}/{c.name}")
    assert cli.main(["--precompile", str(tmp_path)]) == 0
    assert {(c.head_dim, c.dtype, c.causal, c.varlen) for c in written} == {
        (d, t, c, v) for d in (64, 128, 256) for t in ("bf16", "f16", "e4m3")
        for c in (False, True) for v in (False, True)
    }  # fmt: skip


def test_repeated_calls_reuse_the_packed_launch(ctx, tmp_path, monkeypatch):
    """A call repeating an earlier one (same tensors and arguments) skips
    the checks and the maps: nothing is encoded again and the parameters
    are the same. Other tensors of the same layout (another out, a new q:
    a training step's new activations) reuse it too, re-pointed: their
    addresses and maps rewritten, nothing checked again. A q of another
    alignment or shape is a new call, checked; a bad call after a good one
    is still refused."""
    from nvwgmma.kernel.attention import launch

    monkeypatch.setattr(launch, "_recent", {})
    driver = _recording(monkeypatch, tmp_path)
    plan = launch.plan
    d = 128
    qa = Array((2, 256, 4, d), "<V2")
    out, lse = (
        Array((2, 256, 4, d), "<V2", address=3 << 20),
        Array((2, 4, 256), "<f4", address=5 << 20),
    )
    plans = []
    monkeypatch.setattr(launch, "plan", lambda *a, **kw: plans.append(1) or plan(*a, **kw))
    for _ in range(3):
        launch.attention(qa, qa, qa, causal=True, out=out, lse=lse)
    assert len(plans) == 1  # checked once
    assert len(driver.launches) == 3 and len(driver.encoded) == 3  # Q, K = V, O
    assert driver.launches[0] == driver.launches[1] == driver.launches[2]
    other = Array((2, 256, 4, d), "<V2", address=7 << 20)
    launch.attention(qa, qa, qa, causal=True, out=other, lse=lse)
    values = driver.launches[-1][4]
    assert values["O"] == 7 << 20 and driver.encoded[-1][1] == 7 << 20
    assert values["tmO"] != driver.launches[0][4]["tmO"] and len(plans) == 1
    moved = Array((2, 256, 4, d), "<V2", address=9 << 20)
    launch.attention(moved, qa, qa, causal=True, out=other, lse=lse)
    values = driver.launches[-1][4]
    assert driver.encoded[-1][1] == 9 << 20 and len(plans) == 1  # Q's map at the new q
    assert values["tmQ"] != driver.launches[0][4]["tmQ"]
    assert values["tmK"] == driver.launches[0][4]["tmK"]
    with pytest.raises(ValueError, match="q must be 16-byte aligned for TMA"):
        launch.attention(Array((2, 256, 4, d), "<V2", address=(9 << 20) + 8), qa, qa,
                         causal=True, out=other, lse=lse)  # fmt: skip
    launch.attention(Array((2, 128, 4, d), "<V2"), qa, qa, causal=True,
                     out=Array((2, 128, 4, d), "<V2", address=11 << 20),
                     lse=Array((2, 4, 128), "<f4", address=13 << 20))  # fmt: skip
    assert len(plans) == 3  # the misaligned q, the shorter one
    with pytest.raises(ValueError, match="out must be bf16 of shape"):
        launch.attention(qa, qa, qa, causal=True, out=Array((2, 256, 4, 64), "<V2"), lse=lse)


def test_layout_key_tells_devices_and_alignment_apart():
    """_calls.layout_key: arrays of one layout at other addresses share a
    key; another device, another alignment, or an array that names no
    device (keyed by its address) does not."""
    from nvwgmma.kernel import _calls

    def key(*arrays):
        return _calls.layout_key((*arrays, True, None, 7))

    a, b = Array((4, 64), "<V2", address=1 << 20), Array((4, 64), "<V2", address=3 << 20)
    assert key(a) == key(b) != key(Array((4, 64), "<V2", address=1 << 20, device=1))
    assert key(a) != key(Array((4, 64), "<V2", address=(1 << 20) + 8))
    assert key(a) != key(Array((4, 32), "<V2", address=1 << 20))

    class Bare:  # __cuda_array_interface__ and nothing else
        def __init__(self, address):
            self.__cuda_array_interface__ = {"data": (address, False), "shape": (4, 64),
                                             "typestr": "<V2", "version": 3}  # fmt: skip

    assert key(Bare(1 << 20)) == key(Bare(1 << 20)) != key(Bare(3 << 20))
    assert _calls.layout_key((object(),)) is None


def test_prepared_launch_points_at_new_outputs(ctx, tmp_path, monkeypatch):
    """prepare(): the launch repeats unchanged, and outputs(out, lse)
    rewrites O, LSE and O's tensor map in the packed parameters only."""
    from nvwgmma.kernel.attention import launch

    driver = _recording(monkeypatch, tmp_path)
    d = 128
    qa = Array((2, 256, 4, d), "<V2")
    out, lse = (
        Array((2, 256, 4, d), "<V2", address=3 << 20),
        Array((2, 4, 256), "<f4", address=5 << 20),
    )
    run, o, l_ = launch.prepare(qa, qa, qa, out=out, lse=lse)
    assert (o, l_) == (out, lse)
    run()
    first = driver.launches[-1][4]
    out2, lse2 = (
        Array((2, 256, 4, d), "<V2", address=9 << 20),
        Array((2, 4, 256), "<f4", address=11 << 20),
    )
    assert run.outputs(out2, lse2) == (out2, lse2)
    run()
    second = driver.launches[-1][4]
    assert (second["O"], second["LSE"]) == (9 << 20, 11 << 20)
    assert second["tmO"] not in (0, first["tmO"]) and driver.encoded[-1][1] == 9 << 20
    assert {n: v for n, v in second.items() if n not in ("O", "LSE", "tmO")} == {
        n: v for n, v in first.items() if n not in ("O", "LSE", "tmO")
    }


def test_fp8_launch_reads_v_transposed(ctx, tmp_path, monkeypatch):
    """e4m3 with V stored keys-contiguous: V's map is (keys, head dim,
    heads, batch) over its own strides with a (keys, d) box, no copy; the
    scores' scale carries q_descale x k_descale, O's factor v_descale; O
    is bf16."""
    from nvwgmma.kernel.attention import launch

    driver = _recording(monkeypatch, tmp_path)
    d, s = 128, 320
    qa, ka = q8(s=300, h=8), q8(s=s, h=2, address=2 << 20)
    va = vt8(s=s, h=2, address=4 << 20)
    out, lse = Array((2, 300, 8, d), "<V2", address=3 << 20), Array((2, 8, 300), "<f4")
    launch.attention(qa, ka, va, out=out, lse=lse, q_descale=0.5, k_descale=0.25, v_descale=3.0)
    (_, _, _, _, values), = driver.launches  # fmt: skip
    (_, q_at, q_sizes, q_strides, q_box), _, v_map, o_map = driver.encoded
    assert (q_sizes, q_strides, q_box) == ((d, 8, 300, 2), (d, 8 * d, 300 * 8 * d), (128, 1, 64, 1))
    assert v_map[1:] == (4 << 20, (s, d, 2, 2), (s, d * s, 2 * d * s), (128, 128, 1, 1))
    assert o_map[2:] == ((d, 8, 300, 2), (d * 2, 8 * d * 2, 300 * 8 * d * 2), (64, 1, 64, 1))
    assert values["scale_log2"] == pytest.approx(0.5 * 0.25 * 1.4426950408889634 / d**0.5)
    assert values["o_scale"] == 3.0
    with pytest.raises(ValueError, match=r"out must be bf16 of shape \(2, 300, 8, 128\)"):
        launch.attention(qa, ka, va, out=Array((2, 300, 8, d), "<V1", address=3 << 20))


def test_16_bit_launch_passes_unit_o_scale(ctx, tmp_path, monkeypatch):
    from nvwgmma.kernel.attention import launch

    driver = _recording(monkeypatch, tmp_path)
    launch.attention(q(), q(), q(), out=q(address=3 << 20), lse=Array((2, 4, 256), "<f4"))
    assert driver.launches[0][4]["o_scale"] == 1.0


def test_fp8_v_layout_picks_the_fragment_order(monkeypatch):
    """fp8 V with its head dim contiguous is copied into Vᵀ with P's register
    key order (v_permuted: no shuffles); V given keys-contiguous is read as
    it is, in key order; an explicit config is kept."""
    from nvwgmma.kernel.attention import default_config, launch

    monkeypatch.setattr(launch, "_tensor", _bf16_tensor(launch._tensor))
    assert launch.plan(q8(), q8(), q8()).config.v_permuted
    assert launch.plan(q8(), q8(), q8()).v is None  # the launcher copies it
    assert not launch.plan(q8(), q8(), vt8()).config.v_permuted
    explicit = default_config(128, dtype="e4m3")
    assert launch.plan(q8(), q8(), q8(), config=explicit).config == explicit


@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("permuted", [False, True])
@pytest.mark.parametrize("varlen", [False, True])
def test_vcopy_builds_clean(ctx, d, permuted, varlen):
    """fp8's Vᵀ copy: 16-byte global loads and stores, byte gathers from
    shared memory, no spills; varlen reads its sequence's two offsets."""
    from nvwgmma.compile import compile_to_ptx, run_ptxas
    from nvwgmma.kernel.attention.vcopy import VCopyConfig, build_vcopy
    from nvwgmma.tools import find_tool

    module, meta = build_vcopy(VCopyConfig(d, permuted, varlen))
    assert ptx_offsets(compile_to_ptx(module)) == (2 if varlen else 0)
    ptx = compile_to_ptx(module)
    loads = stores = d * 64 // 16 // 128  # per thread
    assert ptx.count("ld.global.v4") == loads and ptx.count("st.global.v4") == stores
    assert ptx.count("ld.shared.b8") == 16 * stores
    assert meta["dynamic_smem"] == 64 * (d + 4)
    if find_tool("ptxas") is None:
        pytest.skip("ptxas not found")
    assert "0 bytes spill stores" in run_ptxas(ptx, extra_args=["-v"])


def ptx_offsets(ptx):
    """32-bit global loads: varlen's cu[b] and cu[b + 1]."""
    return len(re.findall(r"ld\.global\.(?:u32|b32|s32)", ptx))


def test_vcopy_order_is_the_fragment_key_order():
    """vcopy writes position 16 part + m from key 16 part + run[m]: in
    every 32 keys that is fragment.fp8_key_order (permuted) -- whose every
    16-aligned run repeats its first -- or the keys in order."""
    from nvwgmma.kernel.attention.vcopy import _run_order
    from nvwgmma.kernel.fragment import fp8_key_order

    assert [16 * (p // 16) + _run_order(True)[p % 16] for p in range(96)] == fp8_key_order(96)
    assert _run_order(False) == list(range(16))
    assert _run_order(True) != list(range(16))


def test_vcopy_refuses_other_head_dims(ctx):
    from nvwgmma.kernel.attention.vcopy import VCopyConfig, build_vcopy

    with pytest.raises(ValueError, match="head_dim must be 64, 128 or 256, but got 96"):
        build_vcopy(VCopyConfig(96))


def test_fp8_copied_v_inputs_point_the_copy_at_v():
    """An fp8 launch whose V goes through the Vᵀ copy, re-pointed at a
    call's tensors: Q's and K's maps and cu_seqlens go to the kernel, V's
    address and cu_seqlens_k to the copy (its source); the kernel's V map
    (the copy's storage) is never rewritten."""
    from nvwgmma.kernel import _calls
    from nvwgmma.kernel.attention import SIGNATURE, launch, vcopy

    class Launch:
        def __init__(self, signature):
            self.names, self.values = [n for n, _ in signature], {}

        def set(self, index, value):
            self.values[self.names[index]] = value

    kernel, copy = Launch(SIGNATURE), Launch(vcopy.SIGNATURE)
    inputs = launch._CopiedV(
        _calls.Inputs(kernel, SIGNATURE, [("tmQ", lambda at: ("Q", at)),
                                          ("tmK", lambda at: ("K", at)), ("cuQ", None),
                                          ("cuK", None)]),
        _calls.Inputs(copy, vcopy.SIGNATURE, [("src", None), ("cu", None)]))  # fmt: skip
    q, k, v = (Array((2, 64, 4, 128), "<V1", address=a << 20) for a in (1, 2, 3))
    cu_q, cu_k = (Array((3,), "<i4", address=a << 20) for a in (4, 5))
    inputs(q, k, v, cu_q, cu_k)
    assert kernel.values == {"tmQ": ("Q", 1 << 20), "tmK": ("K", 2 << 20), "cuQ": 4 << 20,
                             "cuK": 5 << 20}  # fmt: skip
    assert copy.values == {"src": 3 << 20, "cu": 5 << 20}
    inputs(q, k, Array((2, 64, 4, 128), "<V1", address=6 << 20), None, None)  # dense
    assert copy.values == {"src": 6 << 20, "cu": 5 << 20} and "tmV" not in kernel.values
