"""Upstream MLIR's own NVGPU examples (mlir/test/Examples/NVGPU, chapters 3-5:
one TMA + wgmma tile, a multistage ring, a warp-specialised ring) for sm_90,
built without a GPU, at the nvgpu level and lowered by upstream's passes, for
the checker's front-end corpus.

Run with a Python that has jaxlib (its MLIR Python bindings carry the nvgpu
dialect; MLIR 22's wheels here have none), not in CI:
    python test/frontends/upstream/generate.py LLVM_PROJECT OUT
LLVM_PROJECT is an llvm-project checkout (the examples and their NVDSL helper
are imported from it, never copied); OUT is e.g. test/frontends/upstream-nvgpu.
The examples JIT their kernel through MLIR's execution engine: here the
compiler is replaced by one that keeps the module and runs nothing. The
lowering runs nvwgmma-opt (NVWGMMA_TOOLS_DIR or PATH), mlir-opt 22 plus
nvwgmma.
"""

from __future__ import annotations

import ctypes
import gzip
import importlib
import os
import pathlib
import runpy
import shutil
import subprocess
import sys
import types

# Upstream's own passes, as test/corpus lowers its nvgpu kernels.
DEPTHS = {
    "": [],
    "_nvvm_scf": ["--convert-nvgpu-to-nvvm", "--canonicalize"],
    "_nvvm_cf": ["--convert-nvgpu-to-nvvm", "--canonicalize", "--convert-scf-to-cf"],
    "_asm": ["--convert-nvgpu-to-nvvm", "--canonicalize", "--convert-scf-to-cf",
             "--convert-nvvm-to-llvm"],
}  # fmt: skip
CHAPTERS = {
    "Ch3.py": "ch3_gemm_tma",
    "Ch4.py": "ch4_gemm_multistage",
    "Ch5.py": "ch5_gemm_warp_specialized",
}
MODULES = ["ir", "passmanager", "extras", "extras.types", "dialects", "dialects.arith",
           "dialects.func", "dialects.gpu", "dialects.memref", "dialects.nvgpu",
           "dialects.nvvm", "dialects.scf", "dialects.vector", "dialects.cf"]  # fmt: skip


def alias_mlir(captured: list[str]) -> None:
    """`mlir` is jaxlib's bindings; `mlir.runtime` and `tools.nvgpucompiler`
    are stand-ins that build nothing."""
    import jaxlib.mlir  # noqa: PLC0415
    from jax._src.interpreters import mlir as jax_mlir  # noqa: PLC0415

    sys.modules["mlir"] = jaxlib.mlir
    for name in MODULES:
        sys.modules[f"mlir.{name}"] = importlib.import_module(f"jaxlib.mlir.{name}")
    ir = sys.modules["mlir.ir"]

    class Context(ir.Context):
        """The examples open a bare ir.Context(); this one has the dialects."""

        def __init__(self):
            super().__init__()
            self.append_dialect_registry(jax_mlir.upstream_dialects)
            self.load_all_available_dialects()

    ir.Context = Context
    # The examples were written against bindings whose types had a static
    # isinstance (newer ones use Python's).
    for cls in (ir.Type, ir.MemRefType, ir.FloatType, ir.IntegerType, ir.IndexType,
                ir.F16Type, ir.F32Type, ir.F64Type):  # fmt: skip
        if "isinstance" not in vars(cls):
            cls.isinstance = staticmethod(lambda t, cls=cls: isinstance(t, cls))
    # ... and gpu.LaunchOp was the generated op class, not today's wrapper.
    gpu = sys.modules["mlir.dialects.gpu"]
    generated = importlib.import_module("jaxlib.mlir.dialects._gpu_ops_gen")
    gpu.LaunchOp = generated.LaunchOp
    wait = gpu.wait
    gpu.wait = lambda *args: generated.wait(*args) if len(args) == 2 else wait(*args)
    arith = sys.modules["mlir.dialects.arith"]
    floats = (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)
    arith._is_float_type = lambda t: isinstance(t, floats)
    arith._is_integer_like_type = lambda t: isinstance(t, ir.IntegerType | ir.IndexType)

    class Descriptor(ctypes.Structure):
        _fields_ = [("unused", ctypes.c_int)]

    def ranked(array):
        d = Descriptor()
        d.shape = array.shape
        return d

    runtime = types.ModuleType("mlir.runtime")
    runtime.get_ranked_memref_descriptor = ranked
    sys.modules["mlir.runtime"] = jaxlib.mlir.runtime = runtime

    class Engine:
        def invoke(self, *args):
            pass

    class Compiler:
        def __init__(self, *args, **kwargs):
            pass

        def compile_and_jit(self, module):
            captured.append(module.operation.get_asm(enable_debug_info=False))
            return Engine()

    compiler = types.ModuleType("tools.nvgpucompiler")
    compiler.NvgpuCompiler = Compiler
    sys.modules["tools.nvgpucompiler"] = compiler


def lower(text: str, passes: list[str]) -> str:
    if not passes:
        return text
    tool = shutil.which("nvwgmma-opt", path=os.environ.get("NVWGMMA_TOOLS_DIR"))
    out = subprocess.run([tool, *passes], input=text, capture_output=True, text=True,
                         check=True)  # fmt: skip
    return out.stdout


def emit(examples: pathlib.Path, chapter: str) -> None:
    """Run one chapter (each in its own process, as upstream's lit runs them:
    NVDSL registers value casters once per process) and print its module."""
    captured: list[str] = []
    alias_mlir(captured)
    sys.path.insert(0, str(examples))
    import tools  # noqa: PLC0415

    tools.nvgpucompiler = sys.modules["tools.nvgpucompiler"]
    os.environ["MLIR_NVDSL_PRINT_IR"] = "1"
    os.environ["SUPPORT_LIB"] = sys.executable  # checked to exist, never loaded
    runpy.run_path(str(examples / chapter), run_name="__main__")
    sys.stdout.write(captured[-1])


def main(llvm: pathlib.Path, out: pathlib.Path) -> None:
    examples = llvm / "mlir" / "test" / "Examples" / "NVGPU"
    (out / "kernels").mkdir(parents=True, exist_ok=True)
    for chapter, name in CHAPTERS.items():
        emitted = subprocess.run([sys.executable, __file__, "--emit", str(examples), chapter],
                                 capture_output=True, text=True, check=True).stdout  # fmt: skip
        header = (f"// upstream MLIR mlir/test/Examples/NVGPU/{chapter} for sm_90, "
                  "test/frontends/upstream/generate.py\n")  # fmt: skip
        for depth, passes in DEPTHS.items():
            data = (header + lower(emitted, passes)).encode()
            path = out / "kernels" / f"{name}{depth}.mlir.gz"
            path.write_bytes(gzip.compress(data, mtime=0))
            print(path.name, len(data))


if __name__ == "__main__":
    if sys.argv[1] == "--emit":
        emit(pathlib.Path(sys.argv[2]), sys.argv[3])
    else:
        main(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]))
