"""Triton and Gluon kernels compiled for sm_90 (no GPU needed): the
LLVM-dialect MLIR Triton hands to LLVM translation, for the checker's
front-end corpus.

Run with a Python that has Triton (PyPI `triton`; each release into its own
directory), not in CI:
    python test/frontends/triton/generate.py test/frontends/triton-3.9
The kernels are written for nvwgmma's corpus (Apache-2.0 WITH
LLVM-exception, as the project) after the structure of Triton's public
tutorials (matmul, persistent matmul, fused attention); the IR is Triton's
compiler output. A kernel the installed release cannot compile is skipped
and said so.
"""

from __future__ import annotations

import gzip
import os
import pathlib
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def tma_matmul(a_ptr, b_ptr, c_ptr, M, N, K,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):  # fmt: skip
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=4):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))


@triton.jit
def pointer_matmul(a_ptr, b_ptr, c_ptr, M, N, K,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):  # fmt: skip
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, num_stages=3):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def fp8_matmul(a_ptr, b_ptr, c_ptr, M, N, K,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):  # fmt: skip
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BLOCK_N, BLOCK_K])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=3):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def batched_matmul(a_ptr, b_ptr, c_ptr, M, N, K,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):  # fmt: skip
    batch = tl.program_id(2)
    a_desc = tl.make_tensor_descriptor(a_ptr, [8, M, K], [M * K, K, 1], [1, BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [8, N, K], [N * K, K, 1], [1, BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, [8, M, N], [M * N, N, 1], [1, BLOCK_M, BLOCK_N])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=3):
        a = a_desc.load([batch, pid_m * BLOCK_M, k * BLOCK_K]).reshape(BLOCK_M, BLOCK_K)
        b = b_desc.load([batch, pid_n * BLOCK_N, k * BLOCK_K]).reshape(BLOCK_N, BLOCK_K)
        acc = tl.dot(a, b.T, acc)
    out = acc.to(tl.float16).reshape(1, BLOCK_M, BLOCK_N)
    c_desc.store([batch, pid_m * BLOCK_M, pid_n * BLOCK_N], out)


@triton.jit
def persistent_matmul(a_ptr, b_ptr, c_ptr, M, N, K,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):  # fmt: skip
    # After the persistent matmul tutorial: one program per SM walks tiles,
    # the K loop pipelined through TMA.
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles = tl.cdiv(M, BLOCK_M) * tiles_n
    for tile in tl.range(tl.program_id(0), tiles, tl.num_programs(0), flatten=True):
        pid_m = tile // tiles_n
        pid_n = tile % tiles_n
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=3):
            a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
            b = b_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))


