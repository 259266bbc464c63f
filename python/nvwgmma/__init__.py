"""nvwgmma: an MLIR dialect for NVIDIA Hopper's warpgroup MMA (wgmma).

Submodules:
  nvwgmma.ir, nvwgmma.passmanager   the embedded MLIR core
  nvwgmma.dialects.nvwgmma          the dialect (generated ops + builders)
  nvwgmma.dialects.{func,arith,llvm,nvvm,gpu,scf,memref,cf,...}
  nvwgmma.compile                   lower_to_llvm, compile_to_ptx

`import nvwgmma` itself loads no native code; the names below are imported
on first use.
"""

__all__ = ["compile_to_ptx", "lower_to_llvm", "run_ptxas"]


def __getattr__(name):
    if name in __all__:
        from . import compile as _compile

        return getattr(_compile, name)
    raise AttributeError(f"module 'nvwgmma' has no attribute {name!r}")
