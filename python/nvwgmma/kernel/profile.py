"""Where a kernel's time goes, per CTA: IR that stamps the SM's cycle
counter (or the global timer, or the SM's id) into a u64 buffer at points
of a kernel, and the arithmetic that turns the stamps into phases.

    from nvwgmma.kernel import profile
    profile.stamp(buffer, 1, slots=8, when=first_thread)        # clock64
    profile.stamp(buffer, 0, slots=8, when=first_thread, value="smid")

Record r of CTA c (c = the linear CTA index) is buffer[c * slots + r].
Cycle counts from one SM compare with each other (a CTA's phases, the gap
between CTAs that ran one after the other on the SM); the global timer
compares across SMs. bench/attention/timeline.py stamps the attention
backward this way.
"""

from __future__ import annotations

from ._ir import gep, i32_constant

__all__ = ["STAMPS", "cta_linear", "per_sm_gaps", "stamp"]

STAMPS = ("clock64", "globaltimer", "smid")


def cta_linear():
    """ctaid.x + nctaid.x (ctaid.y + nctaid.y ctaid.z), an i32 Value."""
    from ..dialects import arith, nvvm
    from ..ir import IntegerType

    i32 = IntegerType.get_signless(32)
    x, y, z = (getattr(nvvm, f"read_ptx_sreg_ctaid_{a}")(i32) for a in "xyz")
    nx, ny = nvvm.read_ptx_sreg_nctaid_x(i32), nvvm.read_ptx_sreg_nctaid_y(i32)
    return arith.addi(x, arith.muli(nx, arith.addi(y, arith.muli(ny, z))))


def stamp(buffer, slot: int, *, slots: int, when=None, value="clock64"):
    """Write `value` -- one of STAMPS, or an i64 Value of the kernel's (a
    count, say) -- to record `slot` of this CTA's `slots` u64 records in
    `buffer` (an `!llvm.ptr<1>`), where `when` (an i1 Value, or None: every
    thread) holds -- one thread, usually."""
    from .. import _checks
    from ..dialects import arith, llvm, nvvm, scf
    from ..ir import InsertionPoint, IntegerType

    i32, i64 = IntegerType.get_signless(32), IntegerType.get_signless(64)
    if isinstance(value, str) and value not in STAMPS:
        raise ValueError(f"value must be one of {', '.join(STAMPS)} or an i64 Value, but got "
                         f"{value!r}")  # fmt: skip
    if not isinstance(value, str):
        value = _checks.value(value, "value")
        if value.type != i64:
            raise TypeError(f"value must be one of {', '.join(STAMPS)} or an i64 Value, but got "
                            f"a {value.type} Value")  # fmt: skip
    slots = _checks.integer(slots, "slots", 1, 1 << 16)
    slot = _checks.integer(slot, "slot", 0, slots - 1)
    if not isinstance(value, str):
        read = value
    elif value == "clock64":
        read = nvvm.read_ptx_sreg_clock64(i64)
    elif value == "globaltimer":
        read = nvvm.read_ptx_sreg_globaltimer(i64)
    else:
        read = arith.extui(i64, nvvm.read_ptx_sreg_smid(i32))

    def write():
        at = arith.addi(arith.muli(cta_linear(), i32_constant(slots)), i32_constant(slot))
        llvm.store(read, gep(buffer, at, i64), alignment=8)

    if when is None:
        write()
        return
    branch = scf.IfOp(when)
    with InsertionPoint(branch.then_block):
        write()
        scf.YieldOp([])


def per_sm_gaps(sm, start, end):
    """Cycles between one CTA's `end` and the `start` of the next CTA on
    its SM, for every such pair (sequences of ints, one entry per CTA:
    the SM's id and that SM's clock at the CTA's first and last stamps)."""
    by_sm: dict = {}
    for s, a, b in zip(sm, start, end):
        by_sm.setdefault(s, []).append((a, b))
    gaps = []
    for runs in by_sm.values():
        runs.sort()
        gaps += [nxt[0] - cur[1] for cur, nxt in zip(runs, runs[1:])]
    return gaps
