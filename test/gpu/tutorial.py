"""The docs/kernels.md GEMMs on a Hopper GPU, against numpy.

    python test/gpu/tutorial.py generate OUT_DIR   # here: PTX (needs nvwgmma)
    python test/gpu/tutorial.py run OUT_DIR        # on the GPU (numpy + cupy)

`generate` runs the tutorial's code blocks (as test_kernels_doc.py does) for
f32 and bf16 output and writes OUT_DIR/{simple,ws}_gemm_{f32,bf16}.ptx and
OUT_DIR/launch.json (block, tile, dynamic shared memory, TMA boxes).
`run` launches each on several shapes, from bf16 inputs (random, exactly
representable), and compares with a float64 numpy reference: relative
Frobenius error under 1e-5 for f32 output and 8e-3 for bf16 (one rounding
to 8 significant bits). Prints a table and writes OUT_DIR/results.json
with the GPU, driver and clocks.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = [
    (128, 256, 128),
    (192, 384, 320),
    (512, 256, 1024),
    (64, 1024, 2048),
    (384, 640, 512),
    (1024, 1024, 4096),
]
BOUND = {"f32": 1e-5, "bf16": 8e-3}


def generate(out_dir: str) -> None:
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    from dataclasses import asdict

    from test_kernels_doc import run_doc

    os.makedirs(out_dir, exist_ok=True)
    for out_type in ("f32", "bf16", "bf16-tma"):
        ns = run_doc(out_type)
        for name, key in (("simple_gemm", "ptx"), ("ws_gemm", "ptx2")):
            if out_type == "bf16-tma" and name == "simple_gemm":
                continue
            with open(os.path.join(out_dir, f"{name}_{out_type}.ptx"), "w") as f:
                f.write(ns[key])
            print(f"{name}_{out_type}.ptx: {len(ns[key])} bytes")
    launch = {
        "simple_gemm": {"block": 128, "bm": ns["BM"], "bn": ns["BN"], "smem": 0},
        "ws_gemm": {
            "block": ns["launch2"]["block"][0],
            "bm": ns["BM2"],
            "bn": ns["BN"],
            "smem": ns["DYNAMIC_SMEM"],
            "boxes": {k: asdict(v) for k, v in ns["launch2"]["boxes"].items()},
        },
    }
    with open(os.path.join(out_dir, "launch.json"), "w") as f:
        json.dump(launch, f, indent=1)


def _bf16_bits(x: np.ndarray) -> np.ndarray:
    bits = x.astype(np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def _bf16_value(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _tensor_map(matrix, rows: int, cols: int, box: dict):
    """The device copy of a CUtensorMap for a (rows x cols) bf16 matrix."""
    import cupy as cp

    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    from nvwgmma.kernel.geometry import TmaBox
    from nvwgmma.kernel.tensormap import encode_tiled

    blob = encode_tiled(
        matrix.data.ptr,
        "bf16",
        rows=rows,
        cols=cols,
        box=TmaBox.from_dict(box),
    )
    return cp.asarray(np.frombuffer(blob, np.uint8))


def run(out_dir: str) -> int:
    import cupy as cp

    props = cp.cuda.runtime.getDeviceProperties(0)
    gpu = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    info = {
        "gpu": gpu,
        "driver": cp.cuda.runtime.driverGetVersion(),
        "sm_clock_khz": props.get("clockRate"),
        "mem_clock_khz": props.get("memoryClockRate"),
        "results": [],
    }
    with open(os.path.join(out_dir, "launch.json")) as f:
        launch = json.load(f)
    rng = np.random.default_rng(2026)
    failed = 0
    for name in ("simple_gemm", "ws_gemm"):
        meta = launch[name]
        for out_type in ("f32", "bf16", "bf16-tma"):
            if not os.path.exists(os.path.join(out_dir, f"{name}_{out_type}.ptx")):
                continue
            kernel = cp.RawModule(
                path=os.path.join(out_dir, f"{name}_{out_type}.ptx")
            ).get_function(name)
            if meta["smem"]:
                kernel.max_dynamic_shared_size_bytes = meta["smem"]
            for m, n, k in SHAPES:
                if m % meta["bm"] or n % meta["bn"]:
                    continue
                a_bits = _bf16_bits(rng.standard_normal((m, k)))
                b_bits = _bf16_bits(rng.standard_normal((n, k)))
                a = _bf16_value(a_bits).astype(np.float64)
                b = _bf16_value(b_bits).astype(np.float64)
                ref = a @ b.T
                c_dtype = np.float32 if out_type == "f32" else np.uint16
                store_type = out_type.split("-")[0]
                c = cp.full((m, n), 0xFF if store_type == "bf16" else np.nan, dtype=c_dtype)
                a_dev, b_dev = cp.asarray(a_bits), cp.asarray(b_bits)
                if name == "ws_gemm":
                    # C's tensor map serves the TMA-store epilogue only.
                    args = (
                        _tensor_map(a_dev, m, k, meta["boxes"]["A"]),
                        _tensor_map(b_dev, n, k, meta["boxes"]["B"]),
                        c,
                        _tensor_map(c, m, n, meta["boxes"]["C"]),
                    )
                else:
                    args = (a_dev, b_dev, c)
                kernel(
                    (n // meta["bn"], m // meta["bm"], 1),
                    (meta["block"], 1, 1),
                    (*args, np.int32(m), np.int32(n), np.int32(k)),
                    shared_mem=meta["smem"],
                )
                cp.cuda.runtime.deviceSynchronize()
                out = cp.asnumpy(c)
                out = (
                    out.astype(np.float64)
                    if store_type == "f32"
                    else _bf16_value(out).astype(np.float64)
                )
                finite = bool(np.isfinite(out).all())
                error = (
                    float(np.linalg.norm(out - ref) / np.linalg.norm(ref))
                    if finite
                    else float("inf")
                )
                ok = finite and error <= BOUND[store_type]
                failed += not ok
                info["results"].append(
                    {
                        "kernel": name,
                        "out": out_type,
                        "m": m,
                        "n": n,
                        "k": k,
                        "error": error,
                        "passed": ok,
                    }
                )
                print(
                    f"{'PASS' if ok else 'FAIL'} {name:11s} {out_type:8s} {m:5d} x {n:5d} x {k:5d}  "
                    f"rel. error {error:.2e} (bound {BOUND[store_type]:g})",
                    flush=True,
                )
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(info, f, indent=1)
    print(
        f"{gpu}, driver {info['driver']}: {len(info['results']) - failed} passed, {failed} failed"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    mode, out = sys.argv[1], sys.argv[2]
    sys.exit(generate(out) or 0 if mode == "generate" else run(out))
