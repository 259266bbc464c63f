"""attention's launch cache on the GPU: a call on new tensors of an
earlier call's layout (a model's next step: new activations) reuses its
packed launch re-pointed at them, and must equal, bit for bit, a launch
prepared for those tensors; a repeated call follows new contents. bf16,
and fp8 (e4m3) with V copied into Vᵀ (dense and varlen: the copy's source
re-pointed) or read as given (keys contiguous).

    # here (nvwgmma built): the PTX
    python test/gpu/attention_reuse.py generate .device/ptx
    # on the GPU (torch; no nvwgmma build)
    python test/gpu/attention_reuse.py
"""

import os
import sys

try:  # here: the installed package builds the PTX; on the GPU: the source's runtime
    import nvwgmma.ir  # noqa: F401
except ImportError:
    sys.path[:0] = ["python"]
os.environ.setdefault("NVWGMMA_PTX_DIR", ".device/ptx")

CU = [0, 300, 700, 1024]  # varlen: three sequences


def generate(directory):
    from nvwgmma.kernel.attention.launch import precompile

    precompile(directory)


def _inputs(case, seed):
    """(q, k, v, kwargs) of `case`, new tensors filled from `seed`."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    fp8 = case != "bf16"
    dtype = torch.float8_e4m3fn if fp8 else torch.bfloat16
    shape = (CU[-1], 8, 128) if case == "fp8 varlen" else (2, 512, 8, 128)

    def new(keys_contiguous=False):
        if keys_contiguous:  # stored (batch, heads, d, keys), viewed (batch, keys, heads, d)
            b, s, h, d = shape
            x = torch.randn(b, h, d, s, device="cuda", generator=g).to(dtype)
            return x.permute(0, 3, 1, 2)
        return torch.randn(shape, device="cuda", generator=g).to(dtype)

    q, k, v = new(), new(), new(case == "fp8 V keys-contiguous")
    kwargs = {"causal": True}
    if case == "fp8 varlen":
        cu = torch.tensor(CU, dtype=torch.int32, device="cuda")
        longest = max(b - a for a, b in zip(CU, CU[1:]))
        kwargs.update(cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=longest, max_seqlen_k=longest)
    return q, k, v, kwargs


def main():
    import torch
    from nvwgmma.kernel.attention import attention, launch

    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    bad = 0
    for case in ("bf16", "fp8 V copied", "fp8 varlen", "fp8 V keys-contiguous"):
        launch._recent.clear()
        q, k, v, kw = _inputs(case, 1)
        first = attention(q, k, v, **kw).clone()
        q2, k2, v2, kw2 = _inputs(case, 2)  # new tensors, the same layout
        moved = attention(q2, k2, v2, **kw2).clone()
        hits = len(launch._recent)
        launch._recent.clear()
        own = attention(q2, k2, v2, **kw2).clone()  # prepared for them
        v.copy_(v2)  # the first tensors, V's contents changed in place
        q.copy_(q2)
        k.copy_(k2)
        again = attention(q, k, v, **kw)
        rebound = torch.equal(moved, own)
        follows = torch.equal(again, own) and not torch.equal(first, own)
        ok = rebound and follows and hits == 1
        print(f"{'ok  ' if ok else 'FAIL'} {case}: new tensors of one layout == prepared for "
              f"them {rebound} (one launch kept: {hits == 1}), a repeated call follows new "
              f"contents {follows}", flush=True)  # fmt: skip
        bad += not ok
    print(f"{bad} failing", flush=True)
    return bad


if __name__ == "__main__":
    if sys.argv[1:2] == ["generate"]:
        generate(sys.argv[2])
    else:
        sys.exit(1 if main() else 0)
