"""attention's gradients on the GPU: dQ, dK and dV of `attention` (through
torch autograd) against a float64 reference, next to SDPA's own backward
on the same bf16/f16 inputs; head dims 64 and 128, causal or not, GQA and
MQA, unequal and ragged lengths, varlen. A case passes when every
gradient's largest error against a float64 reference is at most SDPA's
(x 1.5, + 1e-3 absolute: the two round differently).

    # here (nvwgmma built): the PTX
    python test/gpu/attention_backward.py generate .device/ptx
    # on the GPU (torch; no nvwgmma build)
    python test/gpu/attention_backward.py
"""

import math
import os
import sys

try:  # here: the installed package builds the PTX; on the GPU: the source's runtime
    import nvwgmma.ir  # noqa: F401
except ImportError:
    sys.path[:0] = ["python"]
os.environ.setdefault("NVWGMMA_PTX_DIR", ".device/ptx")

# (batch, Sq, Sk, Hq, Hkv, D, causal)
DENSE = [
    (2, 256, 256, 4, 4, 128, False),
    (2, 256, 256, 4, 4, 128, True),
    (2, 256, 256, 4, 4, 64, False),
    (2, 256, 256, 4, 4, 64, True),
    (1, 1000, 1000, 8, 2, 128, True),  # GQA, ragged
    (1, 1000, 1000, 8, 2, 64, False),
    (3, 333, 517, 6, 1, 128, False),  # MQA, Sq != Sk
    (3, 517, 333, 6, 3, 128, True),  # Sq > Sk: rows without keys
    (2, 517, 333, 4, 2, 64, True),
    (1, 64, 64, 2, 2, 128, True),
    (1, 2048, 2048, 16, 16, 128, True),
    (1, 2048, 2048, 16, 16, 64, False),
    (2, 256, 256, 4, 4, 256, False),
    (2, 517, 333, 4, 2, 256, True),
    (1, 1000, 1000, 8, 8, 256, True),
]
VARLEN = [  # (sequence lengths, Hq, Hkv, D, causal)
    ((100, 257, 64, 513), 4, 2, 128, True),
    ((100, 257, 64, 513), 4, 4, 64, False),
    ((1, 129, 300), 8, 1, 128, False),
    ((100, 257, 64, 513), 4, 2, 256, True),
]


def generate(directory):
    """Every shipped forward configuration (their V copies) and every
    backward one with its preparation pass."""
    from nvwgmma.kernel.attention.launch import precompile

    precompile(directory)


def reference(q, k, v, causal, scale):
    """softmax(Q Kᵀ scale) V in float32 (float64 for float64 inputs),
    (batch, seq, heads, d), GQA by repeating K/V heads; causal bottom-right
    aligned."""
    import torch

    group = q.shape[2] // k.shape[2]
    wide = torch.float64 if q.dtype == torch.float64 else torch.float32
    qf, kf, vf = (x.to(wide).transpose(1, 2) for x in (q, k, v))
    kf, vf = kf.repeat_interleave(group, 1), vf.repeat_interleave(group, 1)
    s = qf @ kf.transpose(-1, -2) * scale
    if causal:
        sq, sk = s.shape[-2], s.shape[-1]
        i = torch.arange(sq, device=s.device)[:, None]
        j = torch.arange(sk, device=s.device)[None, :]
        s = s.masked_fill(j > i + sk - sq, float("-inf"))
    p = torch.softmax(s, -1).nan_to_num(0.0)
    return (p @ vf).transpose(1, 2)


def sdpa(q, k, v, causal):
    import torch
    import torch.nn.functional as F

    group = q.shape[2] // k.shape[2]
    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
    kt, vt = kt.repeat_interleave(group, 1), vt.repeat_interleave(group, 1)
    if causal and q.shape[1] != k.shape[1]:  # SDPA's mask is top-left: give it ours
        sq, sk = q.shape[1], k.shape[1]
        i = torch.arange(sq, device=q.device)[:, None]
        j = torch.arange(sk, device=q.device)[None, :]
        mask = j <= i + sk - sq
        return F.scaled_dot_product_attention(qt, kt, vt, attn_mask=mask).transpose(1, 2)
    return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal).transpose(1, 2)


