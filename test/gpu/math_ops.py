"""Every `math` op through compile_to_ptx, checked on an sm_90a GPU against
float64 numpy.

    PYTHONPATH=<nvwgmma package> python test/gpu/math_ops.py generate DIR   # here
    python test/gpu/math_ops.py run DIR [RESULT.json]                       # on the GPU

`generate` builds one kernel per (op, type, fastmath) case — out[i] =
op(a[i] [, b[i]]) — through `nvwgmma-to-llvm-pipeline` (whose
`nvwgmma-legalize-math` rewrites what llc cannot select), assembles it with
ptxas, and writes DIR/<case>.cubin, the inputs DIR/<case>.npz and
DIR/manifest.json. `run` needs only numpy and cupy: it launches each cubin
and measures the error against the float64 reference rounded to the
output type, in units in the last place of that type (ulp; relative to
the smallest normal near zero) and absolutely, then checks it against the
case's bound (`BOUNDS`, from upstream's approximation tests and CUDA's
documented fast-intrinsic errors) and that NaN, inf and signed zero land
where the reference puts them.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np

UNARY = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
         "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
         "erf", "erfc", "cbrt"]  # fmt: skip
BINARY = ["atan2", "powf"]
FAST = ["exp", "exp2", "log", "log2", "sin", "cos", "tanh"]
TYPES = ["f32", "f16", "bf16"]

# Where each op is compared (inputs outside a domain are still run: they
# must give what the reference gives, NaN or inf included).
DOMAIN = {
    "exp": (-87, 88), "exp2": (-126, 127), "expm1": (-20, 20), "log": (1e-30, 1e30),
    "log2": (1e-30, 1e30), "log10": (1e-30, 1e30), "log1p": (-0.999, 1e6),
    "sin": (-50, 50), "cos": (-50, 50), "tan": (-1.5, 1.5), "sinh": (-20, 20),
    "cosh": (-20, 20), "tanh": (-10, 10), "asin": (-1, 1), "acos": (-1, 1),
    "atan": (-1e4, 1e4), "asinh": (-1e4, 1e4), "acosh": (1, 1e4), "atanh": (-0.999, 0.999),
    "erf": (-4, 4), "erfc": (-4, 9), "cbrt": (-1e6, 1e6), "atan2": (-100, 100),
    "powf": (0.01, 50),
}  # fmt: skip
FAST_DOMAIN = {"sin": (-math.pi, math.pi), "cos": (-math.pi, math.pi),
               "log": (1e-20, 1e20), "log2": (1e-20, 1e20)}  # fmt: skip
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan]
# powf's corners, C's pow table: (x, y) pairs.
POW_SPECIAL = np.array([(-2, 3), (-2, 0.5), (-0.0, -3), (-0.0, 3), (0.0, -1), (1, np.nan),
                        (1, np.inf), (-1, np.inf), (-1, -np.inf), (np.nan, 0), (2, np.nan),
                        (-8, 1 / 3), (np.inf, -2), (-np.inf, 3), (-np.inf, -3), (0.5, np.inf)])  # fmt: skip

# Bounds: (ulp of the output type, absolute) — an element passes if either
# holds. Accurate f32: upstream's approximations are tested to a few ulp;
# the composite expansions (sinh via exp, asinh via log and sqrt, tan via
# sin/cos, powf via exp/log) add their parts' errors. Fast f32: CUDA's
# documented __expf (2 + 1.16|x| ulp) and __logf (2^-21.41 absolute on
# [0.5, 2]), PTX's sin/cos.approx.f32 (2^-20.9 absolute on [-pi, pi]; the
# GPU measured 2^-21.25) and tanh.approx.f32 (2^-10.99 relative).
F32_ULP = {"exp": 4, "exp2": 4, "expm1": 8, "log": 4, "log2": 4, "log10": 6, "log1p": 8,
           "sin": 4, "cos": 4, "tan": 16, "sinh": 16, "cosh": 16, "tanh": 8, "asin": 8,
           "acos": 8, "atan": 4, "asinh": 16, "acosh": 16, "atanh": 16, "erf": 8, "erfc": 64,
           "cbrt": 4, "atan2": 8, "powf": 64}  # fmt: skip
FAST_BOUND = {"exp": (2 + 1.16 * 127, 0.0), "exp2": (4, 0.0), "log": (4, 2**-21.41),
              "log2": (4, 2**-22), "sin": (4, 2**-20.9), "cos": (4, 2**-20.9),
              "tanh": (2**-10.99 * 2**23, 0.0)}  # fmt: skip
# atan2 and powf are compared where their arguments stay away from the
# quadrant edges and overflow; erfc's relative error grows with its
# underflow towards 9.


def cases():
    for op in UNARY + BINARY:
        for t in TYPES:
            yield (op, t, False)
    for op in FAST:
        for t in TYPES:
            yield (op, t, True)
    for op in ("exp", "tanh", "atan2"):  # vectors: lane by lane
        for fast in (False, True) if op == "tanh" else (False,):
            yield (op, "v2f32", fast)
    yield ("fpowi", "f32", False)
    yield ("ipowi", "i32", False)


def name(op, t, fast):
    return f"{op}_{t}" + ("_afn" if fast else "")


def mlir_source(op, t, fast) -> str:
    """A kernel: out[i] = op(a[i], b[i]) for i < n."""
    fm = " fastmath<afn>" if fast else ""
    tag = t
    t = "vector<2xf32>" if t == "v2f32" else t
    b_type = "i32" if op in ("fpowi", "ipowi") else t
    if op in BINARY:
        body = f"%y = math.{op} %x, %w{fm} : {t}"
    elif op == "fpowi":
        body = f"%y = math.fpowi %x, %w : {t}, i32"
    elif op == "ipowi":
        body = "%y = math.ipowi %x, %w : i32"
    else:
        body = f"%y = math.{op} %x{fm} : {t}"
    return f"""
