"""matmul and attention under torch.compile and torch.export, without a
GPU: both become the custom ops nvwgmma::matmul / nvwgmma::attention, whose
fake implementations give the outputs' shapes and dtypes (meta tensors);
the compiled graph holds the ops with the call's arguments. (On the GPU,
compiled and exported models run and are checked: test/gpu/deploy.py.)"""

import pytest

torch = pytest.importorskip("torch")

from nvwgmma.kernel import torch_ops  # noqa: E402
from nvwgmma.kernel.attention import attention  # noqa: E402
from nvwgmma.kernel.gemm import GemmConfig, grouped_mm, matmul  # noqa: E402


def meta(*shape, dtype=torch.bfloat16):
    return torch.empty(*shape, dtype=dtype, device="meta")


def _compiled(f):
    """f compiled with fullgraph=True by a backend that keeps the graph."""
    graphs = []

    def backend(gm, inputs):
        graphs.append(gm)
        return gm.forward

    return torch.compile(f, backend=backend, fullgraph=True), graphs


def _ops(gm):
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def test_compiled_matmul_and_attention_become_the_ops():
    def f(x, w, q, k, v):
        return matmul(x, w.T, activation="silu"), attention(q, k, v, causal=True)

    compiled, graphs = _compiled(f)
    y, o = compiled(meta(64, 128), meta(256, 128), meta(2, 128, 8, 64), meta(2, 96, 2, 64),
                    meta(2, 96, 2, 64))  # fmt: skip
    assert (y.shape, y.dtype, o.shape, o.dtype) == (
        (64, 256), torch.bfloat16, (2, 128, 8, 64), torch.bfloat16)  # fmt: skip
    assert "nvwgmma.matmul" in _ops(graphs[0])
    assert "nvwgmma.attention" in _ops(graphs[0])
    call = next(n for n in graphs[0].graph.nodes if str(n.target) == "nvwgmma.matmul")
    assert call.args[3] == "silu"


@pytest.mark.parametrize(
    "a,b,kwargs,shape,dtype",
    [
        ((3, 64, 128), (128, 256), {}, (3, 64, 256), torch.bfloat16),
        ((3, 64, 128), (3, 128, 256), {"out_dtype": "f32"}, (3, 64, 256), torch.float32),
        ((64, 128), (128, 256), {"dtype": torch.float8_e4m3fn}, (64, 256), torch.bfloat16),
    ],
)
def test_matmul_fake_gives_the_output(a, b, kwargs, shape, dtype):
    input_dtype = kwargs.pop("dtype", torch.bfloat16)
    compiled, _ = _compiled(lambda x, y: matmul(x, y, **kwargs))
    c = compiled(meta(*a, dtype=input_dtype), meta(*b, dtype=input_dtype))
    assert (tuple(c.shape), c.dtype) == (shape, dtype)


def test_attention_fake_gives_lse_for_varlen_and_fp8():
    def f(q, k, v, cu):
        return attention(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=64,
                         max_seqlen_k=64, return_lse=True)  # fmt: skip

    compiled, _ = _compiled(f)
    cu = meta(3, dtype=torch.int32)
    o, lse = compiled(meta(100, 8, 128), meta(100, 2, 128), meta(100, 2, 128), cu)
    assert (o.shape, lse.shape, lse.dtype) == ((100, 8, 128), (8, 100), torch.float32)
    fp8 = torch.float8_e4m3fn
    compiled, _ = _compiled(lambda q: attention(q, q, q, return_lse=True))
    o, lse = compiled(meta(2, 64, 4, 64, dtype=fp8))
    assert (o.dtype, lse.shape) == (torch.bfloat16, (2, 4, 64))


def test_config_and_out_are_traced():
    """A GemmConfig travels as a constant token; `out` becomes a copy."""
    config = GemmConfig(tile_n=128, stages=6, scheduler="split_k", splits=4)
    compiled, graphs = _compiled(lambda x, w, out: matmul(x, w.T, config=config, out=out))
    out = meta(64, 256)
    assert compiled(meta(64, 128), meta(256, 128), out) is out
    call = next(n for n in graphs[0].graph.nodes if str(n.target) == "nvwgmma.matmul")
    assert torch_ops._config(call.args[9]) == config
    assert "copy_" in graphs[0].code


def test_stream_is_refused_while_tracing():
    compiled, _ = _compiled(lambda x, w: matmul(x, w.T, stream=5))
    with pytest.raises(Exception, match="stream must be None under torch.compile"):
        compiled(meta(64, 128), meta(256, 128))


def test_unknown_config_token_is_refused():
    with pytest.raises(ValueError, match="config must be a token of config_token"):
        torch_ops._config("GemmConfig:nothing")


