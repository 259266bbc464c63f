"""Exceptions raised by nvwgmma's Python layer (importable without native code)."""

from __future__ import annotations

__all__ = ["WgmmaRuleError"]


class WgmmaRuleError(ValueError):
    """An nvwgmma op breaks a rule of docs/Constraints.md.

    `message` is the rule table's diagnostic; `label` its rule label, e.g.
    "mma_async_c5", handed over by the rule table as data (never parsed
    back out of the message).
    """

    def __init__(self, message: str, label: str | None = None):
        super().__init__(message)
        self.message = message
        self.label = label
