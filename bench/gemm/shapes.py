"""GEMM speed on the shapes models run: the four Llama-3-8B projections
(N x K = 6144 x 4096 QKV, 4096 x 4096 O, 28672 x 4096 gate/up, 4096 x 14336
down) at M = 128 / 512 / 2048 / 8192 tokens, ragged M, the square shapes,
and the fp8 rows -- the configuration `select_config` picks, and every
candidate it chose among, against torch.matmul / torch._scaled_mm, paired
per round, in one process.

    # here (nvwgmma built): the PTX of every candidate of every shape
    # (--set decode: Llama-3-8B at M = 1-64; decode-heldout: Llama-3-70B's
    # and Qwen2.5-7B's projections, which rule 0 was not set on; corpus:
    # bench/gemm/models.py's public shape corpus, sampled, the selector's
    # choice only)
    python bench/gemm/shapes.py generate .device/shapes
    # on the GPU (torch, cuda-python; no nvwgmma build)
    python bench/gemm/shapes.py run .device/shapes

Every configuration is first checked against a float64 reference on
sampled rows (bound scaled with K) and, for split-K and stream-K, run twice
and compared bit for bit; at M <= 128 the achieved DRAM bandwidth (bytes of
A, B and C over time) is reported as a fraction of the GPU's peak.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

PROJECTIONS = {"QKV": (6144, 4096), "O": (4096, 4096), "gate/up": (28672, 4096),
               "down": (4096, 14336)}  # fmt: skip
TOKENS = (128, 512, 2048, 8192)
RAGGED = [(1000, 4096, 4096), (3000, 4096, 4096)]
SQUARE = [(4096, 4096, 4096), (8192, 8192, 8192)]
# Decode (rule 0 of select_config): the rule was set on Llama-3-8B's
# projections ("decode"); Llama-3-70B's and Qwen2.5-7B's ("decode-heldout")
# were never looked at before it was fixed, and are reported as measured.
DECODE_TOKENS = (1, 8, 16, 32, 64)
HELD_OUT = {"70B QKV": (10240, 8192), "70B O": (8192, 8192), "70B gate/up": (28672, 8192),
            "70B down": (8192, 28672), "Qwen7B QKV": (4608, 3584), "Qwen7B O": (3584, 3584),
            "Qwen7B gate/up": (37888, 3584), "Qwen7B down": (3584, 18944)}  # fmt: skip
SETS = (
    "llama8b",
    "decode",
    "decode-heldout",
    "corpus",
    "corpus-second",
    "corpus-candidates",
    "corpus-small",
    "corpus-m64",
    "corpus-mid",
    "heldout-mid",
    "heldout-mid-second",
    "heldout-narrow",
    "heldout-widths",
)
# Peak DRAM bandwidth by GPU name (bytes/s): the H100 SXM's HBM3, the H200's HBM3e.
PEAK_BANDWIDTH = {"H100": 3.35e12, "H200": 4.8e12}


def _tiles_128(m: int, n: int) -> int:
    return -(-m // 128) * -(-n // 128)


# The sets drawn from the tuned half's sample, each keeping the (M, N, K) its
# test holds: above decode sizes; rule 4's region (128 x 128 tiles under
# half a wave) from M = 33 up (rule 0 takes fewer tokens); 33-64 tokens
# where the cost model picks.
TUNED_SETS = {
    "corpus-candidates": lambda m, n, k: m > 64,
    "corpus-small": lambda m, n, k: m > 32 and 2 * _tiles_128(m, n) < 132,
    "corpus-m64": lambda m, n, k: 32 < m <= 64 and 2 * _tiles_128(m, n) >= 132,
}


# The region's samples (half, seed), each disjoint from the corpus samples
# and from those listed before it: corpus-mid to fit on; heldout-widths
# drawn after rule 3b's widths were fitted, to judge them untouched.
MID_SETS = {"corpus-mid": ("tuned", 7), "heldout-mid": ("held-out", 8),
            "heldout-mid-second": ("held-out", 10), "heldout-widths": ("held-out", 12)}  # fmt: skip


# Drawn from the shapes of a region rather than filtered out of the sample
# (the region holds too few of the sample's): the half-to-one wave of
# 128 x 128 tiles above 64 tokens, where every tile leaves SMs idle.
def _mid(m: int, n: int, k: int) -> bool:
    return m > 64 and 132 <= 2 * _tiles_128(m, n) < 264


def _sampled(half: str, dtype: str, per_band: int, seed: int, keep=lambda m, n, k: True,
             pool=lambda m, n, k: True):  # fmt: skip
    """models.sample's shapes of `half` (drawn among those `pool` holds)
    that `keep` holds, labelled with the half; for fp8, those whose N and
    K are whole 16-byte rows."""
    import models

    return [(f"[{half}] {label}", m, n, k) for label, m, n, k in
            models.sample(half, per_band, seed, keep=pool)
            if keep(m, n, k) and (dtype == "bf16" or (n % 16 == 0 and k % 16 == 0))]  # fmt: skip


def table(dtype: str, which: str = "llama8b"):
    """(label, m, n, k) of every row of set `which` measured for `dtype`
    ("corpus": a sample of bench/gemm/models.py's shapes, each half
    stratified by M, the half in the label)."""
    if which in TUNED_SETS:  # the tuned half, to fit on
        # bf16: the sample the 16-bit rates were fitted on; fp8 its own.
        per_band, seed = (40, 2) if dtype == "bf16" else (20, 3)
        return _sampled("tuned", dtype, per_band, seed, TUNED_SETS[which])
    if which in MID_SETS:  # _mid, 20 / 10 per band
        half, seed = MID_SETS[which]
        earlier = ("corpus", "corpus-second", *list(MID_SETS)[1 : list(MID_SETS).index(which)])
        seen = {row[1:] for sample in earlier for row in table(dtype, sample)}
        return _sampled(half, dtype, 20 if dtype == "bf16" else 10, seed + (dtype != "bf16"),
                        keep=lambda m, n, k: (m, n, k) not in seen, pool=_mid)  # fmt: skip
    if which == "heldout-narrow":  # the held-out rows rule 3b takes a narrow tile on
        from nvwgmma.kernel.gemm.selector import select_config

        rows = [row for sample in ("corpus", "corpus-second", "heldout-mid-second")
                for row in table(dtype, sample) if row[0].startswith("[held-out]")]  # fmt: skip
        picks = {row: select_config(*row[1:], dtype=dtype, out_dtype="bf16") for row in rows}
        return [row for row, c in picks.items()
                if c.tile_m == 128 and c.tile_n < 128 and not c.store_transposed]  # fmt: skip
    if which == "corpus-second":  # a second held-out sample, disjoint from the first
        first = {row[1:] for row in table(dtype, "corpus")}
        per_band, seed = (40, 5) if dtype == "bf16" else (12, 6)
        return _sampled("held-out", dtype, per_band, seed, lambda m, n, k: (m, n, k) not in first)
    if which == "corpus":
        per_band, seed = (40, 0) if dtype == "bf16" else (12, 1)
        return [row for half in ("tuned", "held-out")
                for row in _sampled(half, dtype, per_band, seed)]  # fmt: skip
    if which == "decode":
        return [(f"{name} M={m}", m, n, k) for m in DECODE_TOKENS
                for name, (n, k) in PROJECTIONS.items()]  # fmt: skip
    if which == "decode-heldout":
        return [(f"{name} M={m}", m, n, k) for m in DECODE_TOKENS
                for name, (n, k) in HELD_OUT.items()]  # fmt: skip
    rows = [(f"{name} M={m}", m, n, k) for m in TOKENS for name, (n, k) in PROJECTIONS.items()]
    if dtype == "bf16":
        rows += [(f"ragged M={m}", m, n, k) for m, n, k in RAGGED]
        rows += [(f"square {m}", m, n, k) for m, n, k in SQUARE]
    return rows


def _key(config) -> str:
    from nvwgmma.kernel.gemm.launch import kernel_key

    return kernel_key(config)


def generate(out_dir: str, which: str = "llama8b") -> None:
    from nvwgmma.kernel.gemm import candidates, select_config
    from nvwgmma.kernel.gemm.launch import write_kernel

    written, plan = {}, []
    for dtype in ("bf16", "e4m3"):  # every set has rows of both
        for label, m, n, k in table(dtype, which):
            chosen = select_config(m, n, k, dtype=dtype, out_dtype="bf16")
            # The corpus measures what the selector picks, nothing else.
            tried = (
                []
                if which in ("corpus", "corpus-second")
                else candidates(m, n, k, dtype=dtype, out_dtype="bf16")
            )
            for config in [chosen, *tried]:
                key = _key(config)
                if key not in written:
                    write_kernel(os.path.join(out_dir, "ptx"), config)
                    written[key] = config
            plan.append({"label": label, "m": m, "n": n, "k": k, "dtype": dtype,
                         "chosen": _key(chosen),
                         "tried": [_key(c) for c in tried if _key(c) != _key(chosen)]})  # fmt: skip
    with open(os.path.join(out_dir, "plan.json"), "w") as f:
        json.dump(plan, f, indent=1)
    print(len(written), "kernels,", len(plan), "rows")


# ---------------------------------------------------------------------------- on the GPU
def bound(k: int, out_dtype: str) -> float:
    """The relative error (Frobenius, vs float64) a correct kernel stays
    under: the output's rounding plus f32 accumulation growing like sqrt(K)
    (cuBLAS lands at the same place: an f32 output at K = 14336 shows
    1.6e-5)."""
    rounding = {"bf16": 8e-3, "f16": 2e-3, "f32": 1e-5}[out_dtype]
    return rounding + 2e-7 * k**0.5


def problem(m: int, n: int, k: int, fp8: bool = False):
    """(a, w, check): seeded randn A (M x K) and W (N x K), bf16 or e4m3,
    and check(c), C's relative error (Frobenius, after a synchronise) on 64
    sampled rows against float64 A Wᵀ (computed on the GPU)."""
    import torch

    gen = torch.Generator(device="cuda").manual_seed(m + n + k)
    a = torch.randn(m, k, device="cuda", generator=gen, dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", generator=gen, dtype=torch.bfloat16)
    if fp8:
        a, w = a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
    sample = torch.randperm(m, generator=torch.Generator().manual_seed(k))[:64].cuda()
    ref = torch.cat([a[sample].double() @ part.double().T for part in w.split(8192)], dim=1)

    def check(c) -> float:
        torch.cuda.synchronize()
        return float((c[sample].double() - ref).norm() / ref.norm())

    return a, w, check


def launched(a, w, config, check, rerun: bool = False):
    """(launch, error, identical): `config`'s kernel prepared on C = A Wᵀ
    (C of the config's out_dtype, NaN-filled first: `launch.out`), launched once and its
    error taken by `check`; with `rerun`, C is NaN-filled again, the kernel
    relaunched and `identical` says whether C came back bit for bit (else
    None)."""
    import torch
    from nvwgmma.kernel.gemm.launch import prepare
    from run import torch_dtype, watchdog

    m, n = a.shape[0], w.shape[0]
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch_dtype(config.out_dtype))
    launch, _ = prepare(a, w.T, out=c, config=config)
    launch.out = c
    with watchdog(f"{config.name} at M={m} N={n} K={a.shape[1]}"):
        launch()
        error = check(c)
    identical = None
    if rerun:
        first = c.clone()
        c.fill_(float("nan"))
        launch()
        torch.cuda.synchronize()
        identical = bool(torch.equal(first, c))
    return launch, error, identical


def _config_of(meta):
    from nvwgmma.kernel.gemm import GemmConfig

    return GemmConfig(**{**meta["config"], "fusion": ()})


def run(out_dir: str, rounds: int = 5, only: str | None = None, chosen_only: bool = False,
        candidates: str | None = None, only_dtype: str | None = None) -> int:  # fmt: skip
    import numpy as np
    import torch
    from run import _gpu_info, _interleaved, failures, write_results

    torch.backends.cuda.matmul.allow_tf32 = False
    info = _gpu_info()
    print(info, flush=True)
    peak = next((v for k, v in PEAK_BANDWIDTH.items() if k in info["gpu"]), None)
    metas = {}
    ptx_dir = os.path.join(out_dir, "ptx")
    for f in os.listdir(ptx_dir):
        if f.endswith(".json"):
            metas[f[: -len(".json")]] = json.load(open(os.path.join(ptx_dir, f)))
    plan = json.load(open(os.path.join(out_dir, "plan.json")))
    rows, failed = [], 0
    for entry in plan:
        if (only and only not in entry["label"]) or (only_dtype and only_dtype != entry["dtype"]):
            continue
        m, n, k, dtype = entry["m"], entry["n"], entry["k"], entry["dtype"]
        fp8 = dtype == "e4m3"
        a, w, check = problem(m, n, k, fp8)
        one = torch.ones((), device="cuda")
        if fp8:
            base_name = "torch._scaled_mm"

            def baseline(a=a, w=w, one=one):
                return torch._scaled_mm(a, w.T, scale_a=one, scale_b=one,
                                        out_dtype=torch.bfloat16, use_fast_accum=True)  # fmt: skip
        else:
            base_name = "torch.matmul"

            def baseline(a=a, w=w):
                return torch.matmul(a, w.T)

        impls = {base_name: baseline}
        errors = {base_name: None}
        deterministic = {}
        tried = (
            []
            if chosen_only
            else [t for t in entry["tried"] if candidates is None or re.search(candidates, t)]
        )
        for key in [entry["chosen"], *tried]:
            config = _config_of(metas[key])
            split = config.scheduler != "persistent"
            launch, err, identical = launched(a, w, config, check, rerun=split)
            if split:
                deterministic[key] = identical
            name = "chosen" if key == entry["chosen"] else key
            impls[name] = launch
            errors[name] = err
        errors[base_name] = check(baseline())
        limit = bound(k, "bf16")
        ok = all(np.isfinite(e) and e <= limit for e in errors.values()) and all(
            deterministic.values()
        )
        failed += not ok
        if not ok:
            print(f"    failing: errors {errors} (bound {limit:.2e}), deterministic {deterministic}",
                  flush=True)  # fmt: skip
        times, per = _interleaved(impls, rounds=rounds)
        flop = 2.0 * m * n * k
        ratios = {
            name: statistics.median(t / o for o, t in zip(per[name], per[base_name]))
            for name in impls
            if name != base_name
        }
        row = {
            **entry,
            "correct": ok,
            "bound": limit,
            "errors_vs_float64": errors,
            "deterministic": deterministic,
            "ms": times,
            "tflops": {name: flop / (t * 1e-3) / 1e12 for name, t in times.items()},
            "baseline": base_name,
            "ratio": ratios,
        }
        if m <= 128 and peak:
            moved = (m * k + n * k) * (1 if fp8 else 2) + m * n * 2
            row["bandwidth_fraction"] = {
                name: moved / (t * 1e-3) / peak for name, t in times.items()
            }
        rows.append(row)
        write_results(out_dir, "shapes-results.json", {"info": info, "rows": rows})  # so far
        best = max(ratios, key=ratios.get)
        print(f"{'ok ' if ok else 'BAD'} {dtype} {entry['label']:16s} chosen "
              f"{ratios['chosen']:.3f}  best {best} {ratios[best]:.3f}  "
              f"{metas[entry['chosen']]['name']}", flush=True)  # fmt: skip
        if "bandwidth_fraction" in row:
            print(f"      bandwidth: chosen {row['bandwidth_fraction']['chosen']:.2f} of peak, "
                  f"{base_name} {row['bandwidth_fraction'][base_name]:.2f}", flush=True)  # fmt: skip
        for name, r in ratios.items():
            if name != "chosen":
                print(f"      {metas[name]['name'] if name in metas else name:52s} {r:.3f}")
    for dtype in ("bf16", "e4m3"):
        chosen = [r["ratio"]["chosen"] for r in rows if r["dtype"] == dtype and "M=" in r["label"]
                  and "ragged" not in r["label"]]  # fmt: skip
        if chosen:
            geo = float(np.exp(np.mean(np.log(chosen))))
            print(f"{dtype}: geometric mean {geo:.3f}, worst {min(chosen):.3f} over {len(chosen)}")
    names = {k: v["name"] for k, v in metas.items()}
    write_results(out_dir, "shapes-results.json", {"info": info, "names": names, "rows": rows})
    return failures(failed)


def use_kernels(out_dir: str) -> None:
    """The device has no nvwgmma build: import the checkout's pure-Python
    runtime, with the kernels `generate` wrote to `out_dir`."""
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    os.environ.setdefault("NVWGMMA_PTX_DIR", os.path.join(out_dir, "ptx"))
    os.environ.setdefault("NVWGMMA_CACHE_DIR", os.path.join(out_dir, "cache"))


def main(argv=None) -> int:
    from run import mode_parser

    parser = mode_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=5, help="timing rounds per row (run)")
    parser.add_argument("--only", help="rows whose label contains this (run)")
    parser.add_argument(
        "--chosen-only",
        action="store_true",
        help="time the selector's choice alone, not the other candidates (run)",
    )
    parser.add_argument(
        "--candidates", help="time only the candidates whose file stem matches this regex (run)"
    )
    parser.add_argument("--dtype", choices=("bf16", "e4m3"), help="rows of this input type (run)")
    parser.add_argument("--set", default="llama8b", choices=SETS, help="the shapes (generate)")
    args = parser.parse_args(argv)
    if args.mode == "generate":
        generate(args.dir, args.set)
        return 0
    use_kernels(args.dir)
    return run(args.dir, args.rounds, args.only, args.chosen_only, args.candidates, args.dtype)


if __name__ == "__main__":
    sys.exit(main())
