"""Compiles Triton kernels for sm_90 (no GPU needed) and writes the
LLVM-dialect MLIR Triton hands to LLVM translation, for the checker corpus.

Run with a Python that has Triton (PyPI `triton`), not in CI:
    python test/corpus/triton/generate.py test/corpus/triton
The committed outputs (*.mlir) are what CI reads. Kernels here are written
for nvwgmma's corpus (Apache-2.0 WITH LLVM-exception, as the project) after
the structure of Triton's matmul tutorials; the generated IR is Triton's
compiler output.
"""

from __future__ import annotations

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
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=3):
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
def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, scale,
                  HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    # One (batch x head) slice of FlashAttention's forward pass, after the
    # structure of Triton's fused-attention tutorial: TMA descriptors for
    # Q, K and V, online softmax in exp2, a pipelined loop over K/V blocks.
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
    for start_n in tl.range(0, seq_len, BLOCK_N, num_stages=2):
        k = k_desc.load([start_n, 0])
        qk = tl.dot(q, k.T) * qk_scale
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
    """Drops every ` loc(...)` (Triton's printer leaves its #loc aliases out)
    and the alias lines themselves."""
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


def llvm_dialect_of(fn, signature, constexprs) -> str:
    """The MLIR module make_llir translates, captured at translation."""
    from triton._C.libtriton import llvm

    captured = []
    original = llvm.to_module

    def capture(module, context):
        captured.append(str(module))
        return original(module, context)

    llvm.to_module = capture
    try:
        triton.compile(
            ASTSource(fn, signature, constexprs),
            target=GPUTarget("cuda", 90, 32),
        )
    finally:
        llvm.to_module = original
    return captured[-1]


def main(out: pathlib.Path) -> None:
    # A cached kernel never reaches translation, so nothing would be captured.
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
    blocks = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}
    attention_sig = {
        "q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16",
        "seq_len": "i32", "scale": "fp32",
    }  # fmt: skip
    attention_blocks = {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64}
    kernels = (
        ("triton_tma_matmul", tma_matmul, sig, blocks),
        ("triton_pointer_matmul", pointer_matmul, sig, blocks),
        ("triton_attention_fwd", attention_fwd, attention_sig, attention_blocks),
    )
    for name, fn, signature, constexprs in kernels:
        text = strip_locations(llvm_dialect_of(fn, signature, constexprs))
        header = (
            f"// Triton {triton.__version__}: {name} {constexprs} for sm_90,\n"
            "// the LLVM-dialect MLIR at translation; test/corpus/triton/generate.py.\n"
        )
        (out / f"{name}.mlir").write_text(header + text)
        print(name, len(text))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
