"""Site initializer picked up by the embedded MLIR core at import.

Registers nvwgmma and the upstream dialects and passes it is used with, so
that every Context created through `nvwgmma.ir` can hold mixed modules.
"""

from . import _nvwgmma

_nvwgmma.register_passes()


def register_dialects(registry):
    _nvwgmma.register_dialects(registry)
