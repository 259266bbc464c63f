"""The verifier agrees with ptxas on every point of the dense wgmma grid.

By default the verifier is compared with the ptxas verdicts committed in
data/dense_verdicts.json; the `ptxas`-marked test re-derives those verdicts
from the installed ptxas and checks them against the file.
"""

import functools
import json
import os
import random
import shutil

import pytest
import wgmma_grid

DATA = os.path.join(os.path.dirname(__file__), "data")
GRIDS = {
    "dense": (wgmma_grid.points, wgmma_grid.instruction, 1092),
    "sparse": (wgmma_grid.sparse_points, wgmma_grid.sparse_instruction, 1312),
}


def load_verdicts(grid="dense"):
    with open(os.path.join(DATA, f"{grid}_verdicts.json")) as f:
        data = json.load(f)
    points = list(GRIDS[grid][0]())
    assert data["points"] == len(points)
    return points, wgmma_grid.decode_bits(data["bits"], len(points)), data


def verifier_verdicts(points, sparse=False):
    """Build every point as an nvwgmma.mma_async(.sp) from Python; True = accepted."""
    from nvwgmma import ir
    from nvwgmma.dialects import llvm
    from nvwgmma.dialects import nvwgmma as wg

    verdicts = []
    with ir.Context(), ir.Location.unknown():
        # Inside a function: nvwgmma ops anywhere else break placement_c1.
        module = ir.Module.parse("llvm.func @grid() { llvm.return }")
        body = module.body.operations[0].regions[0].blocks[0]
        zeros = {}

        def value(type_):
            key = str(type_)
            if key not in zeros:
                with ir.InsertionPoint.at_block_begin(body):
                    zeros[key] = llvm.mlir_zero(type_)
            return zeros[key]

        i32 = ir.IntegerType.get_signless(32)
        i64 = ir.IntegerType.get_signless(64)
        desc = value(i64)
        meta = value(i32)
        fragment = value(wg.a_fragment_type(i32))
        with ir.InsertionPoint(body.operations[len(body.operations) - 1]):
            for a, b, d, n, k, src, sat, extra in points:
                if not sparse and extra == "xor":  # not expressible: refused
                    verdicts.append(False)
                    continue
                build = (
                    functools.partial(wg.mma_async_sp, metadata=meta, selector=extra)
                    if sparse
                    else wg.mma_async
                )
                members = ir.F32Type.get() if d == "f32" else i32
                acc_type = llvm.StructType.get_literal([members] * wgmma_grid.acc_count(d, n))
                try:
                    result = build(
                        value(acc_type),
                        fragment if src == "regs" else desc,
                        desc,
                        shape=(64, n, k),
                        a_type=a,
                        b_type=b,
                        d_type=d,
                        satfinite=sat,
                    )
                except wg.WgmmaRuleError:
                    verdicts.append(False)
                    continue
                result.owner.erase()
                verdicts.append(True)
    return verdicts


@pytest.mark.parametrize("grid", sorted(GRIDS))
def test_verifier_matches_ptxas(grid):
    points, expected, data = load_verdicts(grid)
    got = verifier_verdicts(points, sparse=grid == "sparse")
    disagreements = [(p, e) for p, e, g in zip(points, expected, got) if e != g]
    print(
        f"\n{grid}: {len(points)} points, {sum(expected)} accepted by ptxas "
        f"({data['ptxas']}), {len(points) - len(disagreements)} agreements"
    )
    assert not disagreements[:20], f"{len(disagreements)} disagreements"
    # The lattices of docs/Constraints.md. Dense: f16 128, bf16 64, tf32 64,
    # fp8 512, int8 288 (18 N x 4 pairs x 2 A sources x satfinite), b1 36.
    # Sparse: f16 256, bf16 128, tf32 128 (two selectors), fp8 512, int8 288.
    assert sum(expected) == GRIDS[grid][2]


@pytest.mark.ptxas
@pytest.mark.parametrize("grid", sorted(GRIDS))
def test_committed_verdicts_match_installed_ptxas(grid):
    points, expected, data = load_verdicts(grid)
    ptxas = shutil.which("ptxas")
    lines = [GRIDS[grid][1](p) for p in points]
    got = wgmma_grid.ptxas_verdicts(lines, ptxas)
    assert got == expected


@pytest.mark.ptxas
def test_batched_verdicts_match_single_instruction_files():
    """The batching in ptxas_verdicts gives the verdict a one-line file gets."""
    points, expected, _ = load_verdicts()
    ptxas = shutil.which("ptxas")
    rng = random.Random(0)
    accepted = [i for i, e in enumerate(expected) if e]
    sample = rng.sample(range(len(points)), 150) + rng.sample(accepted, 50)
    for i in sample:
        line = wgmma_grid.instruction(points[i])
        assert wgmma_grid.ptxas_verdicts([line], ptxas) == [expected[i]], line
