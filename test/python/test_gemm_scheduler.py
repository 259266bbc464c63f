"""The tile schedulers' IR run on the CPU: every CTA's loop of work units
(and a finisher's loop over partial slots) is built exactly as the kernel
builds it, with the CTA index as a loop variable instead of ctaid.x,
lowered by upstream mlir-opt and executed by mlir-runner. The trace must
cover every (tile, K stage) exactly once, store every tile exactly once,
hand every partial to the one finisher of its tile, in a fixed order, and
never wait on a unit that could be waiting itself (a replay of the CTAs
in lock step finishes)."""

import os
import subprocess
from collections import defaultdict

import pytest
from nvwgmma.tools import find_tool

UNIT, PARTIAL, STAGE = 1, 2, 3


def _lib():
    runner = find_tool("mlir-runner")
    if runner is None:
        return None, None
    lib = os.path.join(os.path.dirname(os.path.dirname(runner)), "lib", "libmlir_c_runner_utils.so")
    return runner, lib if os.path.exists(lib) else None


def _tools():
    """(mlir-runner, its C runner utils library, mlir-opt), or skip."""
    runner, lib = _lib()
    opt = find_tool("mlir-opt")
    if runner is None or lib is None or opt is None:
        pytest.skip("mlir-runner / mlir-opt / libmlir_c_runner_utils not found")
    return runner, lib, opt


# What a traced module declares: the runner's printing functions.
_PRINTS = (
    "func.func private @printI64(i64)\nfunc.func private @printComma()\n"
    "func.func private @printNewline()\n"
)


def _emit(*values):
    """Print `values` (i32, i64 or index Values) as one line of the trace."""
    from nvwgmma.dialects import arith, func
    from nvwgmma.ir import IndexType, IntegerType

    i64 = IntegerType.get_signless(64)
    for v in values:
        if v.type == IndexType.get():
            v = arith.index_cast(i64, v)
        elif v.type != i64:
            v = arith.extui(i64, v)
        func.CallOp([], "printI64", [v])
        func.CallOp([], "printComma", [])
    func.CallOp([], "printNewline", [])


def _trace(config, m, n, k, batch, ctas):
    """[(kind, cta, ...)]: UNIT (cta, tile, row, col, batch, k_first, k_end,
    writer, finisher, slot), PARTIAL (cta, tile, slot) and, before each
    UNIT, a STAGE (cta, j, stage) per K stage the producer loads for the
    CTA's j-th unit, in execution order per CTA."""
    from nvwgmma.dialects import arith, func, scf
    from nvwgmma.ir import (
        Context,
        FunctionType,
        IndexType,
        InsertionPoint,
        IntegerType,
        Location,
        Module,
    )
    from nvwgmma.kernel.gemm.scheduler import make_scheduler

    runner, lib, opt = _tools()
    with Context(), Location.unknown():
        module = Module.parse(_PRINTS)
        i32, index = IntegerType.get_signless(32), IndexType.get()
        emit = _emit

        def c32(v):
            return arith.constant(i32, v)

        with InsertionPoint(module.body):
            main = func.FuncOp("main", FunctionType.get([], []))
            with InsertionPoint(main.add_entry_block()):
                ctas_loop = scf.ForOp(
                    arith.constant(index, 0), arith.constant(index, ctas), arith.constant(index, 1)
                )
                with InsertionPoint(ctas_loop.body):
                    g = arith.index_cast(i32, ctas_loop.induction_variable)
                    s = make_scheduler(config, c32(m), c32(n), c32(k), c32(batch),
                                       cta=g, ctas=c32(ctas))  # fmt: skip
                    units = scf.ForOp(*s.units(), [c32(0)])
                    with InsertionPoint(units.body):
                        w = s.work(units.induction_variable)
                        j = units.inner_iter_args[0]
                        steps = scf.ForOp(w.k_first, w.k_end, arith.constant(index, 1))
                        with InsertionPoint(steps.body):
                            serpentine = config.k_order == "serpentine"
                            stage = s.k_stage(
                                w, steps.induction_variable, j if serpentine else None
                            )
                            emit(c32(STAGE), g, j, stage)
                            scf.YieldOp([])
                        if s.fixup:
                            emit(c32(UNIT), g, w.tile, w.row, w.col, w.batch, w.k_first,
                                 w.k_end, w.writer, w.finisher, w.slot)  # fmt: skip
                            fin = scf.IfOp(w.finisher)
                            with InsertionPoint(fin.then_block):

                                def add(acc, slot, g=g, w=w):
                                    emit(c32(PARTIAL), g, w.tile, slot)
                                    return arith.addi(acc, c32(1))

                                s.partials(w, c32(0), add)
                                scf.YieldOp([])
                        else:
                            zero = c32(0)
                            emit(c32(UNIT), g, zero, w.row, w.col, w.batch, w.k_first, w.k_end,
                                 zero, zero, zero)  # fmt: skip
                        scf.YieldOp([arith.addi(j, c32(1))])
                    scf.YieldOp([])
                func.ReturnOp([])
        text = str(module)
    return _execute(text, runner, lib, opt)


