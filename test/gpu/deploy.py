"""matmul and attention where models run, on every GPU of one host: any
device whatever is current, CUDA graphs (torch's and cupy's), torch.compile
(fullgraph, reduce-overhead) and torch.export. Exits non-zero on any wrong
result.

    # here (nvwgmma built): the PTX of every kernel the checks launch
    python test/gpu/deploy.py generate .device/deploy
    # on the GPU machine (torch, cupy, cuda-python; no nvwgmma build)
    python test/gpu/deploy.py run .device/deploy [--out DIR]

Checks, in this order (a fresh process: the first call is on the last
device while device 0 is current):
1. devices: every matmul / attention case on each device alone (its
   relative error against float64 / float32 references), then 100 calls
   alternating devices with device 0 current, torch and cupy: every result
   bit-identical to the same call on its device alone.
2. graphs: every matmul scheduler and attention variant captured with
   torch.cuda.graph -- first call inside the capture, and after an eager
   warm-up -- replayed twice on new input contents; cupy's stream capture;
   replay against eager time for a decode-sized call (M = 16, 8192 x 8192).
3. torch: a transformer block calling both ops, under
   torch.compile(fullgraph=True), mode="reduce-overhead", and torch.export:
   outputs against eager and a torch reference, and times against eager.
4. chains: three dependent 8192 x 8192 matmuls back to back on one
   stream (programmatic dependent launches: each may start while the one
   before drains), the third writing the buffer the second reads, at 16,
   64 and 300 tokens, on each device, eagerly and replayed from a graph.
5. blockwise: blockwise_mm's split-K pick on each device, alternating
   devices, in a CUDA graph and under torch.compile (`--blockwise-only`:
   these alone).
6. grouped: grouped_mm on a skewed routing on each device, alternating
   devices, in a CUDA graph replayed after the routing changed (the
   capture's tile differs from the eager call's), the masked layout in a
   graph, scaled_grouped_mm, torch.compile (deploy_grouped.py).
Writes deploy-results.json (GPU, driver, torch, every figure).
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
sys.path.insert(0, HERE)

import deploy_grouped  # noqa: E402

# name: (M, N, K, config fields or None for the default), bf16 x @ w.T
GEMMS = {
    "data_parallel": (2048, 4096, 4096, None),
    "split_k": (128, 4096, 14336, dict(tile_n=128, stages=6, scheduler="split_k", splits=4)),
    "stream_k": (512, 4096, 4096, dict(scheduler="stream_k")),
    "decode": (16, 8192, 8192, None),  # rule 0: 64 weight rows x 16 tokens
    "decode_split": (16, 5120, 4096, None),  # rule 0: 128 weight rows x 16 tokens, split K
    "decode_wide": (64, 28672, 8192, None),  # rule 0's second case: transposed 128 x 64
    "decode_ragged": (77, 5120, 3072, None),  # rule 0's third case: transposed 64 x 80
    "ragged_transposed": (300, 8192, 4096, None),  # rule 3c: transposed 128 x 160
    "ragged_wide_transposed": (777, 5120, 4096, None),  # rule 3d: transposed 256 x 144
    "decode_waves": (16, 38016, 4096, None),  # rule 0's last wave: 64 weight rows, 594 units
    "ragged": (777, 1000, 520, None),
}
CUPY_GEMM = (1000, 1024, 512)  # f16 in, f16 out
CHAIN_TOKENS = (16, 64, 300)  # three dependent CHAIN_WIDTH-square matmuls
CHAIN_WIDTH = 8192
# blockwise_mm at few tokens: its pick splits K (partials in a workspace)
BLOCKWISE = {
    "split": (128, 4096, 7168),
    "overlapped": (1024, 4096, 7168),
}  # 128 x 128 promoting beside the next K tile
# name: (batch, Sq, Hq, Hkv, D, dtype, causal, varlen, dynamic)
ATTENTIONS = {
    "dense_causal": (2, 512, 8, 2, 128, "bf16", True, False, False),
    "dense_d64": (2, 384, 4, 4, 64, "f16", False, False, False),
    "varlen": (2, 0, 8, 2, 128, "bf16", True, True, False),
    "fp8": (1, 512, 4, 4, 128, "e4m3", False, False, False),
    "dynamic": (1, 1024, 4, 4, 128, "bf16", True, False, True),
}
CU_SEQLENS = [0, 300, 700]
# The compiled block (examples/block.py) and its input: batch x seq tokens
BLOCK = dict(width=2048, heads=16, kv_heads=4, head_dim=128, ffn=5632)
BATCH, SEQ = 2, 512


def _gemm_config(fields):
    from nvwgmma.kernel.gemm import GemmConfig

    return None if fields is None else GemmConfig(**fields)


def _attention_config(case):
    from nvwgmma.kernel.attention.config import default_config

    _, sq, _, _, d, dtype, causal, varlen, dynamic = case
    config = default_config(d, dtype=dtype, causal=causal, varlen=varlen,
                            seq=max(CU_SEQLENS[i + 1] - CU_SEQLENS[i] for i in range(2))
                            if varlen else sq)  # fmt: skip
    if dtype == "e4m3":
        config = config.replace(v_permuted=True)  # v given head-dim contiguous: copied
    return config.replace(dynamic=True) if dynamic else config


def generate(out_dir: str) -> None:
    from nvwgmma.kernel.attention import launch as attention_launch
    from nvwgmma.kernel.attention import vcopy
    from nvwgmma.kernel.gemm.launch import Problem, fusion_chain, problem_config, write_kernel

    configs = []
    for m, n, k, fields in GEMMS.values():
        config = _gemm_config(fields)
        configs.append(config or problem_config(Problem.of(m, n, k, 1, "bf16", "bf16", "K", "K")))
    for m in CHAIN_TOKENS:
        problem = Problem.of(m, CHAIN_WIDTH, CHAIN_WIDTH, 1, "bf16", "bf16", "K", "K")
        configs.append(problem_config(problem))
    m, n, k = CUPY_GEMM
    configs.append(problem_config(Problem.of(m, n, k, 1, "f16", "f16", "K", "K")))
    configs.append(_gemm_config(dict(GEMMS["split_k"][3], dtype="f16", out_dtype="f16")))
    from block import Shape, problems

    attention_shapes = [(1, 256, 0, 0, 64, "f16", False, False, False)]  # cupy's
    for m, n, k, activation in problems(Shape(**BLOCK), BATCH * SEQ):
        chain = fusion_chain(activation=activation)
        configs.append(problem_config(Problem.of(m, n, k, 1, "bf16", "bf16", "K", "K", chain)))
    from nvwgmma.kernel.gemm.blockwise import blockwise_config

    configs += [blockwise_config(*shape) for shape in BLOCKWISE.values()]
    for config in dict.fromkeys(configs):
        print(write_kernel(out_dir, config))
    attention = [_attention_config(c) for c in [*ATTENTIONS.values(), *attention_shapes]]
    attention.append(_attention_config((BATCH, SEQ, 0, 0, BLOCK["head_dim"], "bf16", True,
                                        False, False)))  # fmt: skip
    for config in dict.fromkeys(attention):
        print(attention_launch.write_kernel(out_dir, config))
    for config in vcopy.CONFIGS:
        print(vcopy.write(out_dir, config))
    deploy_grouped.generate(out_dir)


# ---------------------------------------------------------------------------- on the GPU
def _info():
    import torch

    query = "index,name,driver_version,clocks.sm,clocks.max.sm,power.limit"
    smi = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()  # fmt: skip
    return {
        "gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())],
        "nvidia_smi": smi.splitlines(),
        "torch": torch.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def _rel(x, ref) -> float:
    import torch

    x, ref = x.double(), ref.double()
    return float(torch.linalg.norm(x - ref) / torch.linalg.norm(ref))


class Checks:
    """Counts failures; prints and keeps one row per check."""

    def __init__(self):
        self.rows, self.failed = [], 0

    def __call__(self, what: str, ok: bool, **figures):
        self.failed += not ok
        self.rows.append({"check": what, "ok": bool(ok), **figures})
        shown = " ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                         for k, v in figures.items())  # fmt: skip
        print(f"{'ok ' if ok else 'BAD'} {what} {shown}", flush=True)


class GemmCase:
    """One matmul case on one device: inputs, the float64 reference of
    their current contents, and the call."""

    def __init__(self, name, device, seed=0):
        import torch

        self.name, self.device = name, device
        m, n, k, fields = GEMMS[name]
        self.config = _gemm_config(fields)
        g = torch.Generator(device="cpu").manual_seed(seed)
        self.x = torch.randn(m, k, generator=g).to(torch.bfloat16).to(f"cuda:{device}")
        self.w = torch.randn(n, k, generator=g).to(torch.bfloat16).to(f"cuda:{device}")

    def refill(self, seed):
        import torch

        g = torch.Generator(device="cpu").manual_seed(seed)
        self.x.copy_(torch.randn(self.x.shape, generator=g))
        self.w.copy_(torch.randn(self.w.shape, generator=g))

    def reference(self):
        return self.x.double() @ self.w.double().T

    def __call__(self):
        from nvwgmma.kernel.gemm import matmul

        return matmul(self.x, self.w.T, config=self.config)


class AttentionCase:
    """One attention case on one device (inputs, float32 SDPA reference)."""

    def __init__(self, name, device, seed=0):
        import torch

        self.name, self.device = name, device
        case = ATTENTIONS[name]
        b, sq, hq, hkv, d, dtype, causal, varlen, dynamic = case
        self.causal, self.varlen, self.fp8 = causal, varlen, dtype == "e4m3"
        self.config = _attention_config(case) if dynamic else None
        on = f"cuda:{device}"
        tokens = CU_SEQLENS[-1]
        shape_q = (tokens, hq, d) if varlen else (b, sq, hq, d)
        shape_k = (tokens, hkv, d) if varlen else (b, sq, hkv, d)
        self.dtype = {"bf16": torch.bfloat16, "f16": torch.float16,
                      "e4m3": torch.float8_e4m3fn}[dtype]  # fmt: skip
        self.q = torch.empty(shape_q, device=on, dtype=self.dtype)
        self.k = torch.empty(shape_k, device=on, dtype=self.dtype)
        self.v = torch.empty(shape_k, device=on, dtype=self.dtype)
        self.cu = torch.tensor(CU_SEQLENS, dtype=torch.int32, device=on)
        self.refill(seed)

    def refill(self, seed):
        import torch

        g = torch.Generator(device="cpu").manual_seed(seed)
        for t in (self.q, self.k, self.v):
            t.copy_(torch.randn(t.shape, generator=g))

    def kwargs(self):
        if not self.varlen:
            return dict(causal=self.causal, config=self.config)
        longest = max(b - a for a, b in zip(CU_SEQLENS, CU_SEQLENS[1:]))
        return dict(causal=self.causal, config=self.config, cu_seqlens_q=self.cu,
                    cu_seqlens_k=self.cu, max_seqlen_q=longest, max_seqlen_k=longest)  # fmt: skip

    def reference(self):
        import torch
        import torch.nn.functional as F

        def dense(q, k, v):  # (b, s, h, d) in float32
            group = q.shape[2] // k.shape[2]
            k, v = (t.repeat_interleave(group, dim=2) for t in (k, v))
            o = F.scaled_dot_product_attention(*(t.float().transpose(1, 2) for t in (q, k, v)),
                                               is_causal=self.causal)  # fmt: skip
            return o.transpose(1, 2)

        if not self.varlen:
            return dense(self.q, self.k, self.v)
        parts = []
        for a, b in zip(CU_SEQLENS, CU_SEQLENS[1:]):
            parts.append(dense(*(t[a:b].unsqueeze(0) for t in (self.q, self.k, self.v)))[0])
        return torch.cat(parts)

    def __call__(self):
        from nvwgmma.kernel.attention import attention

        return attention(self.q, self.k, self.v, **self.kwargs())


def check_devices(check, ndev):
    import cupy
    import torch

    torch.cuda.set_device(0)
    alone = {}
    # The first call of the process: operands on the last device, device 0 current.
    for device in reversed(range(ndev)):
        for name in GEMMS:
            case = GemmCase(name, device)
            y = case()
            torch.cuda.synchronize(device)
            alone[("gemm", name, device)] = (case, y.clone())
            err = _rel(y, case.reference())
            check(f"devices: matmul {name} on cuda:{device} (cuda:0 current)",
                  y.device.index == device and err < 1e-2, rel_err=err)  # fmt: skip
        for name in ATTENTIONS:
            case = AttentionCase(name, device)
            o = case()
            torch.cuda.synchronize(device)
            alone[("attention", name, device)] = (case, o.clone())
            err = _rel(o.float(), case.reference())
            check(f"devices: attention {name} on cuda:{device} (cuda:0 current)",
                  o.device.index == device and err < (6e-2 if case.fp8 else 1e-2), rel_err=err)  # fmt: skip
    mismatches = {"gemm": 0, "attention": 0}
    calls = 0
    keys = sorted(alone)
    for i in range(100):
        kind, name, _ = keys[i % len(keys)]
        device = i % ndev
        case, expected = alone[(kind, name, device)]
        got = case()
        calls += 1
        mismatches[kind] += not torch.equal(got, expected)
    for device in range(ndev):
        torch.cuda.synchronize(device)
    check("devices: 100 torch calls alternating devices, cuda:0 current, bit-identical to alone",
          sum(mismatches.values()) == 0, calls=calls, devices=ndev, **mismatches)  # fmt: skip
    check("devices: current device unchanged", torch.cuda.current_device() == 0,
          current=torch.cuda.current_device())  # fmt: skip
    # cupy: arrays made on each device, called from device 0's context
    from nvwgmma.kernel.gemm import matmul

    m, n, k = CUPY_GEMM
    arrays = {}
    for device in reversed(range(ndev)):
        with cupy.cuda.Device(device):
            rng = cupy.random.default_rng(device)
            a = rng.standard_normal((m, k), dtype=cupy.float32).astype(cupy.float16)
            w = rng.standard_normal((n, k), dtype=cupy.float32).astype(cupy.float16)
            ref = a.astype(cupy.float64) @ w.astype(cupy.float64).T
        c = matmul(a, w.T)
        with cupy.cuda.Device(device):
            cupy.cuda.Device(device).synchronize()
            err = float(cupy.linalg.norm(c.astype(cupy.float64) - ref) / cupy.linalg.norm(ref))
            arrays[device] = (a, w, c.copy())
        check(f"devices: cupy matmul on device {device} (device 0 current)",
              c.device.id == device and err < 1e-2, rel_err=err)  # fmt: skip
    bad = 0
    for i in range(100):
        a, w, expected = arrays[i % ndev]
        c = matmul(a, w.T)
        with cupy.cuda.Device(i % ndev):
            bad += not bool((c == expected).all())
    check("devices: 100 cupy calls alternating devices, bit-identical", bad == 0, mismatches=bad)
    _cupy_attention(check, ndev)
    for device in range(ndev):
        torch.cuda.synchronize(device)
    return alone


def _cupy_attention(check, ndev, shape=(1, 256, 4, 64)):
    """attention on cupy f16 arrays of each device (device 0 current)
    against a float32 softmax, then 100 calls alternating devices."""
    import cupy
    from nvwgmma.kernel.attention import attention

    made = {}
    for device in reversed(range(ndev)):
        with cupy.cuda.Device(device):
            rng = cupy.random.default_rng(device)
            q, k, v = (rng.standard_normal(shape, dtype=cupy.float32).astype(cupy.float16)
                       for _ in range(3))  # fmt: skip
            scores = cupy.einsum("bqhd,bkhd->bhqk", q.astype(cupy.float32),
                                 k.astype(cupy.float32)) / shape[-1] ** 0.5  # fmt: skip
            p = cupy.exp(scores - scores.max(axis=-1, keepdims=True))
            ref = cupy.einsum("bhqk,bkhd->bqhd", p / p.sum(axis=-1, keepdims=True),
                              v.astype(cupy.float32))  # fmt: skip
        o = attention(q, k, v)
        with cupy.cuda.Device(device):
            cupy.cuda.Device(device).synchronize()
            err = float(cupy.linalg.norm(o.astype(cupy.float32) - ref) / cupy.linalg.norm(ref))
            made[device] = (q, k, v, o.copy())
        check(f"devices: cupy attention on device {device} (device 0 current)",
              o.device.id == device and err < 1e-2, rel_err=err)  # fmt: skip
    bad = 0
    for i in range(100):
        q, k, v, expected = made[i % ndev]
        o = attention(q, k, v)
        with cupy.cuda.Device(i % ndev):
            bad += not bool((o == expected).all())
    check("devices: 100 cupy attention calls alternating devices, bit-identical", bad == 0,
          mismatches=bad)  # fmt: skip


def _graph_case(check, case, label, warm):
    """Capture `case()` (after an eager warm-up on a side stream if
    `warm`), replay on two new input contents, compare with the reference
    and with an eager call of the same inputs."""
    import torch

    with torch.cuda.device(case.device):
        if warm:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                case()
            torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        try:
            # torch.cuda.graph's default capture stream belongs to the device
            # current when it was first made: name one on this device.
            with torch.cuda.graph(graph, stream=torch.cuda.Stream(case.device)):
                out = case()
        except Exception as error:  # a clear error is allowed, an invalidated capture is not
            check(f"graphs: {label} captured ({'warm' if warm else 'first call'})", False,
                  error=str(error)[:300])  # fmt: skip
            return None
        errors, same = [], True
        for seed in (11, 12):
            case.refill(seed)
            graph.replay()
            torch.cuda.synchronize()
            replayed = out.clone()
            errors.append(_rel(replayed.float(), case.reference()))
            same &= torch.equal(replayed, case())
        tolerance = 6e-2 if getattr(case, "fp8", False) else 1e-2
        check(f"graphs: {label} ({'warm' if warm else 'first call in capture'}) replays correct",
              max(errors) < tolerance and same, rel_err=max(errors), equals_eager=same)  # fmt: skip
        return graph


def check_graphs(check, ndev):
    import cupy
    from nvwgmma.kernel.gemm import matmul

    device = ndev - 1  # a device other than the current one, where there are two
    for warm in (False, True):
        for name in GEMMS:
            _graph_case(check, GemmCase(name, device, seed=5), f"matmul {name} cuda:{device}", warm)
        for name in ATTENTIONS:
            _graph_case(check, AttentionCase(name, device, seed=5),
                        f"attention {name} cuda:{device}", warm)  # fmt: skip
    # cupy's stream capture, data-parallel and split-K
    split_k = dict(GEMMS["split_k"][3], dtype="f16", out_dtype="f16")
    for label, config in (("data-parallel", None), ("split_k", _gemm_config(split_k))):
        m, n, k = (128, 4096, 14336) if config else CUPY_GEMM
        rng = cupy.random.default_rng(3)
        a = rng.standard_normal((m, k), dtype=cupy.float32).astype(cupy.float16)
        w = rng.standard_normal((n, k), dtype=cupy.float32).astype(cupy.float16)
        stream = cupy.cuda.Stream(non_blocking=True)
        try:
            with stream:
                stream.begin_capture()
                try:
                    c = matmul(a, w.T, config=config)
                finally:
                    graph = stream.end_capture()
        except Exception as error:
            check(f"graphs: cupy capture {label}", False, error=str(error)[:300])
            continue
        errors = []
        for seed in (21, 22):
            rng = cupy.random.default_rng(seed)
            a[...] = rng.standard_normal((m, k), dtype=cupy.float32).astype(cupy.float16)
            cupy.cuda.Device().synchronize()  # the refill ran on the legacy stream
            graph.launch(stream)
            stream.synchronize()
            ref = a.astype(cupy.float64) @ w.astype(cupy.float64).T
            errors.append(float(cupy.linalg.norm(c.astype(cupy.float64) - ref)
                                / cupy.linalg.norm(ref)))  # fmt: skip
        check(f"graphs: cupy capture {label} replays correct", max(errors) < 1e-2,
              rel_err=max(errors))  # fmt: skip
    return _replay_time(check)


def _replay_time(check, calls=50, rounds=7):
    """Per-call time of `calls` decode-sized matmuls (M = 16, 8192 x 8192)
    issued eagerly against one graph replaying them; paired rounds."""
    import torch

    case = GemmCase("decode", 0, seed=9)
    for _ in range(3):
        case()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=torch.cuda.Stream(0)):
        for _ in range(calls):
            case()
    graph.replay()

    def eager():
        for _ in range(calls):
            case()

    times = {"eager": [], "graph": []}
    for _ in range(rounds):
        for name, run in (("eager", eager), ("graph", graph.replay)):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            run()
            start.record()
            for _ in range(4):
                run()
            end.record()
            end.synchronize()
            times[name].append(start.elapsed_time(end) * 1e3 / (4 * calls))
    eager_us, graph_us = statistics.median(times["eager"]), statistics.median(times["graph"])
    check("graphs: decode matmul M=16 8192x8192, us per call", True, eager_us=eager_us,
          graph_us=graph_us, eager_over_graph=eager_us / graph_us)  # fmt: skip


def _time_ms(f, x, rounds=20):
    import torch

    for _ in range(3):
        f(x)
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        f(x)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def check_torch(check):
    import torch
    from block import Block, Shape, weights

    torch.cuda.set_device(0)
    shape = Shape(**BLOCK)
    local = weights(shape, "cuda:0")
    ours, theirs = Block(shape, local, kernels="nvwgmma"), Block(shape, local, kernels="torch")
    g = torch.Generator(device="cpu").manual_seed(1)
    x = torch.randn(BATCH, SEQ, shape.width, generator=g).to(torch.bfloat16).cuda()
    with torch.no_grad():
        eager = ours(x)
        reference = Block(shape, [w.float() for w in local], kernels="torch")(x.float())
        base = _rel(eager.float(), reference)
        check("torch: eager block against a float32 reference", base < 2e-2, rel_err=base,
              torch_rel_err=_rel(theirs(x).float(), reference))  # fmt: skip
        variants = {
            "compile(fullgraph=True)": torch.compile(ours, fullgraph=True),
            "compile(fullgraph=True, mode='reduce-overhead')": torch.compile(
                ours, fullgraph=True, mode="reduce-overhead"),
        }  # fmt: skip
        times = {"eager": _time_ms(ours, x), "torch eager": _time_ms(theirs, x)}
        for label, compiled in variants.items():
            try:
                for _ in range(3):
                    got = compiled(x)
                got = compiled(x).clone()
                err = _rel(got.float(), reference)
                vs_eager = _rel(got.float(), eager.float())
                times[label] = _time_ms(compiled, x)
                check(f"torch: {label} block correct", err < 2e-2 and vs_eager < 1e-2,
                      rel_err=err, vs_eager=vs_eager, ms=times[label],
                      eager_ms=times["eager"])  # fmt: skip
            except Exception as error:
                check(
                    f"torch: {label} block", False, error=f"{type(error).__name__}: {error}"[:400]
                )
        try:
            exported = torch.export.export(ours, (x,))
            got = exported.module()(x)
            targets = {str(n.target) for n in exported.graph.nodes}
            has_ops = {"nvwgmma.matmul.default", "nvwgmma.attention.default"} <= targets
            check("torch: torch.export of the block runs, holds both ops",
                  has_ops and _rel(got.float(), eager.float()) < 1e-2,
                  vs_eager=_rel(got.float(), eager.float()))  # fmt: skip
        except Exception as error:
            check("torch: torch.export", False, error=f"{type(error).__name__}: {error}"[:400])
        torch.compiler.reset()
        theirs_compiled = torch.compile(theirs, fullgraph=True, mode="reduce-overhead")
        try:
            times["torch compile reduce-overhead"] = _time_ms(theirs_compiled, x)
        except Exception as error:
            print("torch's own compiled block failed:", error)
        check("torch: block times (ms)", True, **{k.replace(" ", "_"): v for k, v in times.items()})


def check_blockwise(check, ndev):
    """blockwise_mm's picks (BLOCKWISE: the split-K one and the overlapped
    promotion): on each device alone (device 0 current) against the
    dequantised product, 20 calls alternating devices bit-identical to
    those, a CUDA graph captured on its first call and replayed on new
    activations, and torch.compile(fullgraph=True) of a function calling
    it (the custom op)."""
    for shape in BLOCKWISE.values():
        _check_blockwise_shape(check, ndev, *shape)


def _check_blockwise_shape(check, ndev, m, n, k):
    import torch

    sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "gemm"))
    from blockwise import _dequantised, _quantise, replayed_errors
    from nvwgmma.kernel.gemm.blockwise import blockwise_config, blockwise_mm

    config = blockwise_config(m, n, k)
    torch.cuda.set_device(0)
    cases = {}
    for device in reversed(range(ndev)):
        g = torch.Generator(device=f"cuda:{device}").manual_seed(device)
        w8, sw = _quantise(torch.randn(n, k, device=f"cuda:{device}", generator=g) * 0.05, 128, 128)
        x8, sx = _quantise(torch.randn(m, k, device=f"cuda:{device}", generator=g), 1, 128)
        y = blockwise_mm(x8, w8.T, sx, sw)
        torch.cuda.synchronize(device)
        ref = _dequantised(x8, sx, 1, 128) @ _dequantised(w8, sw, 128, 128).T
        err = _rel(y.float(), ref)
        cases[device] = (x8, w8, sx, sw, y.clone())
        check(f"blockwise: {config.name} on cuda:{device} (cuda:0 current)",
              y.device.index == device and err < 1e-2, rel_err=err)  # fmt: skip
    bad = 0
    for i in range(20):
        x8, w8, sx, sw, expected = cases[i % ndev]
        bad += not torch.equal(blockwise_mm(x8, w8.T, sx, sw), expected)
    check(
        f"blockwise: {config.name}, 20 calls alternating devices, bit-identical",
        bad == 0,
        mismatches=bad,
    )
    x8, w8, sx, sw, _ = cases[0]
    (err,) = replayed_errors(x8, sx, w8, sw, (11,))
    check(
        f"blockwise: {config.name}, graph (first call in capture) replays correct",
        err < 1e-2,
        rel_err=err,
    )
    eager = blockwise_mm(x8, w8.T, sx, sw)
    try:
        compiled = torch.compile(lambda a, s: blockwise_mm(a, w8.T, s, sw), fullgraph=True)
        got = compiled(x8, sx)
        torch.cuda.synchronize()
        check(f"blockwise: {config.name}, compile(fullgraph=True) bit-identical to eager",
              torch.equal(got, eager), vs_eager=_rel(got.float(), eager.float()))  # fmt: skip
    except Exception as error:
        check(f"blockwise: {config.name}, compile(fullgraph=True)", False,
              error=f"{type(error).__name__}: {error}"[:400])  # fmt: skip


def _chain(x, weights, buffers):
    """Three dependent matmuls; the last writes the buffer the one before
    it reads (a write a launch ahead of its wait would corrupt)."""
    from nvwgmma.kernel.gemm import matmul

    y1 = matmul(x, weights[0].T, out=buffers[0])
    y2 = matmul(y1, weights[1].T, out=buffers[1])
    return matmul(y2, weights[2].T, out=buffers[0])


def check_chains(check, ndev):
    import torch
    from nvwgmma.kernel import runtime

    bf16, width = torch.bfloat16, CHAIN_WIDTH
    for device in range(ndev):
        on = f"cuda:{device}"
        g = torch.Generator(device="cpu").manual_seed(device)
        weights = [(torch.randn(width, width, generator=g) / width**0.5).to(bf16).to(on)
                   for _ in range(3)]  # fmt: skip
        for m in CHAIN_TOKENS:
            sources = [torch.randn(m, width, generator=g).to(bf16).to(on) for _ in range(4)]
            references = []
            for source in sources:
                y = source.double()
                for w in weights:  # rounded to bf16 between steps, as the chain is
                    y = (y @ w.double().T).to(bf16).double()
                references.append(y)
            x = torch.empty(m, width, dtype=bf16, device=on)
            buffers = [torch.empty(m, width, dtype=bf16, device=on) for _ in range(2)]
            with torch.cuda.device(device):
                outs = []
                for source in sources:  # queued back to back, one stream
                    x.copy_(source)
                    outs.append(_chain(x, weights, buffers).clone())
                torch.cuda.synchronize()
                eager = max(_rel(o, r) for o, r in zip(outs, references))
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph, stream=torch.cuda.Stream(device)):
                    out = _chain(x, weights, buffers)
                replayed = []
                for source in sources:
                    x.copy_(source)
                    graph.replay()
                    replayed.append(_rel(out, references[len(replayed)]))
                torch.cuda.synchronize()
            check(f"chains: three dependent matmuls at M={m} on cuda:{device}, eager and graph",
                  eager < 2e-2 and max(replayed) < 2e-2, rel_err_eager=eager,
                  rel_err_graph=max(replayed), programmatic=runtime.programmatic_launches())  # fmt: skip


def _speed_sanity(check):
    """Our 4096^3 bf16 GEMM against torch.matmul (short paired rounds): the
    by-value tensor maps cost nothing."""
    import torch
    from nvwgmma.kernel.gemm import matmul

    x = torch.randn(4096, 4096, device="cuda:0").to(torch.bfloat16)
    w = torch.randn(4096, 4096, device="cuda:0").to(torch.bfloat16)
    ratios = []
    for _ in range(7):
        t_ours = _time_ms(lambda _: matmul(x, w.T), None, rounds=10)
        t_torch = _time_ms(lambda _: x @ w.T, None, rounds=10)
        ratios.append(t_torch / t_ours)
    check("speed: 4096^3 bf16, torch.matmul time / ours (short rounds)", True,
          ratio=statistics.median(ratios))  # fmt: skip


def run(ptx_dir: str, out_dir: str, blockwise_only: bool = False,
        chains_only: bool = False) -> int:  # fmt: skip
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    os.environ.setdefault("NVWGMMA_PTX_DIR", ptx_dir)
    os.environ.setdefault("NVWGMMA_CACHE_DIR", os.path.join(out_dir, "cache"))
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    ndev = torch.cuda.device_count()
    info = _info()
    print(info, flush=True)
    check = Checks()
    if chains_only:
        check_chains(check, ndev)
    elif not blockwise_only:
        check_devices(check, ndev)
        check_graphs(check, ndev)
        check_torch(check)
        check_chains(check, ndev)
        deploy_grouped.check_grouped(check, ndev, _rel)
        _speed_sanity(check)
    if not chains_only:
        check_blockwise(check, ndev)
    for device in range(ndev):
        torch.cuda.synchronize(device)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "deploy-results.json"), "w") as f:
        json.dump({"info": info, "rows": check.rows, "failed": check.failed}, f, indent=1)
    print(f"{len(check.rows) - check.failed} passed, {check.failed} failed")
    return 1 if check.failed else 0


def main(argv=None) -> int:
    from two_step import main as two_step

    flags = [("blockwise-only", "run: the blockwise_mm checks alone"),
             ("chains-only", "run: the dependent-chain checks alone")]  # fmt: skip
    return two_step(__doc__, generate, run, argv, flags=flags)


if __name__ == "__main__":
    sys.exit(main())
