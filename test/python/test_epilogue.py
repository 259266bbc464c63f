"""kernel.epilogue: the stores it builds hit exactly the accumulator layout
(interpreting the address arithmetic for every thread and register pair),
and kernels using it assemble for every accumulator/output pair."""

import numpy as np
import pytest
from ir_interpret import evaluate

CASES = [
    ("f32", "f32"),
    ("f32", "bf16"),
    ("f32", "f16"),
    ("f16", "f16"),
    ("f16", "f32"),
    ("s32", "s32"),
]


def _kernel(d_type, out_type, n):
    from nvwgmma import ir
    from nvwgmma.dialects import nvwgmma as wg
    from nvwgmma.kernel import epilogue

    module = ir.Module.parse(
        "llvm.func @k(%c: !llvm.ptr<1>, %ld: i32, %row: i32, %col: i64, %t: i32) "
        "attributes {nvvm.kernel} { llvm.return }"
    )
    block = module.body.operations[0].regions[0].blocks[0]
    c, ld, row, col, t = block.arguments
    with ir.InsertionPoint(block.operations[0]):
        acc = wg.zero_accumulator(d_type, n)
        epilogue.store_accumulator(
            acc, c, ld, d_type=d_type, n=n, out_type=out_type, row=row, col=col, thread=t
        )
    module.operation.verify()
    return module


@pytest.mark.parametrize("d_type,out_type", CASES)
def test_stores_cover_the_tile_once(ctx, d_type, out_type):
    from nvwgmma.layouts import accumulator_map

    n = 24
    module = _kernel(d_type, out_type, n)
    fn = module.body.operations[0]
    c, ld, row, col, t = fn.regions[0].blocks[0].arguments
    stores = [op for op in fn.regions[0].blocks[0].operations if op.name == "llvm.store"]
    assert len(stores) == n // 4
    ldv, rowv, colv = 40, 8, 16
    hit = np.zeros((64, n), int)
    thread_of = accumulator_map("f32", n)[0]
    for thread in range(128):
        env = {ld: ldv, row: rowv, col: colv, t: thread}
        for store in stores:
            gep = store.operands[1].owner
            index = evaluate(gep.operands[1], env)
            r, cc = divmod(index, ldv)
            r, cc = r - rowv, cc - colv
            for k in range(2):  # a pair: two adjacent columns
                assert thread_of[r, cc + k] == thread
                hit[r, cc + k] += 1
    assert (hit == 1).all()


@pytest.mark.ptxas
@pytest.mark.parametrize("d_type,out_type", CASES)
def test_epilogue_kernels_assemble(ctx, d_type, out_type):
    from nvwgmma.compile import compile_to_ptx

    ptx = compile_to_ptx(_kernel(d_type, out_type, 256), assemble=True)
    # One store per register pair: 8 bytes (two f32/s32) or 4 (two halves).
    store = "st.global.v2.b32" if out_type in ("f32", "s32") else "st.global.b32"
    assert ptx.count(store) == 64 and ptx.count("st.global") == 64


def test_refuses_mismatched_accumulator(ctx):
    from nvwgmma import ir
    from nvwgmma.dialects import nvwgmma as wg
    from nvwgmma.kernel import epilogue

    module = ir.Module.parse("llvm.func @k(%c: !llvm.ptr<1>) { llvm.return }")
    block = module.body.operations[0].regions[0].blocks[0]
    with ir.InsertionPoint(block.operations[0]):
        acc = wg.zero_accumulator("f32", 16)
        with pytest.raises(
            TypeError, match="acc must be the !llvm.struct of 4 registers of an m64n8 f32"
        ):
            epilogue.store_accumulator(acc, block.arguments[0], 8, d_type="f32", n=8)
        with pytest.raises(ValueError, match="out_type must be one of s32 for a s32 accumulator"):
            epilogue.store_accumulator(
                acc, block.arguments[0], 8, d_type="s32", n=16, out_type="f32"
            )


@pytest.mark.parametrize("first,width", [(0, 64), (32, 32), (0, 128)])
def test_f32_staging_is_the_swizzled_tma_layout(ctx, first, width):
    """stage_accumulator(out_type="f32"): interpreting each 8-byte store for
    every thread, undoing the 128-byte swizzle gives back (row, column) of
    the register pair it holds, and the chunk's blocks are covered once."""
    from nvwgmma import ir
    from nvwgmma.dialects import nvwgmma as wg
    from nvwgmma.kernel import epilogue
    from nvwgmma.layouts import accumulator_map

    n = 128
    module = ir.Module.parse(
        "llvm.func @k(%s: !llvm.ptr<3>, %t: i32) attributes {nvvm.kernel} { llvm.return }"
    )
    block = module.body.operations[0].regions[0].blocks[0]
    smem, t = block.arguments
    with ir.InsertionPoint(block.operations[0]):
        acc = wg.zero_accumulator("f32", n)
        epilogue.stage_accumulator(
            acc, smem, d_type="f32", n=n, out_type="f32", thread=t, columns=(first, width)
        )
    module.operation.verify()
    stores = [op for op in block.operations if op.name == "llvm.store"]
    assert len(stores) == width // 4
    assert epilogue.staging_bytes(width, "f32") == width // 32 * 8192
    thread_of = accumulator_map("f32", n)[0]
    hit = np.zeros((64, width), int)
    for thread in range(128):
        for store in stores:
            offset = evaluate(store.operands[1].owner.operands[1], {t: thread})
            assert offset % 8 == 0
            blk, within = divmod(offset, 8192)
            row, swizzled = divmod(within, 128)
            byte = swizzled ^ ((row % 8) << 4)
            col = first + 32 * blk + byte // 4
            for k in range(2):
                assert thread_of[row, col + k] == thread
                hit[row, col + k - first] += 1
    assert (hit == 1).all()


@pytest.mark.parametrize("between", [(), (3,)])
def test_tma_store_coordinates(ctx, between):
    """tma_store issues one box per 64 16-bit columns at (col + 64 b,
    *between, row, batch): `between` sits between the column and the row
    (a head of a (head dim, heads, tokens, batch) map)."""
    from nvwgmma import ir
    from nvwgmma.kernel import epilogue

    module = ir.Module.parse(
        "llvm.func @k(%m: !llvm.ptr, %s: !llvm.ptr<3>, %t: i32) attributes {nvvm.kernel} "
        "{ llvm.return }"
    )
    block = module.body.operations[0].regions[0].blocks[0]
    tensor_map, smem, t = block.arguments
    with ir.InsertionPoint(block.operations[0]):
        epilogue.tma_store(tensor_map, smem, row=70, col=0, n=128, barrier_id=2, thread=t,
                           batch=5, between=between)  # fmt: skip
    module.operation.verify()
    stores = [op for op in module.body.operations[0].regions[0].blocks[0].operations
              for region in op.regions for b in region.blocks for op in b.operations
              if op.name == "nvvm.cp.async.bulk.tensor.global.shared.cta"]  # fmt: skip
    assert len(stores) == 2
    for b, store in enumerate(stores):
        coords = [evaluate(v, {}) for v in list(store.operands)[2:]]
        assert coords == [64 * b, *between, 70, 5]
