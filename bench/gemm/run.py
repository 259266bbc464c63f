"""nvwgmma's GEMM against cuBLAS (torch.matmul, cupy's gemmEx) and Triton,
in one process, on the same inputs, on a Hopper GPU.

    # here: the PTX and launch metadata of the configurations to measure
    python bench/gemm/run.py generate .device/gemm
    # on the GPU (numpy, cupy, torch, triton, cuda-python; no nvwgmma build)
    python bench/gemm/run.py run .device/gemm [--shapes 4096,4096,4096 ...]

For every shape: correctness of every output (ours and the baselines)
against a float64 numpy reference on sampled rows, plus ours against
torch.matmul in full; then warm-up and the median of >= 20 timed runs with
CUDA events per implementation. Prints a table (TFLOP/s, ratio to
torch.matmul, rounds won) and writes results.json with the GPU, clocks, driver and date.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024), (4096, 14336, 4096)]
TIMED_RUNS = 20


def generate(out_dir: str) -> None:
    from nvwgmma.kernel.gemm import ABLATIONS, SHIPPED
    from nvwgmma.kernel.gemm.launch import write_kernel

    os.makedirs(out_dir, exist_ok=True)
    index = []
    jobs = [(None, c) for c in SHIPPED] + list(ABLATIONS.items())
    for ablation, config in jobs:
        stem = write_kernel(out_dir, config)[: -len(".ptx")]
        with open(stem + ".json") as f:
            meta = json.load(f)
        meta["ablation"] = ablation
        index.append(meta)
        print(meta["name"], ablation or "")
    with open(os.path.join(out_dir, "configs.json"), "w") as f:
        json.dump(index, f, indent=1)


# ----------------------------------------------------------------------------
# On the GPU


def _gpu_info():
    import torch

    query = "name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit"
    smi = subprocess.run(
        ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return {
        "gpu": torch.cuda.get_device_name(0),
        "nvidia_smi": smi,
        "sms": torch.cuda.get_device_properties(0).multi_processor_count,
        "torch": torch.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def mode_parser(doc: str) -> argparse.ArgumentParser:
    """The parser a bench/gemm script starts from, titled by its docstring
    `doc`: `generate DIR` here (nvwgmma built), `run DIR` on the GPU."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("mode", choices=["generate", "run"])
    parser.add_argument("dir")
    return parser


def failures(failed: int) -> int:
    """Print how many checks failed; the exit status (1 if any did)."""
    print("failed:", failed)
    return 1 if failed else 0


class watchdog:
    """`with watchdog(what, seconds):` -- a kernel that never completes
    blocks the synchronise after it for good; past `seconds` this prints
    "hung: <what>" and ends the process with status 3, so a run names
    the kernel instead of stalling until its time limit."""

    def __init__(self, what: str, seconds: float = 60.0):
        self.what, self.seconds = what, seconds

    def _fire(self):
        print(f"hung: {self.what} (over {self.seconds:g} s)", flush=True)
        os._exit(3)

    def __enter__(self):
        import threading

        self.timer = threading.Timer(self.seconds, self._fire)
        self.timer.daemon = True
        self.timer.start()
        return self

    def __exit__(self, *exc):
        self.timer.cancel()
        return False


# One stamp per process: a script that rewrites its results as it goes
# replaces one file.
_STAMP = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d-%H%M")


def write_results(out_dir: str, name: str, results: dict) -> str:
    """Write `results` as JSON; returns the path. On the device tool's
    machine, to `name` in $OUT (what it brings back); elsewhere to the
    repository's results folder, bench/results/<gpu>/<date>-<time>-<what>.json
    (bench/results/README.md), the GPU taken from results["info"]; `out_dir`
    when neither applies."""
    if os.environ.get("OUT"):
        path = os.path.join(os.environ["OUT"], name)
    else:
        gpu = str(results.get("info", {}).get("gpu", "")).lower()
        slug = next((g for g in ("gh200", "h200", "h100", "h800", "h20") if g in gpu), None)
        what = name.removesuffix(".json").removesuffix("-results")
        folder = os.path.join(ROOT, "bench", "results", slug) if slug else out_dir
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{_STAMP}-{what}.json" if slug else name)
    with open(path, "w") as f:
        json.dump(results, f, indent=1)
    return path


def _once(fn) -> float:
    """Milliseconds of one fn() (at least 1 µs), to size the loops."""
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return max(start.elapsed_time(end), 1e-3)