def grads(fn, inputs, do):
    import torch

    leaves = [x.detach().clone().requires_grad_(True) for x in inputs]
    out = fn(*leaves)
    out.backward(do)
    torch.cuda.synchronize()
    return [x.grad for x in leaves], out


def check(name, inputs, do, ours, ref, theirs):
    """Largest error of each gradient against ref, ours and SDPA's."""
    g_ours, _ = grads(ours, inputs, do)
    g_ref, _ = grads(ref, [x.double() for x in inputs], do.double())
    g_sdpa, _ = grads(theirs, inputs, do)
    ok, parts = True, []
    for label, a, r, s in zip(("dq", "dk", "dv"), g_ours, g_ref, g_sdpa):
        if s is not None:
            s = s.double()
        e_ours = (a.double() - r).abs().max().item() if a is not None else math.inf
        e_sdpa = (s - r).abs().max().item()
        good = math.isfinite(e_ours) and e_ours <= 1.5 * e_sdpa + 1e-3
        ok &= good
        parts.append(f"{label} {e_ours:.2e}/{e_sdpa:.2e}{'' if good else ' FAIL'}")
    print(f"{'ok  ' if ok else 'FAIL'} {name}: " + ", ".join(parts), flush=True)
    return ok


def _per_sequence(cu, f):
    """f applied to each packed sequence alone, the outputs packed again."""

    def run(q, k, v):
        import torch

        bounds = zip(cu[:-1].tolist(), cu[1:].tolist())
        return torch.cat([f(q[a:e][None], k[a:e][None], v[a:e][None])[0] for a, e in bounds])

    return run


def main():
    import torch
    from nvwgmma.kernel.attention import attention

    torch.manual_seed(0)
    print(torch.cuda.get_device_name(), torch.version.cuda, torch.__version__, flush=True)
    bad = 0
    for dtype in (torch.bfloat16, torch.float16):
        for b, sq, sk, hq, hkv, d, causal in DENSE:
            q = torch.randn(b, sq, hq, d, device="cuda", dtype=dtype)
            k = torch.randn(b, sk, hkv, d, device="cuda", dtype=dtype)
            v = torch.randn(b, sk, hkv, d, device="cuda", dtype=dtype)
            do = torch.randn(b, sq, hq, d, device="cuda", dtype=dtype)
            scale = 1 / math.sqrt(d)
            name = f"{str(dtype)[6:]} b{b} q{sq} k{sk} h{hq}/{hkv} d{d} causal={causal}"
            bad += not check(name, [q, k, v], do,
                             lambda q, k, v, c=causal: attention(q, k, v, causal=c),
                             lambda q, k, v, c=causal, s=scale: reference(q, k, v, c, s),
                             lambda q, k, v, c=causal: sdpa(q, k, v, c))  # fmt: skip
        for lengths, hq, hkv, d, causal in VARLEN:
            total = sum(lengths)
            cu = torch.tensor([0, *lengths], device="cuda").cumsum(0).to(torch.int32)
            q = torch.randn(total, hq, d, device="cuda", dtype=dtype)
            k = torch.randn(total, hkv, d, device="cuda", dtype=dtype)
            v = torch.randn(total, hkv, d, device="cuda", dtype=dtype)
            do = torch.randn(total, hq, d, device="cuda", dtype=dtype)
            scale = 1 / math.sqrt(d)

            varlen = {"cu_seqlens_q": cu, "cu_seqlens_k": cu, "max_seqlen_q": max(lengths),
                      "max_seqlen_k": max(lengths)}  # fmt: skip
            name = f"{str(dtype)[6:]} varlen {lengths} h{hq}/{hkv} d{d} causal={causal}"
            bad += not check(
                name, [q, k, v], do,
                lambda q, k, v, c=causal, x=varlen: attention(q, k, v, causal=c, **x),
                _per_sequence(cu, lambda q, k, v, c=causal, s=scale: reference(q, k, v, c, s)),
                _per_sequence(cu, lambda q, k, v, c=causal: sdpa(q, k, v, c)),
            )  # fmt: skip
    bad += deterministic()
    bad += repeated()
    print(f"{bad} failing", flush=True)
    return bad


