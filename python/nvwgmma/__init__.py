"""nvwgmma: an MLIR dialect for NVIDIA Hopper's warpgroup MMA (wgmma).

Submodules:
  nvwgmma.ir, nvwgmma.passmanager   the embedded MLIR core
  nvwgmma.dialects.nvwgmma          the dialect (generated ops + builders)
  nvwgmma.dialects.{func,arith,llvm,nvvm,gpu,scf,memref,cf,...}
  nvwgmma.compile                   lower_to_llvm, compile_to_ptx
  nvwgmma.ptx_check                 check_ptx: the wgmma protocol on PTX

`import nvwgmma` itself loads no native code; the names below are imported
on first use.
"""

__all__ = ["check_ptx", "compile_to_ptx", "lower_to_llvm", "run_ptxas"]


def __getattr__(name):
    if name == "check_ptx":
        from .ptx_check import check_ptx

        return check_ptx
    if name in __all__:
        from . import compile as _compile

        return getattr(_compile, name)
    raise AttributeError(f"module 'nvwgmma' has no attribute {name!r}")
