"""nvwgmma.kernel.attention.backward without a GPU: every configuration
the launcher picks builds, passes the strict protocol checker (IR and
PTX) and assembles with 0 spills, setmaxnreg applied and no wgmma
serialisation; configurations it cannot build are refused by name;
`attention` on inputs that require grad refuses what its differentiable
path cannot honour. (Gradients on the
GPU: test/gpu/attention_backward.py; speed: bench/attention/backward.py.)"""

import pytest


def _configs():
    from nvwgmma.kernel.attention.backward.launch import backward_configs

    return backward_configs()


@pytest.mark.parametrize("config", _configs(), ids=lambda c: c.name)
def test_every_configuration_is_clean(ctx, config):
    from nvwgmma.compile import compile_to_ptx, run_ptxas
    from nvwgmma.kernel.attention.backward import build_attention_backward
    from nvwgmma.passmanager import PassManager
    from nvwgmma.ptx_check import require_clean_ptx
    from nvwgmma.tools import find_tool

    module, meta = build_attention_backward(config)
    PassManager.parse("builtin.module(nvwgmma-check-protocol{strict=true})").run(module.operation)
    ptx = compile_to_ptx(module)
    require_clean_ptx(ptx)
    assert meta["dynamic_smem"] == config.shared_memory_bytes <= 227 * 1024
    assert meta["block"] == [384, 1, 1] and meta["block_n"] == (64 if config.shared_keys else 128)
    if find_tool("ptxas") is None:
        pytest.skip("ptxas not found")
    messages = run_ptxas(ptx, extra_args=["-v"])
    assert "0 bytes spill stores, 0 bytes spill loads" in messages, messages
    for bad in ("serialized", "injected", "C7508"):  # C7508: setmaxnreg ignored
        assert bad not in messages, messages


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"head_dim": 96}, r"head_dim must be 64, 128 or 256 for the backward, but got 96"),
        ({"dtype": "e4m3"}, r"dtype must be bf16 or f16 for the backward, but got 'e4m3'"),
        ({"consumers": 3}, r"consumers must be 2 \(128 keys per CTA\), but got 3"),
        ({"stages": 5}, r"stages must be in \[1, 4\], but got 5"),
        (
            {"stages": 1},
            r"the Q/dO ring must hold every consumer's dK and dV at the end \(65536 bytes\), "
            r"but 1 stage\(s\) hold 33792",
        ),
        ({"consumer_regs": 248}, r"registers must be multiples of 8 within .* 248 and 24"),
        ({"causal": 1}, r"causal must be a bool, but got 1"),
        (
            {"block_m": 128},
            r"block_m must be 64, or 128 at head dim 64, but got 128 at head dim 128",
        ),
        ({"block_m": 96, "head_dim": 64}, r"block_m must be 64, or 128 at head dim 64, but got 96"),
    ],
)
def test_refuses_what_it_cannot_build(changes, message):
    from nvwgmma.kernel.attention.backward import BackwardConfig, check_backward_config

    with pytest.raises((ValueError, TypeError), match=message):
        check_backward_config(BackwardConfig().replace(**changes))


def test_shared_memory_plan():
    """K and V (two 64-key tiles each), two Q/dO/LSE/D stages, two dSᵀ
    buffers per consumer, the barriers, the alignment slack."""
    from nvwgmma.kernel.attention.backward import BackwardConfig, default_backward_config

    c = BackwardConfig(head_dim=128)
    assert c.kv_tile_bytes == 16384 and c.stage_bytes == 33792 and c.ds_bytes == 8192
    assert c.dq_bytes == 16384  # 64 queries x 64 head dims, f32
    assert c.shared_memory_bytes == 4 * 16384 + 2 * 33792 + 4 * 8192 + 2 * 16384 + 40 + 1008
    assert BackwardConfig(head_dim=64).stage_bytes == 17408  # 2 x 8192 + 512, 1024-aligned
    # Head dim 64's default: 128 queries a block, dQ's rows split (64 x 64 f32 each).
    d64 = default_backward_config(64)
    assert (d64.block_m, d64.dq_rows_split, d64.dq_n, d64.dq_bytes) == (128, True, 64, 16384)
    assert d64.stage_bytes == 33792 and d64.ds_bytes == 16384


