"""Training through `attention` on the GPU: a small pre-norm transformer
block (attention, the rest torch) trained one step with nvwgmma's attention
and with SDPA from the same weights -- loss and every parameter's gradient
compared, step times paired -- then the same step under torch.compile and
a forward + backward captured in a CUDA graph and replayed on new inputs,
each against eager; with two GPUs, the gradients on the second GPU.

    # here (nvwgmma built): the PTX
    python test/gpu/attention_backward.py generate .device/ptx
    # on the GPU (torch; no nvwgmma build)
    python test/gpu/attention_training.py
"""

import copy
import os
import statistics
import sys

try:  # here: the installed package; on the GPU: the source's runtime
    import nvwgmma.ir  # noqa: F401
except ImportError:
    sys.path[:0] = ["python"]
sys.path[:0] = ["bench/gemm"]
os.environ.setdefault("NVWGMMA_PTX_DIR", ".device/ptx")


def block(dim, heads, kv_heads, use):
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.d = dim // heads
            self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.qkv = nn.Linear(dim, (heads + 2 * kv_heads) * self.d, bias=False)
            self.out = nn.Linear(dim, dim, bias=False)
            self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

        def forward(self, x):
            b, s, _ = x.shape
            q, k, v = self.qkv(self.norm1(x)).split(
                [heads * self.d, kv_heads * self.d, kv_heads * self.d], -1)  # fmt: skip
            q = q.view(b, s, heads, self.d)
            k, v = (t.view(b, s, kv_heads, self.d) for t in (k, v))
            if use == "nvwgmma":
                from nvwgmma.kernel.attention import attention

                o = attention(q, k, v, causal=True)
            else:
                qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))
                o = F.scaled_dot_product_attention(qt, kt, vt, is_causal=True,
                                                   enable_gqa=kv_heads != heads).transpose(1, 2)  # fmt: skip
            x = x + self.out(o.reshape(b, s, dim))
            return x + self.mlp(self.norm2(x))

    return Block().cuda().to(torch.bfloat16)


def train(model, x, target):
    """One step's forward and backward; the loss."""
    import torch

    model.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x).float(), target)
    loss.backward()
    return loss


def step(model, x, target):
    """(loss, {name: grad}) of one step."""
    loss = train(model, x, target)
    return loss.item(), {n: p.grad.float().clone() for n, p in model.named_parameters()}


def worst(a, b):
    """The largest gradient difference relative to that gradient's size."""
    return max(((a[n] - b[n]).abs().max() / b[n].abs().max().clamp_min(1e-30)).item() for n in b)


