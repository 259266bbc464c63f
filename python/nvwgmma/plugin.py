"""Where the C++ side of the installed package lives, for compiler teams.

The wheel ships, beside the Python package, what a compiler team links or
loads into its own tools (all of it linked to the MLIR wheel's libMLIR.so,
the library `mlir-opt` itself is):

* ``plugin_path()``: ``libNVWGMMAPlugin.so``, a dialect and pass plugin for
  an upstream ``mlir-opt``::

      mlir-opt --load-dialect-plugin=$P --load-pass-plugin=$P kernel.mlir \\
        --convert-nvwgmma-to-nvvm --gpu-lower-to-nvvm-pipeline

* ``cmake_dir()``: ``lib/cmake/nvwgmma`` with ``NVWGMMAConfig.cmake``, for
  ``find_package(NVWGMMA)`` (targets ``NVWGMMA::NVWGMMA``, ``NVWGMMA::NVWGMMA-C``);
* ``include_dir()``: the C++ and C API headers.

``python -m nvwgmma.plugin`` prints the plugin's path (``--cmake-dir``,
``--include-dir``, ``--mlir-opt-args`` for the others).
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["plugin_path", "cmake_dir", "include_dir", "mlir_opt_args"]

_PLUGIN = "libNVWGMMAPlugin.so"


def _prefixes() -> list[str]:
    """Install prefixes to search: NVWGMMA_PREFIX, then the package itself
    (the wheel installs into site-packages/nvwgmma/{lib,include}), then a
    build tree whose bin/ NVWGMMA_TOOLS_DIR names."""
    found = []
    if os.environ.get("NVWGMMA_PREFIX"):
        found.append(os.environ["NVWGMMA_PREFIX"])
    found.append(os.path.dirname(os.path.abspath(__file__)))
    if os.environ.get("NVWGMMA_TOOLS_DIR"):
        found.append(os.path.dirname(os.path.abspath(os.environ["NVWGMMA_TOOLS_DIR"])))
    return found


def _find(*parts: str, what: str) -> str:
    for prefix in _prefixes():
        candidate = os.path.join(prefix, *parts)
        if os.path.exists(candidate):
            return candidate
    raise FileNotFoundError(
        f"cannot find {what} ({os.path.join(*parts)}) under {', '.join(_prefixes())}: "
        "reinstall nvwgmma, or set NVWGMMA_PREFIX to a `cmake --install` prefix"
    )


def plugin_path() -> str:
    """Absolute path of libNVWGMMAPlugin.so (dialect and pass plugin)."""
    return _find("lib", _PLUGIN, what="the mlir-opt plugin")


def cmake_dir() -> str:
    """The folder holding NVWGMMAConfig.cmake (give it as NVWGMMA_DIR)."""
    return _find("lib", "cmake", "nvwgmma", what="the CMake package")


def include_dir() -> str:
    """The folder holding nvwgmma/ and nvwgmma-c/ headers."""
    return _find("include", "nvwgmma-c", what="the C API headers").rsplit(os.sep, 1)[0]


def mlir_opt_args() -> list[str]:
    """The two options that load nvwgmma into an upstream mlir-opt."""
    path = plugin_path()
    return [f"--load-dialect-plugin={path}", f"--load-pass-plugin={path}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m nvwgmma.plugin",
        description="Print where nvwgmma's mlir-opt plugin and C++ package are.",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--cmake-dir", action="store_true", help="NVWGMMAConfig.cmake's folder")
    group.add_argument("--include-dir", action="store_true", help="the headers' folder")
    group.add_argument(
        "--mlir-opt-args", action="store_true", help="the mlir-opt options that load the plugin"
    )
    args = parser.parse_args(argv)
    try:
        if args.cmake_dir:
            print(cmake_dir())
        elif args.include_dir:
            print(include_dir())
        elif args.mlir_opt_args:
            print(" ".join(mlir_opt_args()))
        else:
            print(plugin_path())
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
