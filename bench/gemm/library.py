"""The GEMM library on the GPU: `matmul` against a float64 reference on
ragged, batched, every-layout, fused and fp8/f32-output problems; its
input errors; and its speed (the default kernel against the pre-split
kernel and torch.matmul, ragged M against the neighbouring tile multiple,
fused bias + GELU against torch) -- all in one process.

    # here (nvwgmma built): the PTX every case needs, plus a baseline kernel
    python bench/gemm/library.py generate .device/lib [--baseline bench/gemm/baseline]
    # on the GPU (torch, cuda-python; no nvwgmma build)
    python bench/gemm/library.py run .device/lib
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# (batch, M, N, K, dtype, out_dtype, a_major, b_major, fusion)
# fusion names: bias, relu, gelu, gelu_tanh, silu, residual, beta, alpha, scale
CASES = [
    (1, 1000, 4096, 4096, "bf16", "bf16", "K", "K", ()),
    (1, 4097, 4099, 4104, "bf16", "bf16", "K", "K", ()),
    (1, 1, 4096, 4096, "bf16", "bf16", "K", "K", ()),
    (1, 7, 7, 64, "bf16", "bf16", "K", "K", ()),
    (1, 300, 200, 72, "bf16", "bf16", "K", "K", ()),
    (16, 1024, 1024, 1024, "bf16", "bf16", "K", "K", ()),
    (5, 333, 520, 136, "bf16", "bf16", "K", "K", ()),
    (3, 1000, 1032, 264, "bf16", "bf16", "M", "N", ()),
    *[(1, 1000, 1000, 1000, "bf16", "bf16", a, b, ()) for a in "KM" for b in "KN"],
    *[(1, 2048, 2048, 2048, "bf16", "bf16", a, b, ()) for a in "KM" for b in "KN"],
    (1, 2048, 2048, 1024, "f16", "f16", "K", "N", ()),
    (1, 1000, 1000, 1000, "bf16", "f32", "K", "K", ()),
    (1, 1000, 1001, 1000, "bf16", "f32", "K", "K", ()),
    (1, 1000, 1000, 1000, "f16", "f32", "M", "K", ()),
    (1, 1000, 4096, 4096, "e4m3", "bf16", "K", "K", ()),
    (1, 1000, 1000, 1024, "bf16", "e4m3", "K", "K", ("scale",)),
    (1, 1000, 1000, 1024, "e4m3", "e4m3", "K", "K", ("scale",)),
    (1, 1000, 1000, 1000, "bf16", "e5m2", "K", "K", ()),
    *[
        (1, 1000, 1024, 1000, "bf16", "bf16", "K", "K", (op,))
        for op in ("bias", "relu", "gelu", "gelu_tanh", "silu", "residual", "alpha")
    ],  # fmt: skip
    (1, 1000, 1024, 1000, "bf16", "bf16", "K", "K", ("alpha", "residual", "beta")),
    (1, 1000, 1024, 1000, "bf16", "bf16", "K", "K", ("bias", "gelu")),
    (1, 1000, 1024, 1000, "bf16", "bf16", "K", "K", ("bias", "gelu_tanh", "residual")),
    (1, 1000, 1001, 1000, "bf16", "bf16", "K", "K", ("bias", "silu", "residual")),
    (1, 1000, 1024, 1000, "bf16", "f32", "K", "K", ("alpha", "bias", "gelu", "residual", "beta")),
    (2, 1000, 1024, 1000, "bf16", "bf16", "K", "N", ("bias", "relu", "residual")),
    # The 128 x 192 tile (select_config's rule 2: its tiles fill 0.9 to 1
    # wave): every layout, fp8, a batch, a ragged N tile, the register
    # epilogue (N = 5801: rows not 16-byte aligned) and a fused chain.
    *[(1, 512, 6144, 4096, "bf16", "bf16", a, b, ()) for a in "KM" for b in "KN"],
    (1, 512, 6144, 4096, "e4m3", "bf16", "K", "K", ()),
    (2, 256, 6144, 1024, "bf16", "bf16", "K", "K", ()),
    (1, 500, 5800, 1000, "bf16", "f32", "K", "K", ("alpha", "bias", "gelu", "residual", "beta")),
    (1, 500, 5801, 1000, "bf16", "bf16", "M", "N", ("bias", "silu")),
    # The ping-pong 64 x 256 tile (the cost model's pick for a ragged M of
    # 777 and at M = 64): every layout, fp8, f32 out with a fused chain.
    *[(1, 777, 5120, 1024, "bf16", "bf16", a, b, ()) for a in "KM" for b in "KN"],
    (1, 777, 5120, 1024, "e4m3", "bf16", "K", "K", ()),
    (1, 777, 5120, 1000, "bf16", "f32", "K", "K", ("alpha", "bias", "gelu", "residual", "beta")),
    (1, 64, 57344, 1024, "bf16", "bf16", "K", "K", ()),
    (1, 64, 57344, 1024, "e4m3", "bf16", "K", "K", ()),
    # Rule 4's 64 x 64 tiles (at most a wave of them), whole and split-K:
    # every layout, fp8, f32 out with a fused chain, a ragged N.
    *[(1, 128, 4096, 4096, "bf16", "bf16", a, b, ()) for a in "KM" for b in "KN"],
    (1, 128, 2048, 4096, "e4m3", "bf16", "K", "K", ()),
    (1, 100, 2000, 3000, "bf16", "f32", "K", "K", ("alpha", "bias", "gelu", "residual", "beta")),
    (1, 64, 1000, 1000, "bf16", "bf16", "M", "N", ("bias", "silu")),
    # Rule 3b's widths (128 x 128 tiles under a wave): 80 on both A
    # layouts, fp8 in, fp8 out and a ragged N (registers epilogue), f32
    # out, a batch; 96 and 112 on an M-major A, 112 on fp8. With a chain
    # (the rows after them) rule 3's two-consumer 128 x 128 instead.
    *[(1, 256, 5120, 2048, "bf16", "bf16", a, "K", ()) for a in "KM"],
    (1, 256, 5120, 2048, "e4m3", "bf16", "K", "K", ()),
    (1, 256, 5120, 1024, "bf16", "e4m3", "K", "K", ()),
    (1, 256, 5121, 1000, "bf16", "bf16", "K", "K", ()),
    (1, 256, 5120, 1000, "bf16", "f32", "K", "K", ()),
    (2, 128, 5120, 1024, "bf16", "bf16", "K", "K", ()),
    (1, 512, 3072, 4096, "bf16", "bf16", "M", "K", ()),
    (1, 1024, 1792, 2048, "bf16", "bf16", "M", "K", ()),
    (1, 1024, 1792, 2048, "e4m3", "bf16", "K", "K", ()),
    (1, 256, 5120, 1024, "bf16", "e4m3", "K", "K", ("scale",)),
    (1, 256, 5120, 1000, "bf16", "f32", "K", "K", ("alpha", "bias", "gelu", "residual", "beta")),
    (1, 256, 5121, 1000, "bf16", "bf16", "K", "K", ("bias", "silu")),
    # Rule 0's 128 x 16 tile (two consumers of 64 weight rows, M <= 16
    # tokens, C stored transposed): whole and split-K, tokens short of the
    # tile, a ragged N (weight rows), fp8 in, fp8 out, f32 out with a fused
    # chain, a batch with an N-major B, f16.
    (1, 16, 4096, 4096, "bf16", "bf16", "K", "K", ()),
    (1, 5, 5120, 13824, "e4m3", "bf16", "K", "K", ()),
    (1, 13, 4099, 1000, "bf16", "f32", "K", "K", ("alpha", "bias", "gelu", "residual", "beta")),
    (1, 9, 6144, 4096, "bf16", "e4m3", "K", "K", ("scale",)),
    (3, 4, 2048, 1024, "bf16", "bf16", "K", "N", ("bias", "silu")),
    (1, 16, 1000, 1000, "f16", "f16", "K", "K", ()),
    (1, 2, 28672, 2048, "bf16", "bf16", "K", "K", ()),
    # Rule 0's second case, 128 x 64 transposed (33-64 tokens where the cost
    # model picks a 128-row tile): tokens short of the tile, fp8 in, fp8
    # out, f32 out with a fused chain, a ragged N.
    (1, 64, 28672, 2048, "bf16", "bf16", "K", "K", ()),
    (1, 40, 26624, 4096, "e4m3", "bf16", "K", "K", ()),
    (1, 64, 28672, 1024, "bf16", "e4m3", "K", "K", ("scale",)),
    (1, 48, 28679, 1000, "bf16", "f32", "K", "K", ("alpha", "bias", "gelu", "residual", "beta")),
    # Rule 0's third case, 64 x 80 transposed (65-80 tokens): whole and
    # split-K, fp8 in, fp8 out, f32 out with a fused chain, a ragged N, a
    # batch with an N-major B.
    (1, 77, 5120, 3072, "bf16", "bf16", "K", "K", ()),
    (1, 65, 28672, 2048, "e4m3", "bf16", "K", "K", ()),
    (1, 80, 6144, 1024, "bf16", "e4m3", "K", "K", ("scale",)),
    (1, 70, 4099, 1000, "bf16", "f32", "K", "K", ("alpha", "bias", "gelu", "residual", "beta")),
    (2, 77, 2048, 1024, "bf16", "bf16", "K", "N", ("bias", "silu")),
    # Its 64 x 96 tile (81-96 tokens); rule 3c's transposed 128 x 160 and
    # 128 x 192 (ragged M past 128, C through stmatrix.trans and TMA).
    (1, 90, 5120, 3072, "bf16", "bf16", "K", "K", ()),
    (1, 96, 28672, 2048, "e4m3", "bf16", "K", "K", ()),
    (1, 300, 16384, 4096, "bf16", "bf16", "K", "K", ()),
    (1, 530, 27648, 1024, "f16", "f16", "K", "K", ()),
    # rule 3c's other widths (144 ... 240 tokens) and a batch of them
    (1, 129, 16384, 1024, "bf16", "bf16", "K", "K", ()),
    (1, 161, 16384, 1024, "f16", "f16", "K", "K", ()),
    (1, 193, 16384, 1024, "bf16", "bf16", "K", "K", ()),
    (1, 209, 16384, 1024, "bf16", "bf16", "K", "K", ()),
    (1, 225, 16384, 1024, "bf16", "bf16", "K", "K", ()),
    (2, 300, 8192, 1024, "bf16", "bf16", "K", "K", ()),
    (2, 8, 8192, 1024, "bf16", "bf16", "K", "K", ()),  # decode's 128 x 16, batched
    # Rule 3d's transposed 256-row tiles at 144 (bf16, f16), 160, 176 and
    # 192 tokens, a batch and a ragged N; rule 0's 64 x 16 where 128-row
    # units leave the last wave emptier (bf16, f16).
    (1, 777, 5120, 2048, "bf16", "bf16", "K", "K", ()),
    (1, 1000, 14336, 1024, "f16", "f16", "K", "K", ()),
    (1, 300, 27648, 1024, "bf16", "bf16", "K", "K", ()),
    (1, 1300, 4096, 4096, "bf16", "bf16", "K", "K", ()),
    (1, 2048, 3072, 1024, "bf16", "bf16", "K", "K", ()),
    (2, 777, 2560, 1024, "bf16", "bf16", "K", "K", ()),
    (1, 777, 5128, 1024, "bf16", "bf16", "K", "K", ()),
    (1, 16, 38016, 1024, "bf16", "bf16", "K", "K", ()),
    (1, 3, 57344, 1024, "f16", "f16", "K", "K", ()),
]
# Split-K and stream-K (a 10th entry: the GemmConfig fields changed from
# the problem's own), each also run twice and compared bit for bit.
SPLIT = {"scheduler": "split_k", "splits": 3}
STREAM = {"scheduler": "stream_k"}
NARROW = {"tile_n": 128}
CASES += [
    (1, 1000, 1000, 4104, "bf16", "bf16", "K", "K", (), SPLIT),
    (1, 7, 7, 64, "bf16", "bf16", "K", "K", (), {**SPLIT, "splits": 4}),  # empty parts
    (3, 333, 520, 2000, "bf16", "bf16", "M", "N", ("bias", "gelu", "residual"),
     {**SPLIT, "splits": 4, **NARROW}),
    (1, 1000, 1001, 3000, "bf16", "f32", "K", "K", ("alpha", "bias"), {**SPLIT, "splits": 2}),
    (1, 64, 128, 8192, "e4m3", "bf16", "K", "K", (), {**SPLIT, "splits": 8, **NARROW}),
    (1, 1000, 4096, 4096, "bf16", "bf16", "K", "K", (), STREAM),
    (1, 129, 4096, 14336, "bf16", "bf16", "K", "K", (), {**STREAM, **NARROW}),
    (2, 333, 520, 2000, "bf16", "bf16", "M", "N", ("bias", "relu"), {**STREAM, **NARROW}),
    (1, 1000, 1000, 1000, "f16", "f32", "M", "K", (), STREAM),
    (1, 1000, 1024, 1000, "bf16", "f32", "K", "K", ("alpha", "bias", "gelu", "residual", "beta"),
     {**STREAM, **NARROW}),
    # Tiles 80, 112 and 144 wide (C staged in 32-byte swizzled blocks):
    # rule 3's consumer at 80 and 112, two consumers at 144; fp8, f32 out
    # with a fused chain, the registers epilogue, split-K.
    (1, 1024, 1280, 8192, "bf16", "bf16", "K", "K", (), {"tile_n": 80}),
    (1, 1000, 1280, 1000, "bf16", "f32", "K", "K", ("alpha", "bias", "gelu", "residual", "beta"),
     {"tile_n": 80}),
    (1, 1024, 1280, 2048, "e4m3", "bf16", "K", "K", (), {"tile_n": 112}),
    (1, 1000, 1001, 1000, "bf16", "bf16", "M", "K", ("bias", "silu"), {"tile_n": 112}),
    (1, 4096, 4096, 1024, "bf16", "bf16", "K", "K", (), {"tile_n": 144}),
    (1, 1000, 1000, 4104, "bf16", "bf16", "K", "K", (), {**SPLIT, "tile_n": 80}),
]  # fmt: skip
SPEED = [(4096, 4096, 4096), (8192, 8192, 8192)]
RAGGED = [(1000, 1024), (3000, 3072)]  # (ragged M, neighbouring tile multiple), N = K = 4096
FUSED = [(2048, 14336, 4096), (8192, 14336, 4096)]


def _problem(case):
    from nvwgmma.kernel.gemm.fusion import ACTIVATIONS
    from nvwgmma.kernel.gemm.launch import Problem, fusion_chain

    batch, m, n, k, dtype, out, a_major, b_major, names = case[:9]
    loaded = "f32" if out == "f32" else "bf16"  # the bias and residual check_cases makes
    chain = fusion_chain(
        bias=loaded if "bias" in names else None,
        activation=next((a for a in ACTIVATIONS if a in names), None),
        residual=loaded if "residual" in names else None,
        beta="beta" in names,
        alpha="alpha" in names,
        scale="scale" in names,
    )
    return Problem.of(m, n, k, batch, dtype, out, a_major, b_major, chain)


def _config(case):
    """The GemmConfig a case runs: the problem's own, or with case[9]'s
    changes (tile, scheduler) and as many stages as then fit."""
    from dataclasses import replace

    from nvwgmma.kernel.gemm.launch import problem_config
    from nvwgmma.kernel.gemm.selector import with_tile

    config = problem_config(_problem(case))
    if len(case) < 10:
        return config
    changes = {"splits": 1, **case[9]}  # a scheduler named without splits: none
    return with_tile(replace(config, **changes), changes.pop("tile_n", config.tile_n))


def generate(out_dir: str, baseline: str | None) -> None:
    from nvwgmma.kernel.gemm import GemmConfig
    from nvwgmma.kernel.gemm.launch import precompile, write_kernel

    problems = [_problem(c) for c in CASES if len(c) == 9]
    for case in CASES:
        if len(case) == 10:
            write_kernel(os.path.join(out_dir, "ptx"), _config(case))
    # The speed rows' kernels at their own shapes (the rule picks by shape):
    # the defaults, ragged M and its neighbour, the fused Linear and README's.
    plain = [*SPEED, *((m, 4096, 4096) for pair in RAGGED for m in pair)]
    fused = [*FUSED, (1000, 14336, 4096)]
    problems += [_problem((1, m, n, k, "bf16", "bf16", "K", "K", ())) for m, n, k in plain]
    problems += [_problem((1, m, n, k, "bf16", "bf16", "K", "K", ("bias", "gelu")))
                 for m, n, k in fused]  # fmt: skip
    written = precompile(os.path.join(out_dir, "ptx"), problems)
    print(len(written), "kernels")
    if baseline:  # the pre-split generator's default kernel (PTX + JSON)
        os.makedirs(os.path.join(out_dir, "baseline"), exist_ok=True)
        name = GemmConfig().name
        for ext in (".ptx", ".json"):
            shutil.copy(os.path.join(baseline, name + ext), os.path.join(out_dir, "baseline"))


# ---------------------------------------------------------------------------- on the GPU
def _operand(batch, rows, cols, dtype, row_major, gen):
    """A (batch x rows x cols) operand, row- or column-major, 2-D when batch
    is 1; a contiguous dimension TMA cannot stride over (not a multiple of
    16 bytes) is padded, the operand a view of the first elements."""
    import torch
    from nvwgmma.kernel.gemm.launch import torch_dtype

    t = torch_dtype(dtype)
    outer, inner = (rows, cols) if row_major else (cols, rows)
    unit = 16 // t.itemsize
    padded = -(-inner // unit) * unit
    x = torch.randn((batch, outer, padded), device="cuda", generator=gen).to(t)[:, :, :inner]
    x = x if row_major else x.transpose(1, 2)
    return x[0] if batch == 1 else x


def _reference(case, a, b, extras):
    import torch

    _, _, _, _, _, out, _, _, names = case[:9]
    x = torch.matmul(a.double(), b.double())
    if "alpha" in names:
        x = x * extras["alpha"]
    if "bias" in names:
        x = x + extras["bias"].double()
    f = torch.nn.functional
    activations = {
        "relu": f.relu,
        "gelu": f.gelu,
        "gelu_tanh": lambda v: f.gelu(v, approximate="tanh"),
        "silu": f.silu,
    }
    for act, fn in activations.items():
        if act in names:
            x = fn(x)
    if "residual" in names:
        x = x + extras["residual"].double() * (extras["beta"] if "beta" in names else 1.0)
    if "scale" in names:
        x = x * extras["scale"]
    return x


def _bound(case) -> float:
    out, k = case[5], case[3]
    return {"bf16": 8e-3, "f16": 2e-3, "f32": 2e-5, "e4m3": 0.05, "e5m2": 0.1}[out] * (
        1.0 if out != "f32" else max(1.0, (k / 4096) ** 0.5)
    )


def check_cases(rows, only=None):
    """Every case (those whose configuration's name `only` finds, a regex)
    against float64; the number that failed."""
    import torch
    from nvwgmma.kernel.gemm import matmul
    from nvwgmma.kernel.gemm.fusion import ACTIVATIONS
    from run import watchdog

    failed = 0
    for index, case in enumerate(CASES):
        picked = _config(case)
        if only and not re.search(only, picked.name):
            continue
        batch, m, n, k, dtype, out, a_major, b_major, names = case[:9]
        gen = torch.Generator(device="cuda").manual_seed(index)
        a = _operand(batch, m, k, dtype, a_major == "K", gen)
        b = _operand(batch, k, n, dtype, b_major == "N", gen)
        extras, kwargs = {}, {}
        shape = (batch, m, n) if batch > 1 else (m, n)
        res_t = torch.float32 if out == "f32" else torch.bfloat16
        if "bias" in names:
            extras["bias"] = kwargs["bias"] = torch.randn(n, device="cuda", generator=gen).to(res_t)
        if "residual" in names:
            extras["residual"] = kwargs["residual"] = torch.randn(
                shape, device="cuda", generator=gen
            ).to(res_t)
        if "beta" in names:
            extras["beta"] = kwargs["beta"] = 0.5
        if "alpha" in names:
            extras["alpha"] = kwargs["alpha"] = 1.5
        if "scale" in names:
            extras["scale"] = kwargs["scale"] = 1.0 / (k**0.5)
        for act in ACTIVATIONS:
            if act in names:
                kwargs["activation"] = act
        config = picked if len(case) == 10 else None
        with watchdog(f"case {case} ({picked.name})"):
            got = matmul(a, b, out_dtype=out, config=config, **kwargs)
            torch.cuda.synchronize()
        ref = _reference(case, a, b, extras)
        err = float(torch.linalg.norm(got.double() - ref) / torch.linalg.norm(ref))
        ok = bool(torch.isfinite(got.double()).all()) and err <= _bound(case)
        same = None
        if config is not None:  # the fix-up adds in a fixed order: bit-identical reruns
            again = [matmul(a, b, out_dtype=out, config=config, **kwargs) for _ in range(3)]
            torch.cuda.synchronize()
            same = all(torch.equal(got, x) for x in again)
            ok = ok and same
        failed += not ok
        rows.append({"case": [*case[:9], config and config.name], "error": err,
                     "bound": _bound(case), "ok": ok, "deterministic": same})  # fmt: skip
        print(
            f"{'ok ' if ok else 'BAD'} {case[:9]} {config.name if config else ''} rel err "
            f"{err:.2e} (bound {_bound(case):.0e}){'' if same is None else f' same={same}'}",
            flush=True,
        )
    return failed


def check_errors(rows):
    """Each bad call raises ValueError/TypeError before any launch."""
    import torch
    from nvwgmma.kernel.gemm import matmul

    bf = dict(device="cuda", dtype=torch.bfloat16)
    a, b = torch.randn(64, 64, **bf), torch.randn(64, 64, **bf)
    bad = {
        "wrong dtype": lambda: matmul(a.float(), b.float()),
        "mixed dtypes": lambda: matmul(a, b.half()),
        "CPU tensor": lambda: matmul(a.cpu(), b),
        "mismatched shapes": lambda: matmul(a, torch.randn(32, 64, **bf)),
        "batch mismatch": lambda: matmul(
            torch.randn(2, 64, 64, **bf), torch.randn(3, 64, 64, **bf)
        ),
        "non-contiguous": lambda: matmul(a[:, ::2], b[:32]),
        "misaligned stride": lambda: matmul(torch.randn(64, 7, **bf), torch.randn(7, 64, **bf)),
        "misaligned address": lambda: matmul(
            torch.randn(64 * 64 + 8, **bf)[1:4097].view(64, 64), b
        ),
        "empty dimension": lambda: matmul(torch.randn(0, 64, **bf), b),
        "fp8 MN-major": lambda: matmul(a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)),
        "bad bias": lambda: matmul(a, b, bias=torch.randn(63, **bf)),
        "bad residual": lambda: matmul(a, b, residual=torch.randn(64, 32, **bf)),
        "bad activation": lambda: matmul(a, b, activation="tanh"),
        "bad out": lambda: matmul(a, b, out=torch.empty(64, 32, **bf)),
        "out dtype clash": lambda: matmul(a, b, out=torch.empty(64, 64, **bf), out_dtype="f32"),
    }
    failed = 0
    for name, call in bad.items():
        try:
            call()
            torch.cuda.synchronize()
            message, ok = "no error", False
        except (ValueError, TypeError) as error:
            message, ok = str(error), True
        failed += not ok
        rows.append({"error_case": name, "message": message, "ok": ok})
        print(f"{'ok ' if ok else 'BAD'} {name}: {message}", flush=True)
    return failed


def speed(out_dir, rows):
    import torch
    import torch.nn.functional as F
    from nvwgmma.kernel import runtime
    from nvwgmma.kernel.gemm import matmul
    from nvwgmma.kernel.gemm.launch import prepare
    from run import _interleaved

    base_dir = os.path.join(out_dir, "baseline")
    baseline = None
    if os.path.isdir(base_dir):
        meta = json.load(
            open(
                next(os.path.join(base_dir, f) for f in os.listdir(base_dir) if f.endswith(".json"))
            )
        )
        kernel = runtime.Kernel(
            open(os.path.join(base_dir, meta["name"] + ".ptx")).read(),
            "gemm",
            dynamic_smem=meta["dynamic_smem"],
        )
        baseline = (kernel, meta)

    def old(a, w, c):
        """The pre-split kernel (2-D maps, tile-multiple shapes only)."""
        from nvwgmma.kernel.gemm import grid_size

        kernel, meta = baseline
        m, k = a.shape
        n = w.shape[0]
        maps = []
        for t, rows, cols, name in ((a, m, k, "A"), (w, n, k, "B"), (c, m, n, "C")):
            box = meta["boxes"][name]
            maps.append(
                runtime.tensor_map(t.data_ptr(), box["data_type"], sizes=(cols, rows),
                                   strides=(cols * 2,), box=box["box"], swizzle=box["swizzle"])
            )  # fmt: skip
        grid = grid_size(meta, m, n, k, runtime.device_attribute("MULTIPROCESSOR_COUNT"))
        args = [("u64", maps[0]), ("u64", maps[1]), ("u64", c.data_ptr()), ("u64", maps[2]),
                ("i32", m), ("i32", n), ("i32", k)]  # fmt: skip
        stream = torch.cuda.current_stream().cuda_stream
        return kernel.launcher(
            grid=(grid, 1, 1), block=tuple(meta["block"]), args=args, stream=stream
        )

    def pair(label, impls, flop, base="torch"):
        times, per = _interleaved(impls)
        row = {
            "row": label,
            "ms": times,
            "tflops": {k: flop / (t * 1e-3) / 1e12 for k, t in times.items()},
        }
        for name in impls:
            if name != base:
                row[f"ratio {name} / {base}"] = statistics.median(
                    t / o for o, t in zip(per[name], per[base])
                )
        rows.append(row)
        print(label, {k: round(v, 1) for k, v in row["tflops"].items()},
              {k: round(v, 3) for k, v in row.items() if k.startswith("ratio")}, flush=True)  # fmt: skip

    gen = torch.Generator(device="cuda").manual_seed(0)

    def randn(*shape):
        return torch.randn(*shape, device="cuda", generator=gen).bfloat16()

    def default_row(m, n, k):
        a, w = randn(m, k), randn(n, k)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        launch, _ = prepare(a, w.T, out=c)
        impls = {
            "torch": lambda: torch.matmul(a, w.T),
            "nvwgmma": lambda: matmul(a, w.T, out=c),
            "nvwgmma prepared": launch,
        }
        if baseline:
            c_old = torch.empty_like(c)
            impls["pre-split"] = old(a, w, c_old)
            impls["pre-split"]()
            diff = float((c_old.float() - matmul(a, w.T).float()).abs().max())
            print("pre-split max diff", diff)
        pair(f"default {m}x{n}x{k}", impls, 2.0 * m * n * k)
        if baseline:
            pair(f"default {m}x{n}x{k} vs pre-split", impls, 2.0 * m * n * k, base="pre-split")

    def ragged_row(ragged, whole):
        impls, launches = {}, {}
        for m in (ragged, whole):
            a, w = randn(m, 4096), randn(4096, 4096)
            c = torch.empty(m, 4096, device="cuda", dtype=torch.bfloat16)
            launches[m], _ = prepare(a, w.T, out=c)
            impls[f"nvwgmma M={m}"] = launches[m]
            impls[f"torch M={m}"] = lambda a=a, w=w: torch.matmul(a, w.T)
        times, per = _interleaved(impls)
        flops = {name: 2.0 * int(name.split("=")[1]) * 4096 * 4096 for name in times}
        row = {
            "row": f"ragged M {ragged} vs {whole}",
            "ms": times,
            "tflops": {name: flops[name] / (t * 1e-3) / 1e12 for name, t in times.items()},
        }
        ours = [f"nvwgmma M={m}" for m in (ragged, whole)]
        row["tflops ratio ragged / whole"] = row["tflops"][ours[0]] / row["tflops"][ours[1]]
        row["time ratio ragged / whole"] = times[ours[0]] / times[ours[1]]
        row["ratio to torch (ragged)"] = statistics.median(
            t / o for o, t in zip(per[ours[0]], per[f"torch M={ragged}"])
        )
        row["ratio to torch (whole)"] = statistics.median(
            t / o for o, t in zip(per[ours[1]], per[f"torch M={whole}"])
        )
        rows.append(row)
        print(row["row"], {k: round(v, 1) for k, v in row["tflops"].items()},
              {k: round(v, 3) for k, v in row.items() if "ratio" in k}, flush=True)  # fmt: skip

    def fused_row(m, n, k):
        x, w, bias = randn(m, k), randn(n, k), randn(n)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        got = matmul(x, w.T, bias=bias, activation="gelu")
        ref = F.gelu(torch.matmul(x.double(), w.double().T) + bias.double())
        err = float(torch.linalg.norm(got.double() - ref) / torch.linalg.norm(ref))
        impls = {
            "torch": lambda: F.gelu(torch.matmul(x, w.T) + bias),
            "torch addmm": lambda: F.gelu(torch.addmm(bias, x, w.T)),
            "nvwgmma": lambda: matmul(x, w.T, bias=bias, activation="gelu", out=c),
        }
        pair(f"bias+gelu {m}x{n}x{k} (err {err:.1e})", impls, 2.0 * m * n * k)
        pair(f"bias+gelu {m}x{n}x{k}", impls, 2.0 * m * n * k, base="torch addmm")

    for shape in SPEED:
        default_row(*shape)
    for shapes in RAGGED:
        ragged_row(*shapes)
    for shape in FUSED:
        fused_row(*shape)


def readme_block():
    """README's GEMM example (the python block that calls matmul)."""
    import re

    text = open(os.path.join(HERE, "..", "..", "README.md")).read()
    (code,) = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "matmul(" in b]
    return code


