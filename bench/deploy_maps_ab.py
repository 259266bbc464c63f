"""A/B: tensor maps by value (kernel params) vs by pointer (device memory), same kernel body."""

import json, os, sys, statistics

MODE, DIR = sys.argv[1], sys.argv[2]
SHAPES = [
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (16, 8192, 8192),
    (128, 4096, 14336),
    (2048, 3072, 4096),
]
if MODE == "generate":
    from nvwgmma.kernel.gemm import kernel as K
    from nvwgmma.kernel.gemm.launch import Problem, problem_config
    from nvwgmma.kernel import cache
    from dataclasses import asdict

    os.makedirs(DIR, exist_ok=True)
    from nvwgmma.kernel.gemm.launch import write_kernel

    for m, n, k in SHAPES:
        c = problem_config(Problem.of(m, n, k, 1, "bf16", "bf16", "K", "K"))
        write_kernel(DIR, c)
        for variant in ("value", "pointer"):
            sig = K.KERNEL_SIGNATURE
            if variant == "pointer":
                K.KERNEL_SIGNATURE = tuple(
                    (nm, "!llvm.ptr" if nm.startswith("tm") else t) for nm, t in sig
                )
            cache.write(DIR, f"{variant}-{m}-{n}-{k}", lambda: K.build_gemm(c))
            K.KERNEL_SIGNATURE = sig
    sys.exit(0)
sys.path.insert(0, "python")
import torch
from nvwgmma.kernel import runtime
from nvwgmma.kernel.gemm import launch
from nvwgmma.kernel.gemm.launch import matmul

os.environ["NVWGMMA_PTX_DIR"] = DIR
rows = []
for m, n, k in SHAPES:
    x = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    w = torch.randn(n, k, device="cuda").to(torch.bfloat16)
    new, out = launch.prepare(x, w.T)
    ref = x.float() @ w.float().T
    kernels = {}
    for variant in ("value", "pointer"):
        meta = json.load(open(f"{DIR}/{variant}-{m}-{n}-{k}.json"))
        kern = runtime.Kernel(
            open(f"{DIR}/{variant}-{m}-{n}-{k}.ptx").read(),
            meta["kernel"],
            dynamic_smem=meta["dynamic_smem"],
        )
        args = []
        for (name, t), v in zip(meta["signature"], new.values):
            if name.startswith("tm"):
                args.append(
                    ("map", v.value)
                    if variant == "value"
                    else ("u64", runtime._MapPool().address(v.value))
                )
            else:
                kind = {"i32": "i32", "f32": "f32", "i64": "i64"}.get(t, "u64")
                args.append((kind, v.value))
        kernels[variant] = kern.launcher(
            grid=new._args[1:4],
            block=new._args[4:7],
            args=args,
            stream=torch.cuda.current_stream().cuda_stream,
        )
    errs = {}
    for variant, l in kernels.items():
        out.zero_()
        l()
        torch.cuda.synchronize()
        errs[variant] = float((out.float() - ref).norm() / ref.norm())

    def timed(f, reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        [f() for _ in range(reps)]
        e.record()
        e.synchronize()
        return s.elapsed_time(e) / reps

    reps = max(5, int(2e-3 / max(1e-6, 2 * m * n * k / 7e14))) if m > 16 else 200
    for f in list(kernels.values()) + [lambda: x @ w.T]:
        timed(f, reps)
    t = {"value": [], "pointer": [], "torch": []}
    for r in range(9):
        for name, f in (
            ("value", kernels["value"]),
            ("pointer", kernels["pointer"]),
            ("torch", lambda: x @ w.T),
        ):
            t[name].append(timed(f, reps))
    med = {nm: statistics.median(v) for nm, v in t.items()}
    row = dict(
        shape=(m, n, k),
        err=errs,
        ms=med,
        pointer_over_value=statistics.median([p / v for p, v in zip(t["pointer"], t["value"])]),
        torch_over_value=statistics.median([p / v for p, v in zip(t["torch"], t["value"])]),
    )
    print(row, flush=True)
    rows.append(row)
json.dump(rows, open(os.path.join(os.environ.get("OUT", "."), "ab-maps.json"), "w"), indent=1)
