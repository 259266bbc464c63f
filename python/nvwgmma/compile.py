"""Lower modules that use nvwgmma to LLVM dialect and to PTX.

    from nvwgmma.compile import compile_to_ptx
    ptx = compile_to_ptx(module)            # a `.version`/`.target` PTX string

The path is: nvwgmma-check-target -> nvwgmma-to-llvm-pipeline (in process)
-> `mlir-translate --mlir-to-llvmir` -> `llc -march=nvptx64 -mcpu=sm_90a`
(both from the MLIR/LLVM wheels) and, with `assemble=True`, `ptxas`.

Command line: `python -m nvwgmma.compile kernel.mlir [-o kernel.ptx]`.
"""

from __future__ import annotations

import argparse
import functools
import re
import subprocess
import sys
import tempfile

from . import _checks
from .tools import require_tool

__all__ = [
    "CompileError",
    "PIPELINE",
    "check_target",
    "compile_to_ptx",
    "lower_to_llvm",
    "required_ptx_version",
    "run_ptxas",
]

PIPELINE = "nvwgmma-to-llvm-pipeline"


class CompileError(RuntimeError):
    """A step of compile_to_ptx failed; the message carries its diagnostics."""


def _ir():
    from . import ir, passmanager  # noqa: F401 (loads the native core)
    from ._mlir_libs import _nvwgmma

    return ir, passmanager, _nvwgmma


def required_ptx_version(module) -> int:
    """PTX ISA version (major*10+minor) every nvwgmma op of `module` needs.

    80 for the base instructions, 84 for mixed s8/u8, 82 for sparse; 0 when
    the module holds no nvwgmma op.
    """
    _, _, native = _ir()
    return native.required_ptx_version(_operation(module))


def _operation(module):
    from .ir import Module, Operation

    if isinstance(module, Module):
        return module.operation
    if isinstance(module, Operation):
        return module
    if hasattr(module, "operation") and isinstance(module.operation, Operation):
        return module.operation
    raise TypeError(f"module must be an MLIR Module or Operation, but got {type(module).__name__}")


def _run(pipeline: str, module) -> None:
    _, passmanager, _ = _ir()
    pm = passmanager.PassManager.parse(f"builtin.module({pipeline})", context=module.context)
    pm.run(_operation(module))


def check_target(module, chip: str = "sm_90a", ptx_version: int = 0) -> None:
    """Raise if `chip`/`ptx_version` cannot carry every nvwgmma op of `module`."""
    if not isinstance(chip, str) or not re.fullmatch(r"[A-Za-z0-9_]+", chip):
        raise ValueError(f"chip must be a target name such as sm_90a, but got {chip!r}")
    _checks.integer(ptx_version, "ptx_version", 0, 999)
    _run(f"nvwgmma-check-target{{chip={chip} ptx-version={ptx_version}}}", module)


def lower_to_llvm(module) -> None:
    """Run nvwgmma-to-llvm-pipeline on `module` in place."""
    _run(PIPELINE, module)


def _kernel_module_text(module) -> str:
    """The LLVM-dialect text mlir-translate should export.

    A module with one gpu.module exports that gpu.module's body (the device
    code); otherwise the module itself.
    """
    ir, _, _ = _ir()
    gpu_modules = [op for op in module.body.operations if op.operation.name == "gpu.module"]
    if len(gpu_modules) > 1:
        raise CompileError(f"expected at most one gpu.module, but got {len(gpu_modules)}")
    if not gpu_modules:
        return str(module)
    body = gpu_modules[0].regions[0].blocks[0]
    ops = "\n".join(str(op) for op in body.operations)
    return "module {\n" + ops + "\n}\n"


# Lines of an LLVM tool's crash report that say nothing to a user.
_NOISE = re.compile(
    r"^(PLEASE submit a bug report|Stack dump:|Stack dump without symbol names|"
    r"\s*#\d+ 0x|\s*\d+\.\s+Program arguments:|\s*\d+\.\s+Running pass|"
    r"Program arguments:|[^ ]+\(\+0x[0-9a-f]+\))"
)


def _diagnostic(stderr: str) -> str:
    """The lines of a tool's stderr that explain a failure, without the
    stack dump an aborting LLVM tool prints after them."""
    lines = [line for line in stderr.strip().splitlines() if not _NOISE.match(line)]
    return "\n".join(lines[:20]) or "(no message)"


# What ptxas takes as an identifier (PTX ISA 4.4): llc writes symbol names
# as they are, so a name such as "my.kernel" would only fail in ptxas.
_PTX_IDENTIFIER = re.compile(r"[A-Za-z_$%][A-Za-z0-9_$]*|[_$%][A-Za-z0-9_$]+")


def _check_symbol_names(module) -> None:
    for op in module.body.operations:
        regions = [op] + [
            inner for region in op.regions for block in region.blocks for inner in block.operations
        ]
        for f in regions:
            if f.operation.name not in ("llvm.func", "func.func", "gpu.func"):
                continue
            name = str(f.attributes["sym_name"]).strip('"')
            if not _PTX_IDENTIFIER.fullmatch(name):
                raise CompileError(
                    f"function names must be PTX identifiers (letters, digits, _ and $), "
                    f"but got '{name}'"
                )


