"""Exceptions raised by nvwgmma's Python layer (importable without native code)."""

from __future__ import annotations

import re

_LABEL = re.compile(r"\((\w+_c\d+)\)\s*$")


class WgmmaRuleError(ValueError):
    """An nvwgmma op breaks a rule of docs/Constraints.md.

    `message` is the verifier's diagnostic; `label` its rule label, e.g.
    "mma_async_c5" (None if the diagnostic carries none).
    """

    def __init__(self, message: str, label: str | None = None):
        super().__init__(message)
        self.message = message
        self.label = label

    @classmethod
    def from_diagnostic(cls, message: str) -> "WgmmaRuleError":
        match = _LABEL.search(message)
        return cls(message, match.group(1) if match else None)