def _execute(text, runner, lib, opt):
    """Lower `text` (a module with a void @main calling printI64) with
    upstream mlir-opt, run it, and parse each printed line as ints."""
    lowered = subprocess.run(
        [opt, "--convert-scf-to-cf", "--convert-arith-to-llvm", "--convert-index-to-llvm",
         "--convert-func-to-llvm", "--convert-cf-to-llvm", "--reconcile-unrealized-casts"],
        input=text, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    out = subprocess.run(
        [runner, "-e", "main", "-entry-point-result=void", f"-shared-libs={lib}"],
        input=lowered, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return [
        tuple(int(x) for x in line.split(",") if x.strip())
        for line in out.splitlines()
        if line.strip()
    ]


def _tiles(m, n, batch, tm, tn):
    return batch * -(-m // tm) * -(-n // tn)


def _check(config, m, n, k, batch, ctas):
    """The trace's invariants; returns the trace."""
    trace = _trace(config, m, n, k, batch, ctas)
    k_stages = -(-k // config.k_tile)
    tiles = _tiles(m, n, batch, config.tile_m, config.tile_n)
    units = [r for r in trace if r[0] == UNIT]
    covered = defaultdict(list)
    origin = {}  # tile -> (row, col, batch)
    stores, writers, by_cta = defaultdict(int), {}, defaultdict(list)
    partials = defaultdict(list)  # finisher (cta, tile) -> slots in order
    for r in trace:
        if r[0] == PARTIAL:
            partials[(r[1], r[2])].append(r[3])
    for _, g, tile, row, col, b, lo, hi, writer, finisher, slot in units:
        key = (row, col, b)
        if config.scheduler != "persistent":  # a tile index names one C tile
            assert origin.setdefault(tile, key) == key
        assert row % config.tile_m == 0 and col % config.tile_n == 0 and row < m and col < n
        assert 0 <= b < batch
        covered[key].extend(range(lo, hi))
        by_cta[g].append((key, tile, lo, hi, writer, finisher, slot))
        if writer:
            assert slot not in writers, f"slot {slot} written twice"
            writers[slot] = (tile, g)
        else:
            stores[key] += 1
    # The producer loads exactly the unit's K stages: forward, or (serpentine)
    # backwards on the CTA's odd units.
    loaded = defaultdict(list)
    for r in trace:
        if r[0] == STAGE:
            loaded[(r[1], r[2])].append(r[3])
    for g, todo in by_cta.items():
        for j, (_, _, lo, hi, *_) in enumerate(todo):
            order = list(range(lo, hi))
            if config.k_order == "serpentine" and j % 2:
                order.reverse()
            assert loaded.pop((g, j), []) == order, (g, j)
    assert not loaded
    # Every tile computed over all of K, each K stage once, and stored once.
    assert len(covered) == tiles
    for key, stages in covered.items():
        assert sorted(stages) == list(range(k_stages)) or (k_stages == 0), key
        assert stores[key] == 1, key
    # Every partial slot consumed once, by the finisher of its own tile, in
    # increasing slot order (the fixed summation order).
    consumed = []
    for (g, tile), slots in partials.items():
        assert slots == sorted(slots)
        assert any(u[1] == tile and u[5] for u in by_cta[g])
        for slot in slots:
            assert writers[slot][0] == tile
        consumed += slots
    assert sorted(consumed) == sorted(writers)
    # Lock-step replay: each CTA runs its units in order; a finisher waits
    # for its slots' writers. It must finish.
    position = {g: 0 for g in by_cta}
    done_slots = set()
    progressed = True
    while progressed:
        progressed = False
        for g, todo in by_cta.items():
            while position[g] < len(todo):
                key, tile, lo, hi, writer, finisher, slot = todo[position[g]]
                if finisher and not set(partials[(g, tile)]) <= done_slots:
                    break
                if writer:
                    done_slots.add(slot)
                position[g] += 1
                progressed = True
    stuck = {g: p for g, p in position.items() if p < len(by_cta[g])}
    assert not stuck, f"CTAs wait forever: {stuck}"
    return trace


def _config(**kwargs):
    from nvwgmma.kernel.gemm import GemmConfig

    return GemmConfig(**kwargs)


@pytest.mark.parametrize(
    "m, n, k, batch, ctas",
    [(1000, 4096, 4096, 1, 128), (128, 4096, 14336, 1, 132), (333, 520, 2000, 3, 7),
     (7, 7, 64, 1, 1), (4097, 4099, 4104, 1, 132)],
)  # fmt: skip
def test_persistent_covers_every_tile_once(m, n, k, batch, ctas):
    _check(_config(), m, n, k, batch, ctas)


@pytest.mark.parametrize(
    "m, n, k, batch, splits, ctas",
    [(128, 4096, 14336, 1, 4, 128), (1000, 1000, 4104, 1, 3, 132), (7, 7, 64, 1, 4, 4),
     (333, 520, 2000, 3, 4, 17), (128, 256, 640, 1, 2, 1)],
)  # fmt: skip
def test_split_k_hands_each_partial_to_its_finisher(m, n, k, batch, splits, ctas):
    trace = _check(_config(tile_n=128, stages=6, scheduler="split_k", splits=splits),
                   m, n, k, batch, ctas)  # fmt: skip
    finishers = [r for r in trace if r[0] == UNIT and r[9]]
    assert len(finishers) == _tiles(m, n, batch, 128, 128)


@pytest.mark.parametrize(
    "m, n, k, batch, ctas, tile_n",
    [(128, 4096, 14336, 1, 132, 128), (1000, 4096, 4096, 1, 132, 256), (333, 520, 2000, 2, 31, 128),
     (128, 128, 640, 1, 10, 128), (129, 4096, 14336, 1, 132, 128), (64, 64, 64, 1, 1, 128)],
)  # fmt: skip
def test_stream_k_splits_iterations_evenly(m, n, k, batch, ctas, tile_n):
    config = _config(tile_n=tile_n, stages=6 if tile_n == 128 else 3, scheduler="stream_k")
    trace = _check(config, m, n, k, batch, ctas)
    work = defaultdict(int)
    for r in trace:
        if r[0] == UNIT:
            work[r[1]] += r[7] - r[6]
    total = _tiles(m, n, batch, 128, tile_n) * -(-k // 64)
    assert sum(work.values()) == total
    assert max(work.values()) - min(work.values()) <= 1  # the ranges differ by one at most


@pytest.mark.parametrize("k_order", ["serpentine", "forward"])
def test_serpentine_units_start_where_the_previous_ended(k_order):
    """Data-parallel units each cover all of K: with serpentine order a
    CTA's next unit starts on the K stage its previous one loaded last."""
    trace = _check(_config(k_order=k_order), 4096, 4096, 1024, 1, 16)
    per_cta = defaultdict(list)
    for r in trace:
        if r[0] == STAGE:
            per_cta[r[1]].append(r[3])
    k_stages = 1024 // 64
    for stages in per_cta.values():
        starts = stages[::k_stages]
        ends = stages[k_stages - 1 :: k_stages]
        assert len(starts) == 4096 * 4096 // (128 * 256) // 16
        for end, start in zip(ends, starts[1:]):
            assert (start == end) == (k_order == "serpentine")


def _capacity(groups, table):
    """A group table's size: none (the scan), the smallest that fits the
    groups, or four times that."""
    fit = 1 << (groups - 1).bit_length()
    return {"none": 0, "fit": fit, "wide": 4 * fit}[table]


def _trace_grouped(config, ends, n, k, ctas, max_rows=None, rank=None):
    """[(cta, row, col, group, rows, k_first, k_end)] of every unit of a
    Grouped schedule over groups ending at `ends` (with `max_rows`: a Masked
    one, `ends` holding the counts), run as _trace runs: each CTA's units
    walked as the kernel's roles walk them, the scan's cursor carried from
    one to the next; each unit's Work must equal work(unit)'s, found from
    group 0. With config.group_table, each CTA fills the table (in a global
    array here, by three threads in turn) and searches it twice: halving,
    as the producer does, and by vote, as the consumers' warps do (each
    lane's vote in turn here: group_table.OneThread)."""
    from nvwgmma import ir
    from nvwgmma.dialects import arith, func, llvm, scf
    from nvwgmma.kernel.gemm.group_table import OneThread
    from nvwgmma.kernel.gemm.scheduler import Grouped, Masked

    runner, lib, opt = _tools()
    values = ", ".join(map(str, ends))
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(
            _PRINTS + f"llvm.mlir.global internal constant @offs(dense<[{values}]> : "
            f"tensor<{len(ends)}xi32>) : !llvm.array<{len(ends)} x i32>\n"
            f"llvm.mlir.global internal @table(dense<0> : tensor<{2 * config.group_table + 1}xi32>)"
            f" : !llvm.array<{2 * config.group_table + 1} x i32>"
        )
        i32, index = ir.IntegerType.get_signless(32), ir.IndexType.get()

        def c32(v):
            return arith.constant(i32, v)

        with ir.InsertionPoint(module.body):
            main = func.FuncOp("main", ir.FunctionType.get([], []))
            with ir.InsertionPoint(main.add_entry_block()):
                offsets = llvm.mlir_addressof(llvm.PointerType.get(), "offs")
                table = llvm.mlir_addressof(llvm.PointerType.get(), "table")

                def where(thread):  # one of three threads filling the table
                    return dict(table=table, threads=(c32(thread), c32(3), lambda: None),
                                lanes=OneThread())  # fmt: skip

                ctas_loop = scf.ForOp(
                    arith.constant(index, 0), arith.constant(index, ctas), arith.constant(index, 1)
                )
                with ir.InsertionPoint(ctas_loop.body):
                    g = arith.index_cast(i32, ctas_loop.induction_variable)
                    # Threads 1 and 2 copy their shares of the offsets, then
                    # thread 0 its own and walks them: the order a barrier
                    # between the copy and the walk allows.
                    for thread in (1, 2, 0):
                        if max_rows is None:
                            s = Grouped(config, c32(ends[-1]), c32(n), c32(k), offsets,
                                        c32(len(ends)), cta=g, ctas=c32(ctas),
                                        rank=None if rank is None else c32(rank),
                                        **where(thread))  # fmt: skip
                        else:
                            s = Masked(config, c32(len(ends) * max_rows), c32(n), c32(k),
                                       offsets, c32(len(ends)), c32(max_rows), cta=g,
                                       ctas=c32(ctas), **where(thread))  # fmt: skip
                    # The producer's cursor, then the consumers' (found by vote).
                    carried = len(s.cursor())
                    units = scf.ForOp(*s.units(), s.cursor() + s.cursor())
                    with ir.InsertionPoint(units.body):
                        state = list(units.inner_iter_args)
                        w, cursor = s.advance(units.induction_variable, state[:carried])
                        voted, cursor_v = s.advance_in_warps(units.induction_variable,
                                                             state[carried:])  # fmt: skip
                        fresh = s.work(units.induction_variable)
                        same = c32(1)
                        for field in ("row", "col", "b_batch", "rows"):
                            for found in (w, voted):
                                eq = arith.cmpi(arith.CmpIPredicate.eq, getattr(found, field),
                                                getattr(fresh, field))  # fmt: skip
                                same = arith.andi(same, arith.extui(i32, eq))
                        _emit(g, w.row, w.col, w.b_batch, w.rows, w.k_first, w.k_end, same)
                        scf.YieldOp(cursor + cursor_v)
                    scf.YieldOp([])
                func.ReturnOp([])
        text = str(module)
    rows = _execute(text, runner, lib, opt)
    assert all(r[-1] == 1 for r in rows), "a carried cursor or the vote changed a unit's work"
    return [r[:-1] for r in rows]


@pytest.mark.parametrize(
    "ends, n, ctas",
    [([0, 1, 301, 301, 700], 1000, 7),  # an empty first group, a one-row group, an empty one
     ([128 * (i + 1) for i in range(8)], 4096, 132), ([5] * 3 + [900], 64, 3),
     # more tile rows than an L2 band (group_m), and an end below the one
     # before it: an empty group, the next starting where the last ended
     ([2100, 2100, 1000, 5000], 1024, 132),
     # more groups than a scan step reads (8): whole steps and a partial one
     ([37 * i + (i % 3 == 0) * 100 for i in range(1, 20)], 512, 11),
     ([64 * (i + 1) for i in range(128)], 2048, 132)],
)  # fmt: skip
@pytest.mark.parametrize("table", ["none", "fit", "wide"])
def test_grouped_covers_every_group_tile_once(ends, n, ctas, table):
    """Every (group, tile row, tile column) of the ragged groups is one
    unit over all of K: its rows start inside its group at a tile multiple
    from the group's first row, its store stops at the group's end, and B
    is read from the group's batch entry -- scanned, or searched in a table
    just big enough or with room to spare."""
    config = _config(epilogue="registers", group_table=_capacity(len(ends), table))
    k = 1000
    trace = _trace_grouped(config, ends, n, k, ctas)
    ends = [max(ends[: i + 1]) for i in range(len(ends))]  # as the scan clamps them
    starts = [0, *ends[:-1]]
    expected = {
        (g, row, col)
        for g, (lo, hi) in enumerate(zip(starts, ends))
        for row in range(lo, hi, config.tile_m)
        for col in range(0, n, config.tile_n)
    }
    seen = []
    for _cta, row, col, group, rows, k_first, k_end in trace:
        assert starts[group] <= row < ends[group] and rows == ends[group]
        assert (k_first, k_end) == (0, -(-k // config.k_tile))
        seen.append((group, row, col))
    assert sorted(seen) == sorted(expected) and len(seen) == len(set(seen))


@pytest.mark.parametrize("ends", [[0, 1, 301, 301, 700, 1400], [256 * (i + 1) for i in range(8)]])
@pytest.mark.parametrize("table", ["none", "fit"])
def test_grouped_clusters_pair_adjacent_tile_rows_of_one_group(ends, table):
    """cluster_m 2: both CTAs of a cluster walk the same units (same group,
    column and K), rank r taking tile row 2i + r of its group; every tile
    row of every group is computed once, and a rank whose row is past its
    group's end (an odd count of tile rows) stores nothing (rows <= row)."""
    config = _config(epilogue="registers", cluster_m=2,
                     group_table=_capacity(len(ends), table))  # fmt: skip
    n, k, ctas = 1024, 1000, 5
    traces = [_trace_grouped(config, ends, n, k, ctas, rank=r) for r in (0, 1)]
    assert len(traces[0]) == len(traces[1])
    starts = [0, *ends[:-1]]
    seen = []
    for u0, u1 in zip(*traces):
        assert u0[0] == u1[0] and u0[2:] == u1[2:]  # same CTA, column, group, bound, K
        assert u1[1] == u0[1] + config.tile_m
        group = u0[3]
        assert (u0[1] - starts[group]) % (2 * config.tile_m) == 0 and u0[1] < ends[group]
        seen += [(group, row, u0[2]) for row in (u0[1], u1[1]) if row < ends[group]]
    expected = {(g, row, col) for g, (lo, hi) in enumerate(zip(starts, ends))
                for row in range(lo, hi, config.tile_m) for col in range(0, n, config.tile_n)}  # fmt: skip
    assert sorted(seen) == sorted(expected) and len(seen) == len(set(seen))


@pytest.mark.parametrize(
    "counts, max_rows, n",
    [([0, 1, 300, 256, 5], 256, 1000),  # an empty group, a count past max_rows (clamped)
     ([17] * 8 + [-3], 64, 4096)],  # a negative count: empty
)  # fmt: skip
@pytest.mark.parametrize("table", ["none", "fit"])
def test_masked_covers_each_groups_counted_rows_once(counts, max_rows, n, table):
    """The masked layout: group g's tiles cover rows [g * max_rows,
    g * max_rows + count) once each, stores bounded there, B from batch g."""
    config = _config(epilogue="registers", group_table=_capacity(len(counts), table))
    trace = _trace_grouped(config, counts, n, 512, 132, max_rows=max_rows)
    clamped = [min(max(c, 0), max_rows) for c in counts]
    expected = {
        (g, row, col)
        for g, count in enumerate(clamped)
        for row in range(g * max_rows, g * max_rows + count, config.tile_m)
        for col in range(0, n, config.tile_n)
    }
    seen = []
    for _cta, row, col, group, rows, _k_first, _k_end in trace:
        assert group * max_rows <= row < rows == group * max_rows + clamped[group]
        seen.append((group, row, col))
    assert sorted(seen) == sorted(expected) and len(seen) == len(set(seen))