def check_readme(rows):
    import torch
    import torch.nn.functional as F

    namespace = {}
    exec(compile(readme_block(), "README.md", "exec"), namespace)
    x, w, bias, y = (namespace[k] for k in ("x", "w", "bias", "y"))
    ref = F.gelu(torch.matmul(x.double(), w.double().T) + bias.double())
    err = float(torch.linalg.norm(y.double() - ref) / torch.linalg.norm(ref))
    ok = err <= 8e-3
    rows.append({"readme_example": "matmul(x, w.T, bias=bias, activation='gelu')", "error": err})
    print(f"{'ok ' if ok else 'BAD'} README example rel err {err:.2e}", flush=True)
    return int(not ok)


def run(out_dir: str, only: str | None = None) -> int:
    import torch
    from run import _gpu_info, failures, write_results

    # The device has no nvwgmma build: the checkout's pure-Python runtime.
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    os.environ.setdefault("NVWGMMA_PTX_DIR", os.path.join(out_dir, "ptx"))
    os.environ.setdefault("NVWGMMA_CACHE_DIR", os.path.join(out_dir, "cache"))
    torch.backends.cuda.matmul.allow_tf32 = False
    info = _gpu_info()
    print(info, flush=True)
    rows = []
    failed = check_cases(rows, only) + check_errors(rows) + check_readme(rows)
    if not only:
        speed(out_dir, rows)
    write_results(out_dir, "library-results.json", {"info": info, "rows": rows})
    return failures(failed)


def main(argv=None) -> int:
    from run import mode_parser

    parser = mode_parser(__doc__)
    parser.add_argument("--baseline", help="directory with the pre-split default kernel")
    parser.add_argument(
        "--only", help="the cases whose configuration this regex finds, no speed rows (run)"
    )
    args = parser.parse_args(argv)
    if args.mode == "generate":
        generate(args.dir, args.baseline)
        return 0
    return run(args.dir, args.only)


if __name__ == "__main__":
    sys.exit(main())