llvm.func @{name(op, tag, fast)}(%out: !llvm.ptr<1>, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %n: i32)
    attributes {{nvvm.kernel}} {{
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %bid = nvvm.read.ptx.sreg.ctaid.x : i32
  %dim = nvvm.read.ptx.sreg.ntid.x : i32
  %base = llvm.mul %bid, %dim : i32
  %i = llvm.add %base, %tid : i32
  %in = llvm.icmp "slt" %i, %n : i32
  llvm.cond_br %in, ^body, ^done
^body:
  %pa = llvm.getelementptr %a[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {t}
  %pb = llvm.getelementptr %b[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {b_type}
  %po = llvm.getelementptr %out[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {t}
  %x = llvm.load %pa : !llvm.ptr<1> -> {t}
  %w = llvm.load %pb : !llvm.ptr<1> -> {b_type}
  {body}
  llvm.store %y, %po : {t}, !llvm.ptr<1>
  llvm.br ^done
^done:
  llvm.return
}}
"""


def _inputs(op, t, fast, rng):
    if op == "ipowi":
        a = np.concatenate([rng.integers(-5, 6, 4000), [0, 1, -1, 2, -2, 3]]).astype(np.int32)
        b = np.concatenate([rng.integers(-3, 14, 4000), [0, -1, -2, 5, 31, 7]]).astype(np.int32)
        return a, b
    lo, hi = (FAST_DOMAIN.get(op) if fast else None) or DOMAIN.get(op, (-10, 10))
    if lo > 0:
        x = np.exp(rng.uniform(np.log(lo), np.log(hi), 8192))
    else:
        x = rng.uniform(lo, hi, 8192)
    x = np.concatenate([x, SPECIAL])
    if op == "fpowi":
        b = np.concatenate([rng.integers(-8, 9, 8192), [0, 1, -1, 2, 3, 0, 1, -3]]).astype(np.int32)
        return x.astype(np.float32), b
    y = rng.uniform(lo, hi, x.size) if op in BINARY else np.zeros_like(x)
    if op == "powf":  # half: positive bases, real exponents; half: any base, integral
        half = x.size // 2
        x = np.concatenate([np.abs(x[:half]), rng.uniform(-10, 10, x.size - half)])
        y = np.concatenate([rng.uniform(-4, 4, half), rng.integers(-6, 7, x.size - half)])
        x = np.concatenate([x, POW_SPECIAL[:, 0]])
        y = np.concatenate([y, POW_SPECIAL[:, 1]])
    return _cast(x, t), _cast(y, t)


def _cast(x, t):
    """float64 -> the storage of type t (bf16 as its uint16 bits)."""
    if t in ("f32", "v2f32"):
        return x.astype(np.float32)
    if t == "f16":
        return x.astype(np.float16)
    f = x.astype(np.float32).view(np.uint32)
    rounded = (f + 0x7FFF + ((f >> 16) & 1)) >> 16  # round to nearest even
    rounded = np.where(np.isnan(x), 0x7FC0, rounded)
    return rounded.astype(np.uint16)


def _elements(t):
    return 2 if t == "v2f32" else 1


def _as_f64(x, t):
    if t == "bf16":
        return (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return x.astype(np.float64)


def generate(out_dir: str) -> int:
    from nvwgmma import ir
    from nvwgmma.compile import compile_to_ptx
    from nvwgmma.tools import require_tool

    os.makedirs(out_dir, exist_ok=True)
    ptxas = require_tool("ptxas")
    rng = np.random.default_rng(0)
    manifest = []
    for op, t, fast in cases():
        n = name(op, t, fast)
        with ir.Context():
            ptx = compile_to_ptx(ir.Module.parse(mlir_source(op, t, fast)))
        ptx_path = os.path.join(out_dir, n + ".ptx")
        with open(ptx_path, "w") as f:
            f.write(ptx)
        subprocess.run([ptxas, "-arch=sm_90a", "-o", os.path.join(out_dir, n + ".cubin"),
                        ptx_path], check=True)  # fmt: skip
        a, b = _inputs(op, t, fast, rng)
        np.savez(os.path.join(out_dir, n + ".npz"), a=a, b=b)
        manifest.append({"name": n, "op": op, "type": t, "fast": fast})
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"{len(manifest)} kernels in {out_dir}")
    return 0


def reference(op, a, b):
    with np.errstate(all="ignore"):
        if op == "ipowi":
            out = []
            for x, e in zip(a.tolist(), b.tolist()):
                if e >= 0:
                    out.append(pow(x, e, 2**32))
                else:
                    out.append(1 if x == 1 else ((-1 if e % 2 else 1) if x == -1 else 0))
            return np.array(out, dtype=np.int64).astype(np.uint32).view(np.int32)
        fn = {"exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log,
              "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sin": np.sin,
              "cos": np.cos, "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh,
              "tanh": np.tanh, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
              "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
              "cbrt": np.cbrt, "atan2": np.arctan2, "powf": np.power,
              "fpowi": lambda x, e: np.power(x, e.astype(np.float64)),
              "erf": np.vectorize(math.erf, otypes=[float]),
              "erfc": np.vectorize(math.erfc, otypes=[float])}[op]  # fmt: skip
        return fn(a, b) if op in BINARY or op == "fpowi" else fn(a)


_FLOAT = {"f32": (np.float32, 2.0**-126, 2.0**-23), "f16": (np.float16, 2.0**-14, 2.0**-10),
          "bf16": (None, 2.0**-126, 2.0**-7)}  # fmt: skip


def compare(op, t, fast, a, b, got):
    """(report, failures) for one case."""
    if t == "i32":
        want = reference(op, a, b)
        bad = int(np.count_nonzero(want != got))
        return {"mismatches": bad}, bad
    x = _as_f64(a, t)
    w = _as_f64(b, t) if op != "fpowi" else b
    ref = reference(op, x, w)
    ref_t = _as_f64(_cast(ref, t), t)  # the best the type can hold
    y = _as_f64(got, t)
    smallest, eps = _FLOAT["f32" if t == "v2f32" else t][1:]
    ulp = np.maximum(np.abs(ref_t), smallest) * eps
    inputs_finite = np.isfinite(x) & (np.isfinite(w) if op in BINARY else True)
    finite = np.isfinite(ref_t) & inputs_finite
    err = np.where(finite, np.abs(y - ref), 0.0)
    err_ulp = np.where(finite, err / np.where(finite, ulp, 1.0), 0.0)
    if fast:
        bound_ulp, bound_abs = FAST_BOUND[op]
        if op == "exp":
            bound_ulp = 2 + 1.16 * np.abs(x)
    else:
        bound_ulp, bound_abs = F32_ULP.get(op, 8), 0.0
    if t in ("f16", "bf16"):  # computed in f32, rounded once to the narrow type
        bound_ulp = 1.0
    ok = (err_ulp <= bound_ulp) | (err <= bound_abs)
    # Where the reference is NaN or inf, or an input is, the kernel must agree.
    special = ~finite
    same = (np.isnan(ref_t) & np.isnan(y)) | (ref_t == y)
    special_bad = int(np.count_nonzero(special & ~same))
    failures = int(np.count_nonzero(~ok)) + special_bad
    report = {"max_ulp": float(err_ulp.max()), "max_abs": float(err.max()),
              "bound_ulp": float(np.max(bound_ulp)), "bound_abs": bound_abs,
              "out_of_bound": int(np.count_nonzero(~ok)), "special_mismatch": special_bad}  # fmt: skip
    if special_bad:
        i = int(np.argmax(special & ~same))
        report["special"] = {"x": float(x[i]), "got": float(y[i]), "want": float(ref_t[i])}
    if failures:
        i = int(np.argmax(np.where(ok, 0, err_ulp)))
        report["worst"] = {"x": float(x[i]), "got": float(y[i]), "want": float(ref[i])}
    return report, failures


def run(out_dir: str, result: str | None) -> int:
    import cupy as cp

    manifest = json.load(open(os.path.join(out_dir, "manifest.json")))
    rows, failed = [], 0
    for case in manifest:
        n, op, t, fast = case["name"], case["op"], case["type"], case["fast"]
        data = np.load(os.path.join(out_dir, n + ".npz"))
        a, b = data["a"], data["b"]
        kernel = cp.RawModule(path=os.path.join(out_dir, n + ".cubin")).get_function(n)
        da, db = cp.asarray(a), cp.asarray(b)
        out = cp.full(a.shape, 0x7F, dtype=a.dtype)  # poisoned
        threads = 256
        items = a.size // _elements(t)
        kernel(((items + threads - 1) // threads,), (threads,),
               (out, da, db, np.int32(items)))  # fmt: skip
        cp.cuda.Device().synchronize()
        report, bad = compare(op, t, fast, a, b, cp.asnumpy(out))
        failed += bool(bad)
        rows.append({"case": n, **report, "ok": not bad})
        print(("ok  " if not bad else "BAD ") + n, json.dumps(report))
    info = {"gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
            "driver": cp.cuda.runtime.driverGetVersion()}  # fmt: skip
    print(f"{len(rows) - failed} / {len(rows)} cases within their bounds on {info['gpu']}")
    if result:
        with open(result, "w") as f:
            json.dump({"info": info, "rows": rows}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("generate", "run"):
        sys.exit(__doc__)
    if sys.argv[1] == "generate":
        sys.exit(generate(sys.argv[2]))
    sys.exit(run(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None))