def deterministic():
    """`deterministic` (and torch.use_deterministic_algorithms): dQ, dK and
    dV repeat bit for bit over five runs, and match the default order's to
    rounding."""
    import torch
    from nvwgmma.kernel.attention import attention
    from nvwgmma.kernel.attention.backward import attention_backward

    bad = 0
    for b, s, hq, hkv, d, causal in ((2, 1000, 8, 2, 128, True), (1, 2048, 16, 16, 64, False)):
        q, do = (torch.randn(b, s, hq, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        k, v = (torch.randn(b, s, hkv, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        o, lse = attention(q, k, v, causal=causal, return_lse=True)
        runs = [attention_backward(do, q, k, v, o, lse, causal=causal, deterministic=True)
                for _ in range(5)]  # fmt: skip
        torch.use_deterministic_algorithms(True)
        try:
            runs.append(attention_backward(do, q, k, v, o, lse, causal=causal))
        finally:
            torch.use_deterministic_algorithms(False)
        free = attention_backward(do, q, k, v, o, lse, causal=causal, deterministic=False)
        same = all(torch.equal(a, x) for run in runs[1:] for a, x in zip(runs[0], run))
        close = max(((a.float() - x.float()).abs().max() / x.float().abs().max()).item()
                    for a, x in zip(runs[0], free))  # fmt: skip
        ok = same and close < 1e-2
        print(f"{'ok  ' if ok else 'FAIL'} deterministic b{b} S={s} h{hq}/{hkv} d{d} "
              f"causal={causal}: 6 runs bit-equal {same}, vs default order {close:.1e}",
              flush=True)  # fmt: skip
        bad += not ok
    return bad


def repeated():
    """attention_backward's launch cache: a repeated call (same tensors)
    reuses the packed launches yet follows the inputs' new contents, equal
    bit for bit to a call prepared afresh; a call captured into a CUDA
    graph replays on new contents; a call on new tensors of the same layout
    reuses them re-pointed (the deterministic order: bit-equal)."""
    import torch
    from nvwgmma.kernel.attention import attention
    from nvwgmma.kernel.attention.backward import attention_backward, launch

    b, s, h, d = 2, 1000, 8, 128
    q, k, v, do = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
                   for _ in range(4))  # fmt: skip
    o, lse = attention(q, k, v, causal=True, return_lse=True)

    def call():
        return attention_backward(do, q, k, v, o, lse, causal=True, deterministic=True)

    first = call()
    do.copy_(torch.randn_like(do))
    again = call()  # the cached launch
    launch._recent.clear()
    fresh = call()  # prepared afresh
    follows = all(not torch.equal(a, x) for a, x in zip(first, again))
    same = all(torch.equal(a, x) for a, x in zip(again, fresh))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = call()
    do.copy_(torch.randn_like(do))
    graph.replay()
    eager = call()
    replayed = all(torch.equal(a, x) for a, x in zip(captured, eager))
    # New tensors of the same layout (a training step's new activations):
    # the launch re-pointed at them, equal to a launch prepared for them.
    q2, k2, v2, do2, o2, lse2 = (t.clone() for t in (q, k, v, do, o, lse))
    q2.copy_(torch.randn_like(q2))
    moved = attention_backward(do2, q2, k2, v2, o2, lse2, causal=True, deterministic=True)
    launch._recent.clear()
    own = attention_backward(do2, q2, k2, v2, o2, lse2, causal=True, deterministic=True)
    rebound = all(torch.equal(a, x) for a, x in zip(moved, own))
    ok = follows and same and replayed and rebound
    print(f"{'ok  ' if ok else 'FAIL'} repeated calls: follow new dO {follows}, cached == fresh "
          f"{same}, graph replay == eager {replayed}, new tensors of one layout {rebound}",
          flush=True)  # fmt: skip
    return not ok


if __name__ == "__main__":
    if sys.argv[1:2] == ["generate"]:
        generate(sys.argv[2])
    else:
        sys.exit(1 if main() else 0)