def _tool(argv, stdin: str, what: str) -> str:
    proc = subprocess.run(argv, input=stdin, capture_output=True, text=True)
    if proc.returncode != 0:
        if proc.returncode < 0:
            how = f"crashed (signal {-proc.returncode})"
        else:
            how = "crashed" if "Stack dump" in proc.stderr else "failed"
        raise CompileError(f"{what} {how} while compiling the module:\n{_diagnostic(proc.stderr)}")
    return proc.stdout


def _llc(llvm_ir: str, chip: str, version: int) -> str:
    return _tool(
        [require_tool("llc"), "-march=nvptx64", f"-mcpu={chip}", f"-mattr=+ptx{version}"],
        llvm_ir,
        "llc",
    )


def _llc_ptx_versions() -> tuple[int, ...]:
    """The PTX ISA versions the bundled llc can write (its ptxNN features)."""
    return _ptx_versions_of(require_tool("llc"))


@functools.lru_cache(maxsize=4)
def _ptx_versions_of(llc: str) -> tuple[int, ...]:
    proc = subprocess.run([llc, "-march=nvptx64", "-mattr=help"], capture_output=True, text=True)
    return tuple(sorted({int(v) for v in re.findall(r"\bptx(\d+)\b", proc.stdout + proc.stderr)}))


def run_ptxas(ptx: str, chip: str = "sm_90a", extra_args=()) -> str:
    """Assemble `ptx` with ptxas; returns ptxas's messages (stderr).

    Raises CompileError with ptxas's diagnostics when it rejects the PTX.
    """
    ptxas = require_tool("ptxas")
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(ptx)
        path = f.name
    proc = subprocess.run(
        [ptxas, f"-arch={chip}", *extra_args, path, "-o", "/dev/null"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise CompileError(f"ptxas failed:\n{proc.stderr.strip()}")
    return proc.stderr


def compile_to_ptx(
    module,
    chip: str = "sm_90a",
    ptx_version: int | None = None,
    assemble: bool = False,
) -> str:
    """Compile a module using nvwgmma (and upstream dialects) to PTX text.

    `module` is not modified: a copy is lowered. `ptx_version` defaults to the
    lowest version every nvwgmma op needs (at least 8.0), raised to the newest
    the bundled llc writes when an upstream op needs more (llc cannot select
    it at the lower one); a too-low version or a target other than sm_90a
    raises before any external tool runs. With `assemble=True` the PTX is
    also assembled by ptxas. Every tool failure is a CompileError naming the
    stage, with the tool's message and without its stack dump.
    """
    ir, _, _ = _ir()
    if not isinstance(chip, str):
        raise TypeError(f"chip must be a str, but got {type(chip).__name__}")
    if ptx_version is not None:
        _checks.integer(ptx_version, "ptx_version", 10, 999)
    _checks.boolean(assemble, "assemble")
    if not isinstance(module, ir.Module):
        raise TypeError(f"module must be an MLIR Module, but got {type(module).__name__}")
    required = max(required_ptx_version(module), 80)
    version = required if ptx_version is None else ptx_version
    check_target(module, chip, version)
    _check_symbol_names(module)
    copy = ir.Module.parse(str(module), context=module.context)
    lower_to_llvm(copy)
    llvm_ir = _tool(
        [require_tool("mlir-translate"), "--mlir-to-llvmir"],
        _kernel_module_text(copy),
        "mlir-translate",
    )
    try:
        ptx = _llc(llvm_ir, chip, version)
    except CompileError as error:
        # An upstream op (e.g. a TMA load into shared::cta) may need a newer
        # PTX ISA than nvwgmma's ops: with no version asked for, take the
        # newest the bundled llc knows.
        newest = max(_llc_ptx_versions(), default=version)
        if ptx_version is not None or newest <= version or "Cannot select" not in str(error):
            raise
        ptx = _llc(llvm_ir, chip, newest)
    if assemble:
        run_ptxas(ptx, chip)
    return ptx


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m nvwgmma.compile",
        description="Compile an MLIR file using nvwgmma to PTX.",
    )
    parser.add_argument("input", help="MLIR file ('-' for stdin)")
    parser.add_argument("-o", "--output", default="-", help="PTX file")
    parser.add_argument("--chip", default="sm_90a")
    parser.add_argument("--ptx-version", type=int, default=None)
    parser.add_argument("--assemble", action="store_true", help="run ptxas too")
    args = parser.parse_args(argv)
    ir, _, _ = _ir()
    text = sys.stdin.read() if args.input == "-" else open(args.input).read()
    try:
        with ir.Context():
            module = ir.Module.parse(text)
            ptx = compile_to_ptx(module, args.chip, args.ptx_version, args.assemble)
    except (CompileError, ir.MLIRError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(ptx)
    else:
        with open(args.output, "w") as f:
            f.write(ptx)
    return 0


if __name__ == "__main__":
    sys.exit(main())
