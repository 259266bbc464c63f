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

import re
from dataclasses import dataclass

__all__ = [
    "PtxFinding",
    "PtxProtocolError",
    "PtxasNote",
    "check_ptx",
    "explain_ptxas",
    "require_clean_ptx",
]


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


@dataclass(frozen=True)
class PtxasNote:
    """A wgmma message of ptxas (C75xx: a wait or fence it injected, a
    pipeline it serialised) and the checker's findings that explain it:
    the instruction and the register behind it. `findings` is empty where
    the checker sees no violation (ptxas is conservative, e.g. a wait in a
    loop header)."""

    code: str
    function: str
    line: int | None
    message: str
    findings: tuple[PtxFinding, ...]


_PTXAS_WGMMA = re.compile(r"\((C75\d\d)\)\s*(.*?)\s+in (?:the )?function '([^']+)'")
_AROUND = re.compile(r"around line (\d+)")


def explain_ptxas(text: str | bytes, *, chip: str = "sm_90a", slack: int = 3) -> list[PtxasNote]:
    """Assemble `text` with ptxas -v and pair each of its wgmma messages
    with the checker's errors in the same function: the nearest to the line
    ptxas names (within `slack` lines), or, for a message without a line (a
    serialised pipeline), every early access and missing fence."""
    from .compile import run_ptxas

    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    errors = [f for f in check_ptx(text) if f.severity == "error"]
    notes = []
    for line in run_ptxas(text, chip=chip, extra_args=["-v"]).splitlines():
        m = _PTXAS_WGMMA.search(line)
        if not m:
            continue
        code, message, function = m.groups()
        if "register resources" in message:  # a resource limit, not the protocol
            continue
        around = _AROUND.search(message)
        at = int(around.group(1)) if around else None
        mine = [f for f in errors if f.function == function]
        if at is None:
            mine = [f for f in mine if f.label in ("protocol_c1", "protocol_c4")]
        else:  # the nearest within the slack
            near = [f for f in mine if abs(f.line - at) <= slack]
            mine = [f for f in near if abs(f.line - at) == min(abs(g.line - at) for g in near)]
        notes.append(PtxasNote(code, function, at, message, tuple(mine)))
    return notes
