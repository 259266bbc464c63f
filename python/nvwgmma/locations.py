"""Op locations that point at Python: every op built through nvwgmma's
bindings without an explicit `loc=` gets the file, line and column of the
Python line that asked for it -- the caller's line, not a line inside
nvwgmma's builders -- so diagnostics (the verifier, the protocol checker)
name the line of the kernel's source.

    import nvwgmma.locations
    nvwgmma.locations.enable()        # the default, set at import
    nvwgmma.locations.disable()       # back to Location.current
    with nvwgmma.locations.python_lines(False): ...

The generators shipped with the package (`nvwgmma.kernel.gemm`,
`nvwgmma.kernel.attention`) count as kernel source: their ops point at the
generator's lines. `NVWGMMA_PYTHON_LOCATIONS=0` turns the default off.
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["GENERATORS", "disable", "enable", "python_lines"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
# Package directories whose lines are kernel source, not builder plumbing.
GENERATORS = ("kernel/gemm/", "kernel/attention/")
_registered = False


def _globals():
    from ._mlir_libs._mlir import globals as g

    return g


def _register() -> None:
    global _registered
    if _registered:
        return
    g = _globals()
    g.register_traceback_file_exclusion(_PACKAGE)
    for sub in GENERATORS:
        g.register_traceback_file_inclusion(_PACKAGE + sub)
    _registered = True


def enable() -> None:
    """Locate new ops at the innermost kernel-source Python line."""
    _register()
    g = _globals()
    g.set_loc_tracebacks_frame_limit(1)
    g.set_loc_tracebacks_enabled(True)


def disable() -> None:
    """Locate new ops at `Location.current` (or their explicit `loc=`)."""
    _globals().set_loc_tracebacks_enabled(False)


@contextlib.contextmanager
def python_lines(enabled: bool = True):
    """Within the block, Python-line locations on (or off)."""
    g = _globals()
    before = g.loc_tracebacks_enabled()
    (enable if enabled else disable)()
    try:
        yield
    finally:
        (enable if before else disable)()


def _default() -> None:
    if os.environ.get("NVWGMMA_PYTHON_LOCATIONS", "1") != "0":
        enable()
