"""Run the hardware configurations on an sm_90a GPU and check the numbers.

    python test/gpu/runner.py PTX_DIR [OUT_DIR]

Needs only numpy and cupy (what the device machine has) plus nvwgmma's pure
numpy helpers (python/nvwgmma/{layouts,descriptors}.py, imported without the
native package). For every kernel of PTX_DIR/manifest.json: fresh random
inputs (never all zeros; integers span their type's range), A and B laid out
in shared-memory order by nvwgmma.layouts.shared_tile, A fragments packed by
pack_a_fragment, a sparse A compressed and its metadata packed by
nvwgmma.sparsity, the output buffer poisoned, one launch of 128 threads, then
D unpacked with unpack_accumulator and compared with a float64 / int64 numpy
reference: exact for integers and b1 (wrapping or saturating per step as the
op says), ‖out − ref‖ / ‖ref‖ under the type's bound for floats.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from configs import Config  # noqa: E402
from kernels import layout_tiles, tile_shapes  # noqa: E402
from nvwgmma import layouts as L  # noqa: E402  (pure numpy)
from nvwgmma import sparsity as S  # noqa: E402  (pure numpy)

# Bounds on ‖out − ref‖ / ‖ref‖ (see docs/validation.md for the reasons).
TOLERANCE = {
    ("f32", "f16"): 1e-5,
    ("f32", "bf16"): 1e-5,
    ("f32", "tf32"): 1e-5,
    ("f32", "fp8"): 1e-3,
    ("f16", "f16"): 5e-3,
    ("f16", "fp8"): 1e-2,
}
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def family(t: str) -> str:
    return "fp8" if t in ("e4m3", "e5m2") else t


def random_values(rng, type_name: str, shape):
    """Random bit patterns and their exact values for a wgmma input type."""
    if type_name in ("f16", "bf16", "tf32"):
        x = rng.uniform(-2.0, 2.0, shape)
    elif type_name in ("e4m3", "e5m2"):
        x = rng.uniform(-4.0, 4.0, shape)
    elif type_name == "s8":
        x = rng.integers(-128, 128, shape)
    elif type_name == "u8":
        x = rng.integers(0, 256, shape)
    else:  # b1
        x = rng.integers(0, 2, shape)
    bits = L.to_bits(x, type_name)
    return bits, L.from_bits(bits, type_name)


def prepare(cfg: Config, rng):
    """Device inputs and the reference D (float64 or int64) of one config."""
    (m, k_stored), (n, k_total) = tile_shapes(cfg)
    a_bits, a_val = random_values(rng, cfg.a_type, (m, k_total))
    a_stored, metas = a_bits, []
    if cfg.sparse:
        a_bits = S.random_sparse(rng, a_bits, cfg.a_type)
        a_val = L.from_bits(a_bits, cfg.a_type)
        slices = []
        for s in range(cfg.steps):
            values, positions = S.compress(a_bits[:, s * cfg.k : (s + 1) * cfg.k], cfg.a_type)
            slices.append(values)
            metas.append(S.pack_metadata(positions, cfg.a_type, cfg.selector))
        a_stored = np.concatenate(slices, axis=1)
    b_bits, b_val = random_values(rng, cfg.b_type, (k_total, n))
    a_tile, b_tile = layout_tiles(cfg, a_stored, b_bits.T)
    count = L.pack_accumulator(np.zeros((m, n), np.uint32), cfg.d_type).shape[1]
    integer = cfg.d_type == "s32"
    if cfg.init_d:
        d0 = rng.integers(INT32_MAX - 2**20, INT32_MAX, (m, n)) * rng.choice([-1, 1], (m, n))
        d_init = L.pack_accumulator(L.to_bits(d0, "s32"), "s32")
        ref = d0.astype(np.int64)
        first_scale = 1
    else:
        d_init = np.full((128, count), 0xFFFFFFFF, dtype=np.uint32)  # poison (NaN for f32)
        ref = np.zeros((m, n), dtype=np.int64 if integer else np.float64)
        first_scale = 0
    sa = -1 if cfg.negate_a else 1
    sb = -1 if cfg.negate_b else 1
    frags = []
    for s in range(cfg.steps):
        ks = slice(s * cfg.k, (s + 1) * cfg.k)
        if cfg.a_source == "regs":
            stored = slice(s * cfg.k // 2, (s + 1) * cfg.k // 2) if cfg.sparse else ks
            frags.append(L.pack_a_fragment(a_stored[:, stored], cfg.a_type))
        if integer:
            ref = ref + a_val[:, ks].astype(np.int64) @ b_val[ks, :].astype(np.int64)
            ref = (
                np.clip(ref, INT32_MIN, INT32_MAX)
                if cfg.satfinite
                else ((ref - INT32_MIN) % 2**32 + INT32_MIN)
            )
        else:
            ref = ref + (sa * a_val[:, ks]) @ (sb * b_val[ks, :])
    frag = np.concatenate(frags) if frags else np.zeros((128, 4), np.uint32)
    inputs = {
        "a": a_tile.data,
        "b": b_tile.data,
        "frag": np.ascontiguousarray(frag, np.uint32),
        "d": np.ascontiguousarray(d_init, np.uint32),
        "first_scale": first_scale,
        "meta": np.concatenate(metas) if metas else np.zeros(128, np.uint32),
    }
    return inputs, ref


def check(cfg: Config, d_out: np.ndarray, ref: np.ndarray):
    """(passed, error, detail) for the registers a kernel wrote."""
    bits = L.unpack_accumulator(d_out.reshape(128, -1), cfg.d_type, cfg.n)
    out = L.from_bits(bits, cfg.d_type)
    if cfg.d_type == "s32":
        wrong = int(np.count_nonzero(out != ref))
        return wrong == 0, wrong, f"{wrong} of {out.size} elements differ"
    if not np.isfinite(out).all():
        return False, float("inf"), "non-finite output (poison or NaN)"
    error = float(np.linalg.norm(out - ref) / np.linalg.norm(ref))
    bound = TOLERANCE[(cfg.d_type, family(cfg.a_type))]
    return error <= bound, error, f"bound {bound:g}"


def run(ptx_dir: str, out_dir: str | None) -> int:
    import cupy as cp

    with open(os.path.join(ptx_dir, "manifest.json")) as f:
        manifest = json.load(f)
    props = cp.cuda.runtime.getDeviceProperties(0)
    device = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    driver = cp.cuda.runtime.driverGetVersion()
    rng = np.random.default_rng(int(time.time()))
    results = []
    for entry in manifest["kernels"]:
        cfg = Config(**entry["config"])
        inputs, ref = prepare(cfg, rng)
        module = cp.RawModule(path=os.path.join(ptx_dir, entry["ptx"]))
        kernel = module.get_function("kernel")

        dev = {k: cp.asarray(v) for k, v in inputs.items() if k != "first_scale"}
        kernel(
            (1,),
            (128,),
            (
                dev["a"],
                dev["b"],
                dev["frag"],
                dev["d"],
                dev["meta"],
                np.int32(inputs["first_scale"]),
            ),
        )
        cp.cuda.runtime.deviceSynchronize()
        passed, error, detail = check(cfg, cp.asnumpy(dev["d"]), ref)
        results.append(
            {
                "name": cfg.name,
                "passed": passed,
                "error": error,
                "detail": detail,
                "serialized": entry["serialized"],
            }
        )
        print(f"{'PASS' if passed else 'FAIL'} {cfg.name:60s} {error:.3g} ({detail})", flush=True)
    failed = [r for r in results if not r["passed"]]
    summary = {
        "device": device,
        "driver": driver,
        "ptxas": manifest.get("ptxas"),
        "date": time.strftime("%Y-%m-%d"),
        "results": results,
    }
    if out_dir:
        with open(os.path.join(out_dir, "results.json"), "w") as f:
            json.dump(summary, f, indent=1)
    print(f"device: {device}, driver {driver}")
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else os.environ.get("OUT")))