def main():
    import torch
    from run import _time

    torch.manual_seed(0)
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    bad = 0
    for dim, heads, kv_heads, b, s in ((1024, 8, 8, 4, 2048), (2048, 16, 4, 2, 4096)):
        ours = block(dim, heads, kv_heads, "nvwgmma")
        theirs = block(dim, heads, kv_heads, "sdpa")  # the same weights, SDPA's attention
        theirs.load_state_dict(ours.state_dict())
        reference = block(dim, heads, kv_heads, "sdpa").float()
        reference.load_state_dict(ours.state_dict())
        x = torch.randn(b, s, dim, device="cuda", dtype=torch.bfloat16)
        target = torch.randn(b, s, dim, device="cuda")
        loss_o, g_o = step(ours, x, target)
        loss_t, g_t = step(theirs, x, target)
        loss_r, g_r = step(reference, x.float(), target)
        e_ours, e_sdpa = worst(g_o, g_r), worst(g_t, g_r)
        ok = abs(loss_o - loss_r) <= 2 * abs(loss_t - loss_r) + 1e-3 * abs(loss_r) and (
            e_ours <= 1.5 * e_sdpa + 1e-3)  # fmt: skip
        t_o, t_t = (statistics.median(_time(lambda m=m, a=x, t=target: train(m, a, t))
                                      for _ in range(3)) for m in (ours, theirs))  # fmt: skip
        print(f"{'ok  ' if ok else 'FAIL'} block dim {dim}, {heads}/{kv_heads} heads, {b} x {s}: "
              f"loss {loss_o:.6f} (SDPA {loss_t:.6f}, f32 {loss_r:.6f}); gradients vs f32 "
              f"{e_ours:.2e} (SDPA {e_sdpa:.2e}); step {t_o:.2f} ms, SDPA {t_t:.2f} ms "
              f"({t_t / t_o:.3f}x)", flush=True)  # fmt: skip
        bad += not ok
        # The same step compiled: the op and its registered backward.
        compiled = copy.deepcopy(ours)
        compiled.forward = torch.compile(compiled.forward)
        loss_c, g_c = step(compiled, x, target)
        e_c = worst(g_c, g_o)
        ok = abs(loss_c - loss_o) <= 1e-3 * abs(loss_o) and e_c <= 2e-2
        print(f"{'ok  ' if ok else 'FAIL'} torch.compile: loss {loss_c:.6f}, gradients vs eager "
              f"{e_c:.2e}", flush=True)  # fmt: skip
        bad += not ok
    # Forward + backward of attention captured in a CUDA graph, replayed on
    # new inputs, against eager: dK and dV bit for bit, dQ to rounding (its
    # blocks are added by many CTAs in whatever order they finish).
    from nvwgmma.kernel.attention import attention

    q, k, v, do = (torch.randn(2, 1000, 8, 128, device="cuda", dtype=torch.bfloat16)
                   for _ in range(4))  # fmt: skip
    q, k, v = (t.requires_grad_(True) for t in (q, k, v))

    def grads():
        return torch.autograd.grad(attention(q, k, v, causal=True), (q, k, v), do)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        grads()  # warm up on the capture's stream
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = grads()
    with torch.no_grad():
        q.copy_(torch.randn_like(q))
        do.copy_(torch.randn_like(do))
    graph.replay()
    torch.cuda.synchronize()
    eager = grads()
    dq_error = ((captured[0] - eager[0]).abs().max() / eager[0].abs().max()).item()
    ok = all(torch.equal(a, b) for a, b in zip(captured[1:], eager[1:])) and dq_error < 1e-2
    print(f"{'ok  ' if ok else 'FAIL'} CUDA graph: forward + backward replayed on new q and dO: "
          f"dK, dV equal to eager bit for bit, dQ within {dq_error:.1e}", flush=True)  # fmt: skip
    bad += not ok
    bad += second_gpu()
    print(f"{bad} failing", flush=True)
    return bad


def second_gpu():
    """With two GPUs: the gradients of tensors on cuda:1, cuda:0 current,
    equal to the same call's on cuda:0 (dK and dV bit for bit, dQ to its
    reduction order); the current device unchanged."""
    import torch
    from nvwgmma.kernel.attention import attention

    if torch.cuda.device_count() < 2:
        print("skip second GPU: one GPU", flush=True)
        return 0
    torch.cuda.set_device(0)
    results = []
    for device in ("cuda:0", "cuda:1"):
        g = torch.Generator(device=device).manual_seed(5)
        q, do = (torch.randn(2, 777, 8, 128, device=device, dtype=torch.bfloat16, generator=g)
                 for _ in range(2))  # fmt: skip
        k, v = (torch.randn(2, 777, 2, 128, device=device, dtype=torch.bfloat16, generator=g)
                for _ in range(2))  # fmt: skip
        q, k, v = (t.requires_grad_(True) for t in (q, k, v))
        grads = torch.autograd.grad(attention(q, k, v, causal=True), (q, k, v), do)
        torch.cuda.synchronize(device)
        results.append([x.to("cuda:0") for x in grads] + [grads[0].device])
    (dq0, dk0, dv0, _), (dq1, dk1, dv1, where) = results
    dq_error = ((dq1 - dq0).abs().max() / dq0.abs().max()).item()
    ok = (where == torch.device("cuda:1") and torch.cuda.current_device() == 0
          and torch.equal(dk0, dk1) and torch.equal(dv0, dv1) and dq_error < 1e-2)  # fmt: skip
    print(f"{'ok  ' if ok else 'FAIL'} second GPU: gradients on cuda:1 (cuda:0 current) equal "
          f"cuda:0's, dQ within {dq_error:.1e}", flush=True)  # fmt: skip
    return not ok


if __name__ == "__main__":
    sys.exit(1 if main() else 0)