def timed(f, reps: int) -> float:
    """Milliseconds per call of `reps` back-to-back calls of f(), timed
    with CUDA events around the whole batch."""
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        f()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / reps


def _time(fn, warm_ms: float = 150.0, batch_ms: float = 40.0, batches: int = 5) -> float:
    """Milliseconds per call of fn() at steady state: run it for `warm_ms`
    first (under a power cap, a kernel timed right after a lighter one runs
    at boost clocks for a while and looks faster), then the median over
    `batches` batches of back-to-back calls, each about `batch_ms` long,
    timed with CUDA events around the whole batch."""
    import torch

    once = _once(fn)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(max(1, int(warm_ms / once))):
        fn()
    n = max(TIMED_RUNS, int(batch_ms / once))
    times = []
    for _ in range(batches):
        start.record()
        for _ in range(n):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / n)
    return statistics.median(times)


def _use_source_tree(out_dir=None):
    """Make the checkout's nvwgmma importable: the device has no build, and
    the pure-Python parts used here (the runtime, matmul's launcher, the
    grid policy) need none; its kernels come from `out_dir`."""
    path = os.path.join(ROOT, "python")
    if path not in sys.path:
        sys.path.insert(0, path)
    if out_dir:
        os.environ["NVWGMMA_PTX_DIR"] = out_dir


def _triton_matmul():
    """A plain Triton matmul (C = A @ B^T), the tutorial kernel with the
    configuration Triton's Hopper examples use."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def kernel(
        a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr
    ):
        pid = tl.program_id(0)
        tiles_m, tiles_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
        group = pid // (GROUP * tiles_n)
        first = group * GROUP
        size = min(tiles_m - first, GROUP)
        pm = first + (pid % (GROUP * tiles_n)) % size
        pn = (pid % (GROUP * tiles_n)) // size
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
            y = tl.load(b + rn[:, None] * K + (k + rk)[None, :])
            acc += tl.dot(x, tl.trans(y))
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(c.dtype.element_ty))

    def run(a, b, c):
        m, k = a.shape
        n = b.shape[0]
        grid = (triton.cdiv(m, 128) * triton.cdiv(n, 256),)
        kernel[grid](a, b, c, m, n, k, BM=128, BN=256, BK=64, GROUP=8, num_warps=8, num_stages=3)

    return run


def _gemm_ex(a, b, c):
    """cuBLAS gemmEx through cupy: C (row-major M x N) = A @ B^T with bf16
    in, f32 compute, C's type out."""
    import cupy as cp
    import numpy as np
    from cupy_backends.cuda.libs import cublas

    m, k = a.shape
    n = b.shape[0]
    types = {"torch.bfloat16": 14, "torch.float16": 2, "torch.float32": 0}  # CUDA_R_16BF, 16F, 32F
    handle = cp.cuda.device.get_cublas_handle()
    one, zero = np.array(1.0, np.float32), np.array(0.0, np.float32)
    # Row-major C = A B^T is column-major C^T = B A^T: op(B)=T (k x n -> n x k)...
    cublas.gemmEx(
        handle,
        cublas.CUBLAS_OP_T,
        cublas.CUBLAS_OP_N,
        n,
        m,
        k,
        one.ctypes.data,
        b.data_ptr(),
        types[str(b.dtype)],
        k,
        a.data_ptr(),
        types[str(a.dtype)],
        k,
        zero.ctypes.data,
        c.data_ptr(),
        types[str(c.dtype)],
        n,
        cublas.CUBLAS_COMPUTE_32F,
        cublas.CUBLAS_GEMM_DEFAULT,
    )


ROUNDS = 7