def test_differentiable_attention_refuses_outputs_and_configs():
    """Inputs that require grad take the autograd path, which saves its own
    O and LSE: a preallocated out, lse, a config or descales are refused
    before anything runs."""
    torch = pytest.importorskip("torch")
    from nvwgmma.kernel.attention import attention

    q = torch.zeros(1, 64, 2, 128, dtype=torch.bfloat16, requires_grad=True)
    for extra in ({"out": torch.empty(1)}, {"lse": torch.empty(1)}, {"config": object()},
                  {"v_descale": 2.0}):  # fmt: skip
        with pytest.raises(ValueError, match=r"attention with inputs that require grad takes no"):
            attention(q, q, q, **extra)


def test_backward_refuses_what_is_not_a_cuda_tensor():
    """attention_backward takes torch tensors on a CUDA device: anything
    else is refused by name before a stream, kernel or buffer is touched."""
    torch = pytest.importorskip("torch")
    from nvwgmma.kernel.attention.backward import attention_backward

    x = torch.zeros(1, 64, 2, 128, dtype=torch.bfloat16)
    lse = torch.zeros(1, 2, 64)
    with pytest.raises(ValueError, match=r"^do must be a torch tensor on a CUDA device, but got "
                                         r"NoneType$"):  # fmt: skip
        attention_backward(None, x, x, x, x, lse)
    with pytest.raises(ValueError, match=r"^do must be a torch tensor on a CUDA device, but got a "
                                         r"tensor on cpu$"):  # fmt: skip
        attention_backward(x, x, x, x, x, lse)


@pytest.mark.parametrize("head_dim", [64, 128, 256])
@pytest.mark.parametrize("varlen", [False, True])
def test_preparation_pass_assembles(ctx, head_dim, varlen):
    """D, LSE in log2 units and dQ's zeroed rows: one 256-thread kernel per
    head dim and layout, no spills."""
    from nvwgmma.compile import compile_to_ptx, run_ptxas
    from nvwgmma.kernel.attention.backward import prepare
    from nvwgmma.tools import find_tool

    module, meta = prepare.build_prepare(prepare.PrepareConfig(head_dim, "bf16", varlen))
    ptx = compile_to_ptx(module)
    assert meta["block"] == [256, 1, 1] and meta["rows_per_cta"] == 64
    assert ptx.count("shfl.sync.bfly") == 5 * 8  # a warp reduces each of its 8 rows
    if find_tool("ptxas") is None:
        pytest.skip("ptxas not found")
    assert "0 bytes spill stores" in run_ptxas(ptx, extra_args=["-v"])


def test_precompile_covers_every_launch(tmp_path):
    """The backward's precompiled set: each configuration the launcher can
    pick and the preparation pass of each head dim, dtype and layout."""
    from nvwgmma.kernel.attention.backward.launch import backward_configs, precompile

    paths = precompile(str(tmp_path))
    assert len(paths) == len(backward_configs()) + 3 * 2 * 2
    assert all(p.endswith(".ptx") for p in paths)


def test_deterministic_order_is_acquire_release(ctx):
    """deterministic: the store warp spins with acquire loads on its dQ
    block's counter, fences the async proxy both ways around its
    reduce-adds, waits for them to complete (not only to read shared
    memory), then releases the next key block's turn."""
    from nvwgmma.compile import compile_to_ptx
    from nvwgmma.kernel.attention.backward import build_attention_backward, default_backward_config

    ptx = compile_to_ptx(build_attention_backward(
        default_backward_config(128).replace(deterministic=True))[0])  # fmt: skip
    free = compile_to_ptx(build_attention_backward(default_backward_config(128))[0])
    assert "ld.acquire.gpu" in ptx and "ld.acquire.gpu" not in free
    assert ptx.count("fence.proxy.async.global") == 2 and "fence.proxy.async.global" not in free
    assert "cp.async.bulk.wait_group \t0;" in ptx  # completion, not .read
    assert "fence.release.gpu;" in ptx and "atom.global.add.u32" in ptx


class Launch:
    """A packed launch's parameters, as `set` writes them."""

    def __init__(self):
        self.values = {}

    def set(self, index, value):
        self.values[index] = value


