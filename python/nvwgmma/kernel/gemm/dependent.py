"""Programmatic dependent launch: a generated GEMM may start while the
stream's previous kernel drains.

Every generated GEMM waits (`griddepcontrol.wait`: the grids it depends on
completed and their memory is visible) before its first global memory
access -- a load, a store, a flag of its fix-up -- so the runtime launches
it programmatically (runtime.Kernel `programmatic`, the kernel meta's
"programmatic"). Its CTAs then take their SMs and set up their barriers
while the previous kernel's memory flushes and its launch is retired;
launched plainly, the wait returns at once.

No CTA executes `griddepcontrol.launch_dependents`: the next kernel launches
once every CTA of this one exited, ahead of the flush and the launch's
retirement. Letting it launch from a CTA's start, or once the producer
issued its last load, was slower on decode shapes (1.001x and 1.015x the
plain launch, down to 0.91x, against 1.073x), and an L2 prefetch of the
first unit's weights before the wait added nothing (1.020x):
bench/results/h200/2026-11-28-2007-gemm-pdl-trigger.json.
"""

from __future__ import annotations

__all__ = ["wait_for_previous"]


def wait_for_previous() -> None:
    """Every thread: wait until the grids this one depends on completed
    and their memory is visible. Nothing before it may touch global
    memory; a kernel launched plainly passes it at once."""
    from ...dialects import nvvm

    nvvm.griddepcontrol(nvvm.GridDepActionKind.wait)