def torch_dtype(name: str):
    """The torch dtype of a kernel type name (bf16, f16, f32, e4m3, e5m2)."""
    import torch

    return {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
            "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}[name]  # fmt: skip


def _interleaved(impls: dict, rounds: int = ROUNDS):
    """Median ms per implementation: `rounds` rounds, each timing every
    implementation in turn (steady state, see _time), in an order rotated
    every round, so clock and power drift hit all of them alike; the median over
    rounds, and each implementation's per-round medians."""
    names = list(impls)
    per = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            per[name].append(_time(impls[name]))
    return {name: statistics.median(v) for name, v in per.items()}, per


class Problem:
    """One shape's inputs, references and baselines."""

    def __init__(self, m, n, k, in_t, out_t):
        import torch

        self.m, self.n, self.k = m, n, k
        gen = torch.Generator(device="cuda").manual_seed(m + n + k)
        self.fp8 = in_t.itemsize == 1
        # fp8: normal values rounded to the format (randn has no fp8 kernel).
        make_t = torch.bfloat16 if self.fp8 else in_t
        self.a = torch.randn(m, k, device="cuda", dtype=make_t, generator=gen).to(in_t)
        self.b = torch.randn(n, k, device="cuda", dtype=make_t, generator=gen).to(in_t)
        self.out_t = out_t
        # The cuBLAS baseline: torch.matmul, or for fp8 torch._scaled_mm (unit
        # scales; B as N x K row-major is the column-major K x N it wants).
        self.baseline = "torch._scaled_mm" if self.fp8 else "torch.matmul"
        self.one = torch.ones((), device="cuda", dtype=torch.float32)
        self.sample = torch.randperm(m, generator=torch.Generator().manual_seed(k))[:128].tolist()
        a64 = self.a[self.sample].double().cpu().numpy()
        self.ref = a64 @ self.b.double().cpu().numpy().T
        # cuBLAS in the output's precision (f32 out: an f32 GEMM, TF32 off).
        if self.fp8:
            self.cublas = self.scaled_mm()
        elif out_t == torch.float32:
            self.cublas = torch.matmul(self.a.float(), self.b.float().T)
        else:
            self.cublas = torch.matmul(self.a, self.b.T)

    def scaled_mm(self):
        import torch

        # use_fast_accum: accumulate in the tensor cores throughout, as our
        # kernel does (no periodic promotion to CUDA-core f32 adds).
        return torch._scaled_mm(
            self.a,
            self.b.T,
            scale_a=self.one,
            scale_b=self.one,
            out_dtype=self.out_t,
            use_fast_accum=True,
        )

    def error(self, c) -> float:
        import numpy as np

        got = c[self.sample].double().cpu().numpy()
        return float(np.linalg.norm(got - self.ref) / np.linalg.norm(self.ref))

    def baselines(self, triton_mm) -> dict:
        import torch

        a, b = self.a, self.b
        if self.fp8:  # no fp8 gemmEx or plain-Triton baseline here
            return {self.baseline: self.scaled_mm}, {self.baseline: self.error(self.cublas)}
        c_ex, c_tr = torch.empty_like(self.cublas), torch.empty_like(self.cublas)
        impls = {"torch.matmul": lambda: torch.matmul(a, b.T)}
        try:
            _gemm_ex(a, b, c_ex)
            torch.cuda.synchronize()
            impls["cupy gemmEx"] = lambda: _gemm_ex(a, b, c_ex)
        except Exception as error:  # noqa: BLE001 (report and keep going)
            print("gemmEx unavailable:", error)
        if triton_mm is not None and self.out_t != torch.float32:
            triton_mm(a, b, c_tr)
            impls["triton"] = lambda: triton_mm(a, b, c_tr)
        torch.cuda.synchronize()
        outputs = {"torch.matmul": self.cublas, "cupy gemmEx": c_ex, "triton": c_tr}
        return impls, {name: self.error(outputs[name]) for name in impls}


def _grid(meta, problem, sms, policy):
    """The launch grid: "balanced" is the generator's own policy
    (nvwgmma.kernel.gemm.grid_size), "per_sm" one CTA per SM (a ragged last
    wave), "per_tile" one CTA per tile (the ablations)."""
    _use_source_tree()
    from nvwgmma.kernel.gemm import grid_size

    p, cluster = problem, meta["cluster"][0]
    tiles = -(-p.m // meta["tile"][0]) * -(-p.n // meta["tile"][1])
    if policy == "per_tile":
        return tiles
    if policy == "per_sm":
        return min(sms // cluster, tiles // cluster) * cluster
    return grid_size(meta, p.m, p.n, p.k, sms)


def _launcher(out_dir, meta, problem, sms, policy="balanced"):
    """A callable launching our kernel on the problem (through matmul's
    prepared launch), and its output."""
    import torch

    _use_source_tree(out_dir)
    from nvwgmma.kernel.gemm import GemmConfig
    from nvwgmma.kernel.gemm.launch import prepare

    p = problem
    c = torch.full((p.m, p.n), float("nan"), device="cuda", dtype=p.out_t)
    config = GemmConfig(**{**meta["config"], "fusion": ()})
    launch, _ = prepare(p.a, p.b.T, out=c, config=config, grid=_grid(meta, p, sms, policy))
    return launch, c, None


def run(out_dir: str, shapes) -> int:
    import numpy as np
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    info = _gpu_info()
    with open(os.path.join(out_dir, "configs.json")) as f:
        configs = json.load(f)
    triton_mm = _triton_matmul()
    dtypes = {name: torch_dtype(name) for name in ("bf16", "f16", "f32", "e4m3", "e5m2")}
    rows = []
    failed = 0
    print(info)
    shipped = [m for m in configs if m["ablation"] is None]
    for meta in shipped:
        cfg = meta["config"]
        for m, n, k in shapes:
            p = Problem(m, n, k, dtypes[cfg["dtype"]], dtypes[cfg["out_dtype"]])
            ours, c, _keep = _launcher(out_dir, meta, p, info["sms"])
            ours()
            torch.cuda.synchronize()
            error = p.error(c)
            full = float(
                torch.linalg.norm(c.double() - p.cublas.double())
                / torch.linalg.norm(p.cublas.double())
            )
            impls, errors = p.baselines(triton_mm)
            impls = {"nvwgmma": ours, **impls}
            errors = {"nvwgmma": error, **errors}
            variants = {}
            # The ablations: the default configuration without one technique
            # (each measured on the shipped configuration of its dtypes).
            if cfg == shipped[0]["config"]:
                for name, policy in (
                    ("always one CTA per tile", "per_tile"),
                    ("one CTA per SM (ragged last wave)", "per_sm"),
                ):
                    variants[name] = _launcher(out_dir, meta, p, info["sms"], policy=policy)
            for ab in configs:
                same_types = all(ab["config"][t] == cfg[t] for t in ("dtype", "out_dtype"))
                if ab["ablation"] and same_types:
                    variants[ab["ablation"]] = _launcher(out_dir, ab, p, info["sms"])
            if variants:
                for name, (launch, out, _maps) in variants.items():
                    launch()
                    torch.cuda.synchronize()
                    errors[name] = p.error(out)
                    impls[name] = launch
            bound = 1e-5 if p.out_t == torch.float32 else 8e-3
            ok = (
                all(np.isfinite(list(errors.values())))
                and all(e <= bound for e in errors.values())
                and full <= 2 * bound
            )
            failed += not ok
            times, per_round = _interleaved(impls)
            base = p.baseline
            wins = sum(o < t for o, t in zip(per_round["nvwgmma"], per_round[base]))
            flop = 2.0 * m * n * k
            tflops = {name: flop / (ms * 1e-3) / 1e12 for name, ms in times.items()}
            row = {
                "config": meta["name"],
                "m": m,
                "n": n,
                "k": k,
                "correct": ok,
                "errors_vs_float64": errors,
                "error_vs_cublas_full": full,
                "ms": times,
                "tflops": tflops,
                # Paired: each round times both back to back, so the median of
                # the per-round ratios cancels most of the drift of the clocks
                # under the power cap that separate medians keep.
                "baseline": base,
                "ratio_to_torch": statistics.median(
                    t / o for o, t in zip(per_round["nvwgmma"], per_round[base])
                ),
                "ratio_of_medians": tflops["nvwgmma"] / tflops[base],
                "rounds_won_vs_torch": f"{wins}/{len(per_round['nvwgmma'])}",
                "per_round_ms": per_round,
            }
            rows.append(row)
            print(
                f"{'ok ' if ok else 'BAD'} {meta['name']:34s} {m:5d}x{n:5d}x{k:5d}  "
                f"ratio/{base} {row['ratio_to_torch']:.3f} "
                f"(won {row['rounds_won_vs_torch']} rounds)  err {error:.1e}",
                flush=True,
            )
            for name, t in tflops.items():
                print(f"      {name:42s} {t:6.1f} TFLOP/s", flush=True)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"info": info, "rows": rows}, f, indent=1)
    return 1 if failed else 0


def main(argv=None) -> int:
    parser = mode_parser(__doc__)
    parser.add_argument("--shapes", nargs="*", help="M,N,K ...")
    args = parser.parse_args(argv)
    if args.mode == "generate":
        generate(args.dir)
        return 0
    shapes = [tuple(int(v) for v in s.split(",")) for s in args.shapes] if args.shapes else SHAPES
    return run(args.dir, shapes)


if __name__ == "__main__":
    sys.exit(main())