@triton.jit
def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, scale,
                  HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  CAUSAL: tl.constexpr):  # fmt: skip
    # One (batch x head) slice of FlashAttention's forward pass, after the
    # fused-attention tutorial: TMA descriptors, online softmax in exp2, a
    # pipelined loop over K/V blocks (to the diagonal when causal).
    start_m = tl.program_id(0)
    q_desc = tl.make_tensor_descriptor(
        q_ptr, [seq_len, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_M, HEAD_DIM]
    )
    k_desc = tl.make_tensor_descriptor(
        k_ptr, [seq_len, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM]
    )
    v_desc = tl.make_tensor_descriptor(
        v_ptr, [seq_len, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM]
    )
    o_desc = tl.make_tensor_descriptor(
        o_ptr, [seq_len, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_M, HEAD_DIM]
    )
    q = q_desc.load([start_m * BLOCK_M, 0])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = scale * 1.44269504
    hi = (start_m + 1) * BLOCK_M if CAUSAL else seq_len
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    for start_n in tl.range(0, hi, BLOCK_N, num_stages=2):
        k = k_desc.load([start_n, 0])
        qk = tl.dot(q, k.T) * qk_scale
        if CAUSAL:
            offs_n = start_n + tl.arange(0, BLOCK_N)
            qk = tl.where(offs_m[:, None] >= offs_n[None, :], qk, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = v_desc.load([start_n, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    o_desc.store([start_m * BLOCK_M, 0], acc.to(tl.float16))


def strip_locations(text: str) -> str:
    """Drops every ` loc(...)` and the #loc alias lines."""
    out, i = [], 0
    while True:
        j = text.find(" loc(", i)
        if j < 0:
            out.append(text[i:])
            break
        out.append(text[i:j])
        depth, k = 0, j + 4
        while k < len(text):
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            k += 1
            if depth == 0:
                break
        i = k
    return "\n".join(line for line in "".join(out).splitlines() if not line.startswith("#loc"))


def llvm_dialect_of(source, options=None) -> str:
    """The MLIR module make_llir translates, captured at translation."""
    from triton._C.libtriton import llvm

    captured = []
    original = llvm.to_module

    def capture(module, context):
        captured.append(str(module))
        return original(module, context)

    llvm.to_module = capture
    try:
        triton.compile(source, target=GPUTarget("cuda", 90, 32), options=options or {})
    finally:
        llvm.to_module = original
    return captured[-1]


def gluon_sources() -> list:
    """The Gluon kernels, where this release has the Gluon they are written in."""
    try:
        sys.path.insert(0, str(pathlib.Path(__file__).parent))
        import gluon_kernels  # noqa: PLC0415

        return gluon_kernels.kernels()
    except (ImportError, AttributeError, TypeError) as e:
        print(f"skipped Gluon: {type(e).__name__}: {e}")
        return []


def sources() -> list:
    """(name, source, options) of every kernel this release can build."""
    fp16 = {
        "a_ptr": "*fp16",
        "b_ptr": "*fp16",
        "c_ptr": "*fp16",
        "M": "i32",
        "N": "i32",
        "K": "i32",
    }
    fp8 = {**fp16, "a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv"}
    blocks = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}
    attention = {
        "q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16",
        "seq_len": "i32", "scale": "fp32",
    }  # fmt: skip
    head = {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64}
    kernels = (
        ("triton_tma_matmul", tma_matmul, fp16, blocks, None),
        ("triton_pointer_matmul", pointer_matmul, fp16, blocks, None),
        ("triton_fp8_matmul", fp8_matmul, fp8, {**blocks, "BLOCK_K": 128}, None),
        ("triton_batched_matmul", batched_matmul, fp16, blocks, None),
        ("triton_persistent_matmul", persistent_matmul, fp16, blocks, {"num_warps": 8}),
        ("triton_attention_fwd", attention_fwd, attention, {**head, "CAUSAL": False}, None),
        ("triton_causal_attention_fwd", attention_fwd, attention, {**head, "CAUSAL": True}, None),
    )
    out = [(name, ASTSource(fn, signature, constexprs), options)
           for name, fn, signature, constexprs, options in kernels]  # fmt: skip
    return out + [(name, source, {"num_warps": 4}) for name, source in gluon_sources()]


def main(out: pathlib.Path) -> None:
    # A cached kernel never reaches translation, so nothing would be captured.
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    (out / "kernels").mkdir(parents=True, exist_ok=True)
    # Device-side tensor descriptors allocate a global scratch.
    triton.set_allocator(lambda size, alignment, stream: None)
    for name, source, options in sources():
        try:
            text = strip_locations(llvm_dialect_of(source, options))
        except Exception as e:  # a release without the feature
            print(f"skipped {name}: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
            continue
        header = (
            f"// Triton {triton.__version__}: {name} for sm_90,\n"
            "// the LLVM-dialect MLIR at translation; test/frontends/triton/generate.py.\n"
        )
        data = (header + text).encode()
        (out / "kernels" / f"{name}.mlir.gz").write_bytes(gzip.compress(data, mtime=0))
        print(name, len(text))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
