"""Named barriers (`bar.sync` / `bar.arrive` with an id and a thread
count) for syncing some warpgroups of a CTA, and the ping-pong order two
consumer warpgroups take turns in.

    from nvwgmma.kernel import barrier
    barrier.sync(1, 128)                      # one warpgroup: bar.sync 1, 128
    barrier.arrive(2, 256)                    # signal a 256-thread barrier
    barrier.sync_of(consumer, (3, 4), 256)    # bar.sync 3 or 4 by consumer (an i32 Value)
    anyone = barrier.any_of(consumer, (7, 8), 128, p)  # bar.red.or.pred: p in any thread
    turns = barrier.PingPong(consumer, ids=(5, 6))
    turns.wait(first=...)  ...issue wgmmas...  turns.pass_on(last=...)

Ids are always constants: a barrier id held in a register makes ptxas
reserve all 16 barriers for the kernel. Id 0 is `__syncthreads`.
"""

from __future__ import annotations

from .. import _checks
from ._ir import i32_constant

__all__ = ["PingPong", "any_", "any_of", "arrive", "arrive_of", "sync", "sync_of"]


def _id(barrier_id) -> int:
    if not isinstance(barrier_id, int) or isinstance(barrier_id, bool):
        raise TypeError(
            f"barrier_id must be an int constant (an id in a register makes ptxas reserve "
            f"all 16 barriers), but got {type(barrier_id).__name__}"
        )
    return _checks.integer(barrier_id, "barrier_id", 1, 15)


def _threads(threads: int) -> int:
    threads = _checks.integer(threads, "threads", 32, 1024)
    if threads % 32:
        raise ValueError(f"threads must be a multiple of 32 (whole warps), but got {threads}")
    return threads


def sync(barrier_id: int, threads: int, *, loc=None, ip=None) -> None:
    """`bar.sync barrier_id, threads`: wait until `threads` threads
    arrived or synced on the barrier."""
    from ..dialects import nvvm

    nvvm.BarrierOp(None, barrierId=i32_constant(_id(barrier_id), loc, ip),
                   numberOfThreads=i32_constant(_threads(threads), loc, ip),
                   loc=loc, ip=ip)  # fmt: skip


def arrive(barrier_id: int, threads: int, *, loc=None, ip=None) -> None:
    """`bar.arrive barrier_id, threads`: count this warp in, without
    waiting."""
    from ..dialects import nvvm

    nvvm.barrier_arrive(i32_constant(_threads(threads), loc, ip),
                        barrier_id=i32_constant(_id(barrier_id), loc, ip), loc=loc, ip=ip)  # fmt: skip


def any_(barrier_id: int, threads: int, predicate, *, loc=None, ip=None):
    """`bar.red.or.pred barrier_id, threads, predicate`: sync like `sync`
    and return (an i1) whether `predicate` (an i1 Value) held in any of
    the `threads` threads -- a decision they all take together. (Inline
    PTX: nvvm.barrier reduces on barrier 0, the whole CTA, only.)"""
    from ..dialects import arith, llvm
    from ..ir import IntegerType

    predicate = _checks.integer_value(predicate, "predicate", (1,))
    i32 = IntegerType.get_signless(32)
    word = arith.extui(i32, predicate, loc=loc, ip=ip)
    asm = (
        "{ .reg .pred %p, %q; setp.ne.u32 %p, $1, 0; "
        f"bar.red.or.pred %q, {_id(barrier_id)}, {_threads(threads)}, %p; "
        "selp.u32 $0, 1, 0, %q; }"
    )
    anyone = llvm.inline_asm(i32, [word], asm, "=r,r", has_side_effects=True, loc=loc, ip=ip)
    return arith.cmpi(arith.CmpIPredicate.ne, anyone, i32_constant(0, loc, ip), loc=loc, ip=ip)


def any_of(index, ids, threads: int, predicate, *, loc=None, ip=None):
    """`any_` on barrier ids[index], `index` an i32 Value (e.g. the
    consumer warpgroup), every id a constant."""
    from ..ir import IntegerType

    def emit(i, ip):
        return any_(i, threads, predicate, loc=loc, ip=ip)

    return _of(index, ids, emit, loc, ip, result=IntegerType.get_signless(1))


