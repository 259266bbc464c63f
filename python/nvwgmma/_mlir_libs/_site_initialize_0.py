"""Site initializer picked up by the embedded MLIR core at import.

Registers nvwgmma and the upstream dialects and passes it is used with, so
that every Context created through `nvwgmma.ir` can hold mixed modules.

It also unwinds, at interpreter exit, any Context, Location or
InsertionPoint a script entered and never left (`ctx.__enter__()` at top
level, a notebook cell): MLIR's bindings would otherwise tear them down
during finalization without the GIL and abort the interpreter.

And it turns on Python-line op locations (nvwgmma.locations).
"""

import atexit

from . import _nvwgmma

_nvwgmma.register_passes()


def _python_locations():
    from .. import locations

    locations._default()


_python_locations()


def register_dialects(registry):
    _nvwgmma.register_dialects(registry)


def _leave_entered_contexts():
    from .. import ir

    # Each __exit__ must leave the innermost entry of its kind first; try the
    # kinds until none is left (or none can be left).
    for _ in range(100_000):
        for kind in (ir.InsertionPoint, ir.Location, ir.Context):
            try:
                current = kind.current
            except (ValueError, RuntimeError):
                continue
            if current is None:
                continue
            try:
                current.__exit__(None, None, None)
                break
            except Exception:
                continue
        else:
            return


atexit.register(_leave_entered_contexts)
