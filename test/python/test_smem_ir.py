"""kernel.smem in IR agrees with the numpy layouts: the swizzle by folding
constant inputs with the canonicalizer, descriptor steps by interpreting the
llvm ops they build."""

import numpy as np
import pytest
from ir_interpret import evaluate


@pytest.mark.parametrize("swizzle", ["none", "32B", "64B", "128B"])
@pytest.mark.parametrize("width", [32, 64])
def test_swizzle_offset_folds_to_numpy(ctx, swizzle, width):
    from nvwgmma import ir
    from nvwgmma.dialects import arith, func
    from nvwgmma.kernel import smem
    from nvwgmma.layouts import swizzle_address
    from nvwgmma.passmanager import PassManager

    offsets = list(range(0, 2048, 16)) + [1, 7, 129, 1023, 4095, 65535]
    t = ir.IntegerType.get_signless(width)
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        f = func.FuncOp("f", ir.FunctionType.get([], [t] * len(offsets)))
        with ir.InsertionPoint(f.add_entry_block()):
            results = [smem.swizzle_offset(arith.constant(t, o), swizzle) for o in offsets]
            func.ReturnOp(results)
    PassManager.parse("builtin.module(canonicalize)").run(module.operation)
    ret = f.entry_block.operations[len(f.entry_block.operations) - 1]
    folded = [ir.IntegerAttr(v.owner.attributes["value"]).value for v in ret.operands]
    assert folded == swizzle_address(np.array(offsets), swizzle).tolist()


@pytest.mark.parametrize("swizzle,major", [("128B", "K"), ("none", "K"), ("64B", "MN")])
def test_step_descriptor_matches_geometry(body, swizzle, major):
    from nvwgmma import ir
    from nvwgmma.dialects import llvm
    from nvwgmma.kernel import smem, tile_geometry

    module, (address, _, _) = body
    k = {"128B": 64, "none": 64, "64B": 32}[swizzle]
    g = tile_geometry("bf16", 32 if major == "MN" else 128, k, major, swizzle)
    base = 3 * 1024
    desc = smem.tile_descriptor(address, g)
    i32 = ir.IntegerType.get_signless(32)
    stage_value = llvm.ConstantOp(i32, ir.IntegerAttr.get(i32, 2)).result
    env = {address: base}
    for k_step in range(g.k_steps):
        for stage, stage_arg in [(0, 0), (1, 1), (2, stage_value)]:
            d = smem.step_descriptor(desc, g, k_step=k_step, stage=stage_arg)
            expected = g.descriptor(base + stage * g.tile_bytes, k_step)
            assert evaluate(d, dict(env)) == expected, (k_step, stage)
    module.operation.verify()


def test_step_descriptor_refuses_bad_steps(body):
    from nvwgmma.kernel import smem, tile_geometry

    _, (address, _, pred) = body
    g = tile_geometry("bf16", 128, 64, "K", "128B")
    desc = smem.tile_descriptor(address, g)
    with pytest.raises(ValueError, match=r"k_step must be in \[0, 3\], but got 4"):
        smem.step_descriptor(desc, g, k_step=4)
    with pytest.raises(
        ValueError, match="stage_bytes must be a multiple of the tile alignment 1024"
    ):
        smem.step_descriptor(desc, g, stage=1, stage_bytes=1000)
    with pytest.raises(TypeError, match="desc must be an i64 Value, but got a Value of type i1"):
        smem.step_descriptor(pred, g)
    with pytest.raises(TypeError, match="desc must be an MLIR Value, but got None"):
        smem.step_descriptor(None, g)
