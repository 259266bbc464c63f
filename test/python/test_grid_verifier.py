"""The verifier agrees with ptxas on every point of the dense wgmma grid.

By default the verifier is compared with the ptxas verdicts committed in
data/dense_verdicts.json; the `ptxas`-marked test re-derives those verdicts
from the installed ptxas and checks them against the file.
"""

import json
import os
import random
import shutil

import pytest

import wgmma_grid

DATA = os.path.join(os.path.dirname(__file__), "data", "dense_verdicts.json")


def load_verdicts():
    with open(DATA) as f:
        data = json.load(f)
    points = list(wgmma_grid.points())
    assert data["points"] == len(points)
    return points, wgmma_grid.decode_bits(data["bits"], len(points)), data


def verifier_verdicts(points):
    """Build every point as an nvwgmma.mma_async from Python; True = accepted."""
    from nvwgmma import ir
    from nvwgmma.dialects import llvm
    from nvwgmma.dialects import nvwgmma as wg

    verdicts = []
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        zeros = {}

        def value(type_):
            key = str(type_)
            if key not in zeros:
                with ir.InsertionPoint.at_block_begin(module.body):
                    zeros[key] = llvm.mlir_zero(type_)
            return zeros[key]

        i32 = ir.IntegerType.get_signless(32)
        i64 = ir.IntegerType.get_signless(64)
        desc = value(i64)
        fragment = value(wg.a_fragment_type(i32))
        with ir.InsertionPoint(module.body):
            for a, b, d, n, k, src, sat, b1_op in points:
                if b1_op == "xor":  # not expressible: refused by construction
                    verdicts.append(False)
                    continue
                members = ir.F32Type.get() if d == "f32" else i32
                acc_type = llvm.StructType.get_literal(
                    [members] * wgmma_grid.acc_count(d, n)
                )
                try:
                    result = wg.mma_async(
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


def test_verifier_matches_ptxas_on_dense_grid():
    points, expected, data = load_verdicts()
    got = verifier_verdicts(points)
    disagreements = [
        (p, e) for p, e, g in zip(points, expected, got) if e != g
    ]
    print(
        f"\n{len(points)} points, {sum(expected)} accepted by ptxas "
        f"({data['ptxas']}), {len(points) - len(disagreements)} agreements"
    )
    assert not disagreements[:20], f"{len(disagreements)} disagreements"
    # The lattice of docs/Constraints.md: f16 128, bf16 64, tf32 64, fp8 512,
    # int8 288 (18 N x 4 pairs x 2 A sources x satfinite), b1 36.
    assert sum(expected) == 1092


@pytest.mark.ptxas
def test_committed_verdicts_match_installed_ptxas():
    points, expected, data = load_verdicts()
    ptxas = shutil.which("ptxas")
    lines = [wgmma_grid.instruction(p) for p in points]
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