def test_export_holds_the_ops():
    class Block(torch.nn.Module):
        def forward(self, x, w, q):
            return attention(q, q, q) + 1, matmul(x, w.T, bias=None, activation="gelu")

    exported = torch.export.export(Block(), (meta(64, 128), meta(256, 128), meta(1, 64, 2, 64)))
    targets = [str(n.target) for n in exported.graph.nodes]
    assert "nvwgmma.matmul.default" in targets and "nvwgmma.attention.default" in targets


def test_fake_refuses_mismatched_k():
    with pytest.raises(Exception, match="a's columns and b's rows must agree"):
        torch.ops.nvwgmma.matmul(meta(64, 128), meta(64, 256), None, None, None, None, None,
                                 None, None, None)  # fmt: skip


def test_compiled_grouped_mm_becomes_the_op():
    """Both layouts: offsets over (T, K) tokens, counts over (G, R, K)."""
    compiled, graphs = _compiled(lambda x, w, offs: grouped_mm(x, w, offs=offs))
    y = compiled(meta(100, 128), meta(4, 128, 256), meta(4, dtype=torch.int32))
    assert (tuple(y.shape), y.dtype) == ((100, 256), torch.bfloat16)
    assert "nvwgmma.grouped_mm" in _ops(graphs[0])
    compiled, _ = _compiled(lambda x, w, n: grouped_mm(x, w, counts=n, out_dtype="f32"))
    y = compiled(meta(4, 16, 128), meta(4, 128, 256), meta(4, dtype=torch.int32))
    assert (tuple(y.shape), y.dtype) == ((4, 16, 256), torch.float32)


def test_compiled_fused_and_scaled_grouped_mm_become_the_op():
    """bias, activation, gate and fp8 scales are traced with the op; a
    gated output has half of b's columns, an fp8 one is bf16."""
    from nvwgmma.kernel.gemm import scaled_grouped_mm

    offs = meta(4, dtype=torch.int32)
    compiled, graphs = _compiled(
        lambda x, w, offs, bias: grouped_mm(
            x, w, offs=offs, bias=bias, activation="gelu", gate="silu"
        )  # fmt: skip
    )
    y = compiled(meta(100, 128), meta(4, 128, 256), offs, meta(4, 256))
    assert (tuple(y.shape), y.dtype) == ((100, 128), torch.bfloat16)
    assert "nvwgmma.grouped_mm" in _ops(graphs[0])
    fp8 = torch.float8_e4m3fn
    compiled, graphs = _compiled(
        lambda x, w, sa, sb, offs: scaled_grouped_mm(x, w, sa, sb, offs=offs)
    )
    y = compiled(meta(100, 128, dtype=fp8), meta(4, 128, 256, dtype=fp8),
                 meta(100, dtype=torch.float32), meta(4, 256, dtype=torch.float32), offs)  # fmt: skip
    assert (tuple(y.shape), y.dtype) == ((100, 256), torch.bfloat16)
    assert "nvwgmma.grouped_mm" in _ops(graphs[0])


def test_compiled_blockwise_mm_becomes_the_op():
    from nvwgmma.kernel.gemm import blockwise_mm

    fp8 = torch.float8_e4m3fn
    compiled, graphs = _compiled(lambda a, b, sa, sb: blockwise_mm(a, b, sa, sb))
    y = compiled(meta(256, 512, dtype=fp8), meta(512, 384, dtype=fp8),
                 meta(256, 4, dtype=torch.float32), meta(3, 4, dtype=torch.float32))  # fmt: skip
    assert (tuple(y.shape), y.dtype) == ((256, 384), torch.bfloat16)
    assert "nvwgmma.blockwise_mm" in _ops(graphs[0])


def test_compiled_attention_trains_through_the_backward_op():
    """Under torch.compile, attention's gradient is nvwgmma::attention's
    registered autograd: the backward graph calls nvwgmma::attention_backward
    and q, k and v get gradients of their shapes (GQA: k's heads)."""
    from functorch.compile import make_boxed_func
    from torch._functorch.aot_autograd import aot_module_simplified

    graphs = {"forward": [], "backward": []}

    def keep(kind):
        def compiler(gm, inputs):
            graphs[kind].append(gm)
            return make_boxed_func(gm.forward)

        return compiler

    def backend(gm, inputs):
        return aot_module_simplified(gm, inputs, fw_compiler=keep("forward"),
                                     bw_compiler=keep("backward"))  # fmt: skip

    compiled = torch.compile(lambda q, k, v: attention(q, k, v, causal=True), backend=backend,
                             fullgraph=True)  # fmt: skip
    q = meta(2, 128, 8, 64).requires_grad_(True)
    k, v = (meta(2, 96, 2, 64).requires_grad_(True) for _ in range(2))
    compiled(q, k, v).sum().backward()
    assert "nvwgmma.attention.default" in _ops(graphs["forward"][0])
    assert "nvwgmma.attention_backward.default" in _ops(graphs["backward"][0])
    assert [tuple(x.grad.shape) for x in (q, k, v)] == [(2, 128, 8, 64), (2, 96, 2, 64),
                                                        (2, 96, 2, 64)]  # fmt: skip