def _of(index, ids, emit, loc, ip, result=None):
    """emit(ids[i], ip) where i = `index` (an i32 Value), one constant-id
    branch per entry; with a `result` type, the emitted Value of the branch
    taken."""
    from ..dialects import arith, scf
    from ..ir import InsertionPoint

    index = _checks.integer_value(index, "index", (32,))
    ids = [_id(i) for i in ids]
    if not ids:
        raise ValueError("ids must name at least one barrier, but got none")
    if len(ids) == 1:
        return emit(ids[0], ip)
    is_first = arith.cmpi(arith.CmpIPredicate.eq, index, i32_constant(0, loc, ip), loc=loc, ip=ip)
    types = [] if result is None else [result]
    branch = scf.IfOp(is_first, types, has_else=True, loc=loc, ip=ip)
    with InsertionPoint(branch.then_block):
        value = emit(ids[0], None)
        scf.YieldOp([value][: len(types)], loc=loc)
    with InsertionPoint(branch.else_block):
        rest = arith.subi(index, i32_constant(1, loc), loc=loc)
        value = _of(rest, ids[1:], emit, loc, None, result)
        scf.YieldOp([value][: len(types)], loc=loc)
    return branch.results[0] if types else None


def sync_of(index, ids, threads: int, *, loc=None, ip=None) -> None:
    """`bar.sync ids[index], threads` with `index` an i32 Value (e.g. the
    consumer warpgroup), every id a constant."""
    _of(index, ids, lambda i, ip: sync(i, threads, loc=loc, ip=ip), loc, ip)


def arrive_of(index, ids, threads: int, *, loc=None, ip=None) -> None:
    """`bar.arrive ids[index], threads`, as sync_of."""
    _of(index, ids, lambda i, ip: arrive(i, threads, loc=loc, ip=ip), loc, ip)


class PingPong:
    """Two consumer warpgroups (`consumer`: 0 or 1, an i32 Value) take turns
    in a section (issuing their wgmmas), consumer 0 first -- FlashAttention-3's
    warp scheduler barriers: while one consumer's softmax runs on the CUDA
    cores, the other's GEMMs have the tensor cores.

    Consumer c waits on barrier ids[c] before its section (not consumer 0's
    first) and arrives on ids[1 - c] after it (not consumer 1's last):
    every arrival meets exactly one wait, none is left pending at exit.
    Both consumers must run the same number of sections."""

    def __init__(self, consumer, *, ids=(5, 6)):
        self.consumer = _checks.integer_value(consumer, "consumer", (32,))
        if len(ids) != 2:
            raise ValueError(f"ids must be two barrier ids, but got {len(ids)}")
        self.ids = tuple(_id(i) for i in ids)
        if self.ids[0] == self.ids[1]:
            raise ValueError(f"ids must differ, but got {self.ids}")

    def _skip(self, who: int, when):
        """An i1: this is consumer `who` and `when` (an i1 Value) holds."""
        from ..dialects import arith

        me = arith.cmpi(arith.CmpIPredicate.eq, self.consumer, i32_constant(who))
        return arith.andi(me, when)

    def wait(self, *, first):
        """Before the section; `first` (i1): this consumer's first one."""
        self._guarded(self._skip(0, first), lambda: sync_of(self.consumer, self.ids, 256))

    def pass_on(self, *, last):
        """After the section; `last` (i1): this consumer's last one."""
        from ..dialects import arith

        other = arith.subi(i32_constant(1), self.consumer)
        self._guarded(self._skip(1, last), lambda: arrive_of(other, self.ids, 256))

    @staticmethod
    def _guarded(skip, emit):
        from ..dialects import arith, scf
        from ..ir import InsertionPoint, IntegerType

        go = arith.xori(skip, arith.constant(IntegerType.get_signless(1), 1))
        branch = scf.IfOp(go)
        with InsertionPoint(branch.then_block):
            emit()
            scf.YieldOp([])
