"""Compiles three of the front-end corpus's Triton kernels for sm_90 (no GPU
needed) and writes the LLVM-dialect MLIR Triton hands to LLVM translation,
uncompressed, for test/corpus (whose mutations are written against them).

Run with a Python that has Triton (PyPI `triton`), not in CI:
    python test/corpus/triton/generate.py test/corpus/triton
The committed outputs (*.mlir) are what CI reads. The kernels and the
capture are test/frontends/triton/generate.py's (written for nvwgmma's
corpus, Apache-2.0 WITH LLVM-exception); the IR is Triton's compiler output.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import sys

import triton
from triton.compiler import ASTSource

FRONTENDS = pathlib.Path(__file__).resolve().parents[2] / "frontends" / "triton" / "generate.py"


def _frontends():
    spec = importlib.util.spec_from_file_location("frontends_triton", FRONTENDS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(out: pathlib.Path) -> None:
    g = _frontends()
    # A cached kernel never reaches translation, so nothing would be captured.
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
    blocks = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}
    attention_sig = {
        "q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16",
        "seq_len": "i32", "scale": "fp32",
    }  # fmt: skip
    attention_blocks = {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64, "CAUSAL": False}
    kernels = (
        ("triton_tma_matmul", g.tma_matmul, sig, blocks),
        ("triton_pointer_matmul", g.pointer_matmul, sig, blocks),
        ("triton_attention_fwd", g.attention_fwd, attention_sig, attention_blocks),
    )
    for name, fn, signature, constexprs in kernels:
        text = g.strip_locations(g.llvm_dialect_of(ASTSource(fn, signature, constexprs)))
        header = (
            f"// Triton {triton.__version__}: {name} {constexprs} for sm_90,\n"
            "// the LLVM-dialect MLIR at translation; test/corpus/triton/generate.py.\n"
        )
        (out / f"{name}.mlir").write_text(header + text)
        print(name, len(text))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