@pytest.mark.parametrize("varlen,deterministic", [(False, False), (True, True)])
def test_backward_points_both_launches_at_each_call(varlen, deterministic):
    """_Backward.outputs: every per-call parameter of the preparation and
    the backward kernel is rewritten with that call's tensor -- the inputs'
    addresses and Q/K/V/dO maps, the new LSE2/D/dQ buffers' maps and
    addresses, dK, dV, the counters (deterministic), cu_seqlens (varlen) --
    and nothing else; dQ comes back as the buffer's rows."""
    torch = pytest.importorskip("torch")
    from nvwgmma.kernel.attention.backward import kernel, launch, prepare

    def names(signature, values):
        return {signature[i][0]: v for i, v in values.items()}

    tagged = [lambda at, t=t: (t, at) for t in ("Q", "K", "V", "dO")]
    prep, main = Launch(), Launch()
    slots = launch._slots(prep, main, tagged, lambda at: ("rows", at), lambda at: ("acc", at))
    rows = (0, slice(0, 10)) if varlen else (slice(None), slice(0, 10))
    bwd = launch._Backward(prep, main, *slots, (1, 2, 16), (1, 16, 2, 64), (1, 10, 1, 64),
                           torch.bfloat16, torch.device("cpu"), 4 if deterministic else 0,
                           rows)  # fmt: skip
    do, q, k, v, o = (torch.zeros(1, 10, 2, 64, dtype=torch.bfloat16) for _ in range(5))
    lse = torch.zeros(1, 2, 10)
    cu = (torch.zeros(2, dtype=torch.int32), torch.zeros(2, dtype=torch.int32)) if varlen else (
        None, None)  # fmt: skip
    dq, dk, dv = bwd.outputs((do, q, k, v, o, lse, *cu))
    p, m = names(prepare.SIGNATURE, prep.values), names(kernel.SIGNATURE, main.values)
    lse2, dd, acc = p["lse2"], p["D"], p["dQacc"]
    assert len({lse2, dd, acc, dk.data_ptr(), dv.data_ptr()}) == 5
    assert {k: v for k, v in p.items() if k not in ("lse2", "D", "dQacc")} == {
        "dO": do.data_ptr(), "O": o.data_ptr(), "LSE": lse.data_ptr(),
        **({"cuQ": cu[0].data_ptr()} if varlen else {})}  # fmt: skip
    expected = {"tmQ": ("Q", q.data_ptr()), "tmK": ("K", k.data_ptr()),
                "tmV": ("V", v.data_ptr()), "tmdO": ("dO", do.data_ptr()),
                "tmLSE": ("rows", lse2), "tmD": ("rows", dd), "tmdQ": ("acc", acc),
                "dK": dk.data_ptr(), "dV": dv.data_ptr()}  # fmt: skip
    if varlen:
        expected.update(cuQ=cu[0].data_ptr(), cuK=cu[1].data_ptr())
    sem = m.pop("sem", None)
    assert m == expected and (sem is not None) == deterministic
    assert dq.shape == ((10, 2, 64) if varlen else (1, 10, 2, 64)) and dq.data_ptr() == acc
    assert dk.shape == dv.shape == (1, 10, 1, 64) and dk.dtype == torch.bfloat16


def test_inputs_encode_a_map_only_at_a_new_address():
    """_calls.Inputs: a slot whose tensor sits where the last call's did
    keeps its tensor map (rebuilding one is host work on every call; steady-state
    training steps reuse addresses); a tensor at a new address gets its
    map encoded, and a plain pointer is written every call."""
    torch = pytest.importorskip("torch")
    from nvwgmma.kernel import _calls

    encoded = []

    def map_of(at):
        encoded.append(at)
        return ("map", at)

    launch = Launch()
    inputs = _calls.Inputs(launch, [("tm", "map"), ("p", "ptr")], [("tm", map_of), ("p", None)])
    a, b = torch.zeros(4), torch.zeros(4)
    inputs(a, b)
    inputs(a, a)
    assert encoded == [a.data_ptr()] and launch.values == {
        0: ("map", a.data_ptr()),
        1: a.data_ptr(),
    }
    inputs(b, None)
    assert encoded == [a.data_ptr(), b.data_ptr()] and launch.values[0] == ("map", b.data_ptr())
    inputs(a, b)
    assert encoded[-1] == a.data_ptr() and launch.values == {
        0: ("map", a.data_ptr()),
        1: b.data_ptr(),
    }
