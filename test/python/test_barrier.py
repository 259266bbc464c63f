"""Named-barrier helpers: constant ids in the PTX (never a register) for
every helper (votes included), and the errors."""

import re

import pytest


def _kernel(body):
    from nvwgmma import ir

    ctx = ir.Context()
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(
            "llvm.func @k(%c: i32, %f: i1, %l: i1) attributes {nvvm.kernel} {\n  llvm.return\n}"
        )
        entry = module.body.operations[0].regions[0].blocks[0]
        with ir.InsertionPoint(entry.operations[0]):
            body(*entry.arguments)
    return ctx, module


def test_ids_stay_constants_in_the_ptx():
    from nvwgmma.tools import find_tool

    if find_tool("ptxas") is None:
        pytest.skip("ptxas not found")
    from nvwgmma.compile import compile_to_ptx
    from nvwgmma.kernel import barrier

    def body(consumer, first, last):
        barrier.sync(1, 128)
        barrier.arrive(2, 256)
        barrier.sync_of(consumer, (3, 4), 256)
        turns = barrier.PingPong(consumer, ids=(5, 6))
        turns.wait(first=first)
        turns.pass_on(last=last)
        barrier.any_of(consumer, (7, 8), 128, first)
        barrier.any_(9, 64, last)

    ctx, module = _kernel(body)
    with ctx:
        ptx = compile_to_ptx(module, assemble=True)
    syncs = re.findall(r"bar(?:rier)?\.sync(?:\.aligned)?\s+(\S+), (\S+);", ptx)
    arrives = re.findall(r"bar(?:rier)?\.arrive(?:\.aligned)?\s+(\S+), (\S+);", ptx)
    assert sorted(syncs) == [("1", "128"), ("3", "256"), ("4", "256"), ("5", "256"), ("6", "256")]
    assert sorted(arrives) == [("2", "256"), ("5", "256"), ("6", "256")]
    # A vote: the i1 widened to an i32, tested into a predicate, reduced with OR.
    votes = re.findall(r"bar\.red\.or\.pred %q, (\d+), (\d+), %p;", ptx)
    assert sorted(votes) == [("7", "128"), ("8", "128"), ("9", "64")]


def test_barrier_errors():
    from nvwgmma.kernel import barrier

    def body(consumer, first, last):
        with pytest.raises(TypeError, match="barrier_id must be an int constant"):
            barrier.sync(consumer, 128)
        with pytest.raises(ValueError, match=r"barrier_id must be in \[1, 15\]"):
            barrier.sync(0, 128)
        with pytest.raises(ValueError, match="threads must be a multiple of 32"):
            barrier.arrive(1, 100)
        with pytest.raises(
            TypeError, match="predicate must be an i1 Value, but got a Value of type i32"
        ):
            barrier.any_(7, 128, consumer)
        with pytest.raises(ValueError, match="ids must name at least one barrier"):
            barrier.any_of(consumer, (), 128, first)
        with pytest.raises(ValueError, match="ids must differ"):
            barrier.PingPong(consumer, ids=(5, 5))

    _kernel(body)
