"""The wgmma protocol checked on PTX: ours, Triton's, nvcc's.

`check_ptx(text)` runs the same checker as the `nvwgmma-ptx-check` tool on a
PTX module and returns its findings: rules `protocol_c1` (wgmma.fence),
`protocol_c2`/`protocol_c3` (commit and wait before returning), `protocol_c4`
(an accumulator or A-fragment register accessed while its group may be
pending), `protocol_c5` (fence.proxy.async after generic shared-memory
writes) and `protocol_c6` (an mbarrier wait before reading what a TMA load
fills). With `strict=True` it also warns about what it could not relate
(`protocol_unchecked`). docs/Protocol.md describes each rule.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PtxFinding", "PtxProtocolError", "check_ptx", "require_clean_ptx"]


@dataclass(frozen=True)
class PtxFinding:
    """One finding: where (function, line), which rule, what it says."""

    severity: str  # "error" or "warning"
    function: str
    line: int
    label: str
    message: str
    notes: tuple[tuple[int, str], ...] = ()

    def __str__(self) -> str:
        text = f"{self.line}: {self.severity}: {self.message}"
        return "\n".join([text] + [f"{line}: note: {what}" for line, what in self.notes])


class PtxProtocolError(ValueError):
    """PTX that breaks the wgmma protocol; `.findings` lists the errors."""

    def __init__(self, findings: list[PtxFinding]):
        self.findings = findings
        super().__init__("\n".join(str(f) for f in findings))


def _finding(raw: str) -> PtxFinding:
    head, *notes = raw.split("\x1e")
    severity, function, line, label, message = head.split("\x1f", 4)
    pairs = (note.split("\x1f", 1) for note in notes)
    return PtxFinding(
        severity, function, int(line), label, message, tuple((int(n), what) for n, what in pairs)
    )


def check_ptx(text: str | bytes, *, strict: bool = False) -> list[PtxFinding]:
    """Every protocol finding of the PTX module `text`, by function and line."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise TypeError(f"text must be PTX as str or bytes, but got {type(text).__name__}")
    if not isinstance(strict, bool):
        raise TypeError(f"strict must be a bool, but got {type(strict).__name__}")
    from ._mlir_libs import _nvwgmma

    return [_finding(raw) for raw in _nvwgmma.check_ptx(text, strict)]


def require_clean_ptx(text: str | bytes) -> None:
    """Raise PtxProtocolError if the PTX module `text` breaks a rule."""
    errors = [f for f in check_ptx(text) if f.severity == "error"]
    if errors:
        raise PtxProtocolError(errors)
