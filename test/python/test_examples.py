"""examples/block.py without a GPU (torch's CPU build, float32): the
block's math against a direct reference, and the tensor-parallel shares of
its weights (what examples/tp_block.py gives each rank) rebuilding the whole.
(On two GPUs over NCCL: examples/tp_block.py itself.)"""

import pathlib
import sys

import pytest

torch = pytest.importorskip("torch")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples"))

from block import Block, Shape, weights  # noqa: E402

SHAPE = Shape(width=64, heads=4, kv_heads=2, head_dim=16, ffn=96)


def _reference(x, wqkv, wo, gate, up, down, s=SHAPE):
    batch, seq, _ = x.shape
    q_cols, kv_cols = s.heads * s.head_dim, s.kv_heads * s.head_dim
    rows = x.reshape(-1, s.width)
    qkv = rows @ wqkv.T
    q = qkv[:, :q_cols].view(batch, seq, s.heads, s.head_dim).transpose(1, 2)
    k = qkv[:, q_cols : q_cols + kv_cols].view(batch, seq, s.kv_heads, s.head_dim)
    v = qkv[:, q_cols + kv_cols :].view(batch, seq, s.kv_heads, s.head_dim)
    group = s.heads // s.kv_heads
    k, v = (t.repeat_interleave(group, dim=2).transpose(1, 2) for t in (k, v))
    scores = q @ k.transpose(-1, -2) / s.head_dim**0.5
    mask = torch.ones(seq, seq, dtype=torch.bool).triu(1)
    p = scores.masked_fill(mask, float("-inf")).softmax(-1)
    o = (p @ v).transpose(1, 2).reshape(-1, q_cols)
    h = rows + o @ wo.T
    mlp = (torch.nn.functional.silu(h @ gate.T) * (h @ up.T)) @ down.T
    return (h + mlp).view(batch, seq, s.width)


def test_block_computes_attention_then_the_gated_mlp():
    whole = [w.float() for w in weights(SHAPE, "cpu")]
    x = torch.randn(2, 8, SHAPE.width, generator=torch.Generator().manual_seed(0))
    got = Block(SHAPE, whole, kernels="torch")(x)
    torch.testing.assert_close(got, _reference(x, *whole), rtol=1e-4, atol=1e-4)


def test_tensor_parallel_shares_rebuild_the_weights():
    """Rank r holds heads r*H/p.. and MLP columns r*F/p..: QKV, gate and up
    split by output rows (Q, K and V each), O and down by input columns."""
    s, parts = SHAPE, 2
    whole = weights(s, "cpu")
    shares = [weights(s, "cpu", rank=r, parts=parts) for r in range(parts)]
    q_rows, kv_rows = s.heads * s.head_dim, s.kv_heads * s.head_dim
    split = [q_rows // parts, kv_rows // parts, kv_rows // parts]
    q, k, v = (torch.cat(ps) for ps in zip(*(sh[0].split(split) for sh in shares)))
    assert torch.equal(torch.cat([q, k, v]), whole[0])
    assert torch.equal(torch.cat([sh[1] for sh in shares], dim=1), whole[1])
    for i in (2, 3):
        assert torch.equal(torch.cat([sh[i] for sh in shares]), whole[i])
    assert torch.equal(torch.cat([sh[4] for sh in shares], dim=1), whole[4])


def test_tensor_parallel_ranks_compute_the_whole_block():
    """Two ranks, each with its shares, their all-reduces simulated with
    threads in lock step: every rank's output is the whole block's."""
    import threading

    s, parts = SHAPE, 2
    x = torch.randn(1, 8, s.width, generator=torch.Generator().manual_seed(1))
    whole = Block(s, [w.float() for w in weights(s, "cpu")], kernels="torch")(x)
    barrier, deposits, outputs = threading.Barrier(parts), {}, {}

    def all_reduce(rank):
        def reduce(y):
            deposits[rank] = y
            barrier.wait()
            total = sum(deposits[r] for r in range(parts))
            barrier.wait()  # every rank has read the deposits
            return total

        return reduce

    def run(rank):
        share = [w.float() for w in weights(s, "cpu", rank=rank, parts=parts)]
        block = Block(s, share, kernels="torch", parts=parts)
        block._reduce = all_reduce(rank)
        outputs[rank] = block(x)

    threads = [threading.Thread(target=run, args=(r,)) for r in range(parts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for rank in range(parts):
        torch.testing.assert_close(outputs[rank], whole, rtol=1e-4, atol=1e-4)
