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


def _kernel(d_type, out_type, n, transposed=False):
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
            acc, c, ld, d_type=d_type, n=n, out_type=out_type, row=row, col=col, thread=t,
            transposed=transposed,
        )  # fmt: skip
    module.operation.verify()
    return module


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("d_type,out_type", CASES)
def test_stores_cover_the_tile_once(ctx, d_type, out_type, transposed):
    """Every element of the tile is stored once, by the thread that holds
    it: element (r, c) at r * ld + c, a pair of adjacent columns a store;
    `transposed`, at c * ld + r, one element a store."""
    from nvwgmma.layouts import accumulator_map

    n = 24
    module = _kernel(d_type, out_type, n, transposed=transposed)
    fn = module.body.operations[0]
    c, ld, row, col, t = fn.regions[0].blocks[0].arguments
    stores = [op for op in fn.regions[0].blocks[0].operations if op.name == "llvm.store"]
    per_store = 1 if transposed else 2
    assert len(stores) == n // 2 // per_store
    ldv, rowv, colv = 200, 8, 16
    hit = np.zeros((64, n), int)
    thread_of = accumulator_map("f32", n)[0]
    for thread in range(128):
        env = {ld: ldv, row: rowv, col: colv, t: thread}
        for store in stores:
            index = evaluate(store.operands[1].owner.operands[1], env)
            major, minor = divmod(index, ldv)
            r, cc = (minor, major) if transposed else (major, minor)
            r, cc = r - rowv, cc - colv
            for k in range(per_store):  # untransposed: a pair of adjacent columns
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


def _staged(n, stage):
    """A kernel that stages an m64nN f32 accumulator with `stage(acc, smem,
    thread)`: (module, its block, the thread argument)."""
    from nvwgmma import ir
    from nvwgmma.dialects import nvwgmma as wg

    module = ir.Module.parse(
        "llvm.func @k(%s: !llvm.ptr<3>, %t: i32) attributes {nvvm.kernel} { llvm.return }"
    )
    block = module.body.operations[0].regions[0].blocks[0]
    smem, t = block.arguments
    with ir.InsertionPoint(block.operations[0]):
        stage(wg.zero_accumulator("f32", n), smem, t)
    module.operation.verify()
    return module, block, t


def _staging_kernel(n, out_type, first, width, swizzle):
    from nvwgmma.kernel import epilogue

    return _staged(n, lambda acc, smem, t: epilogue.stage_accumulator(
        acc, smem, d_type="f32", n=n, out_type=out_type, thread=t, columns=(first, width),
        swizzle=swizzle))  # fmt: skip


def _unswizzle(offset, swizzle):
    """(block, row, byte) of a staging offset: the swizzle XORs the 16-byte
    chunk with bits 7.. of the offset (128B: 3 of them, 64B: 2)."""
    block_bytes = 64 * swizzle
    blk, within = divmod(offset, block_bytes)
    within ^= ((within >> 7) & (swizzle // 16 - 1)) << 4
    return (blk, *divmod(within, swizzle))


@pytest.mark.parametrize(
    "n,first,width,swizzle",
    [(128, 0, 64, 128), (128, 32, 32, 128), (128, 0, 128, 128), (112, 0, 112, 64),
     (112, 48, 64, 64), (80, 0, 40, 32), (80, 40, 40, 32), (40, 8, 16, 32)],
)  # fmt: skip
def test_f32_staging_is_the_swizzled_tma_layout(ctx, n, first, width, swizzle):
    """stage_accumulator(out_type="f32"): interpreting each 8-byte store for
    every thread, undoing the swizzle gives back (row, column) of the
    register pair it holds, and the chunk's blocks are covered once."""
    from nvwgmma.kernel import epilogue
    from nvwgmma.layouts import accumulator_map

    _module, block, t = _staging_kernel(n, "f32", first, width, swizzle)
    stores = [op for op in block.operations if op.name == "llvm.store"]
    assert len(stores) == width // 4
    columns = swizzle // 4
    assert epilogue.staging_bytes(width, "f32", swizzle) == width // columns * 64 * swizzle
    thread_of = accumulator_map("f32", n)[0]
    hit = np.zeros((64, width), int)
    for thread in range(128):
        for store in stores:
            offset = evaluate(store.operands[1].owner.operands[1], {t: thread})
            assert offset % 8 == 0
            blk, row, byte = _unswizzle(offset, swizzle)
            col = first + columns * blk + byte // 4
            for k in range(2):
                assert thread_of[row, col + k] == thread
                hit[row, col + k - first] += 1
    assert (hit == 1).all()


@pytest.mark.parametrize(
    "n,first,width,swizzle",
    [(256, 0, 256, 128), (256, 64, 128, 128), (224, 0, 224, 64), (96, 32, 64, 64),
     (80, 0, 80, 32), (112, 16, 48, 32)],
)  # fmt: skip
def test_16bit_staging_is_the_swizzled_tma_layout(ctx, n, first, width, swizzle):
    """stage_accumulator(out_type="bf16"): each stmatrix takes, from lane l
    of warp w, the address of row l % 8 of 8 x 8 matrix l / 8 of its
    16-column group -- accumulator rows 16 w + 8 ((l / 8) % 2) + l % 8,
    columns + 8 (l / 16); undoing the swizzle must give exactly that row
    and column, and the chunk's blocks are covered once."""
    from nvwgmma.kernel import epilogue

    _module, block, t = _staging_kernel(n, "bf16", first, width, swizzle)
    stmatrix = [op for op in block.operations if op.name == "nvvm.stmatrix"]
    assert len(stmatrix) == width // 16
    columns = swizzle // 2
    assert epilogue.staging_bytes(width, "bf16", swizzle) == width // columns * 64 * swizzle
    hit = np.zeros((64, width), int)
    for thread in range(128):
        warp, lane = divmod(thread, 32)
        for group, op in enumerate(stmatrix, start=first // 16):
            offset = evaluate(op.operands[0].owner.operands[1], {t: thread})
            blk, row, byte = _unswizzle(offset, swizzle)
            assert byte % 16 == 0
            col = first + columns * blk + byte // 2
            assert row == 16 * warp + 8 * (lane // 8 % 2) + lane % 8
            assert col == 16 * group + 8 * (lane // 16)
            hit[row, col - first : col - first + 8] += 1
    assert (hit == 1).all()


@pytest.mark.parametrize("n", [16, 24, 80, 200, 256])
def test_transposed_staging_is_the_swizzled_tma_layout(ctx, n):
    """stage_transposed: stmatrix.trans from lane l of warp w writes row
    l % 8 of 8 x 8 matrix l / 8 transposed -- accumulator column 16 group +
    8 (l / 16) + l % 8, its rows 16 w + 8 ((l / 8) % 2) on; undoing the
    swizzle of each address must give that staging row (the column) and
    byte (2 x the first row), every element staged once, x2 for an 8-column
    tail."""
    from nvwgmma.kernel import epilogue

    _module, block, t = _staged(n, lambda acc, smem, t: epilogue.stage_transposed(
        acc, smem, d_type="f32", n=n, out_type="bf16", thread=t))  # fmt: skip
    stmatrix = [op for op in block.operations if op.name == "nvvm.stmatrix"]
    assert len(stmatrix) == -(-n // 16)
    assert all("mma_layout<col>" in str(op.attributes["layout"]) for op in stmatrix)
    assert epilogue.transposed_staging_bytes(n) == 128 * n
    hit = np.zeros((n, 64), int)
    for thread in range(128):
        warp, lane = divmod(thread, 32)
        for group, op in enumerate(stmatrix):
            matrices = len(op.operands) - 1
            if lane >= 8 * matrices:  # x2: lanes 16-31 give no address
                continue
            offset = evaluate(op.operands[0].owner.operands[1], {t: thread})
            _blk, row, byte = _unswizzle(offset, 128)
            row += 64 * _blk
            assert row == 16 * group + 8 * (lane // 16) + lane % 8
            assert byte == 2 * (16 * warp + 8 * (lane // 8 % 2))
            hit[row, byte // 2 : byte // 2 + 8] += 1
    assert (hit == 1).all()


def test_transposed_staging_refuses_what_it_cannot_stage(ctx):
    from nvwgmma import ir
    from nvwgmma.dialects import nvwgmma as wg
    from nvwgmma.kernel import epilogue

    module = ir.Module.parse("llvm.func @k(%s: !llvm.ptr<3>) { llvm.return }")
    block = module.body.operations[0].regions[0].blocks[0]
    with ir.InsertionPoint(block.operations[0]):
        acc = wg.zero_accumulator("f32", 16)
        with pytest.raises(ValueError, match="out_type must be one of bf16, f16 for a "
                           "transposed staging of a f32 accumulator, but got 'f32'"):  # fmt: skip
            epilogue.stage_transposed(acc, block.arguments[0], d_type="f32", n=16,
                                      out_type="f32")  # fmt: skip
    with pytest.raises(ValueError, match="n must be a multiple of 8 for a transposed staging, "
                       "but got 20"):  # fmt: skip
        epilogue.transposed_staging_bytes(20)


def _ops(block, name):
    """`name` ops of `block` and of the regions nested in it, in order."""
    for op in block.operations:
        if op.name == name:
            yield op
        for region in op.regions:
            for inner in region.blocks:
                yield from _ops(inner, name)


@pytest.mark.parametrize("n,out_type,swizzle", [(128, "bf16", 128), (64, "bf16", 128),
                                                (64, "f16", 64), (64, "f32", 128),
                                                (64, "bf16", 32), (32, "f32", 32)])  # fmt: skip
def test_copy_staged_reads_the_staging_and_writes_whole_rows(ctx, n, out_type, swizzle):
    """copy_staged: each 16-byte load, unswizzled, is the chunk of the
    staged tile its store writes at (row + r) * ld + col + chunk; the tile
    is covered once, and a warp's 32 stores of one pass are contiguous."""
    from nvwgmma import ir
    from nvwgmma.kernel import epilogue

    module = ir.Module.parse(
        "llvm.func @k(%s: !llvm.ptr<3>, %g: !llvm.ptr<1>, %t: i32) attributes {nvvm.kernel} "
        "{ llvm.return }"
    )
    block = module.body.operations[0].regions[0].blocks[0]
    smem, ptr, t = block.arguments
    row, col, ld = 192, 64, 1024
    with ir.InsertionPoint(block.operations[0]):
        epilogue.copy_staged(smem, ptr, ld, n=n, out_type=out_type, row=row, col=col, rows=250,
                             thread=t, swizzle=swizzle)  # fmt: skip
    module.operation.verify()
    loads, stores = list(_ops(block, "llvm.load")), list(_ops(block, "llvm.store"))
    ifs = list(_ops(block, "scf.if"))
    element = 4 if out_type == "f32" else 2
    per_row = n * element // 16
    assert len(loads) == len(stores) == len(ifs) == 64 * per_row // 128
    hit = np.zeros((64, per_row), int)
    for thread in range(128):
        for load, store in zip(loads, stores):
            offset = evaluate(load.operands[0].owner.operands[1], {t: thread})
            blk, r, byte = _unswizzle(offset, swizzle)
            chunk = blk * (swizzle // 16) + byte // 16
            index = evaluate(store.operands[1].owner.operands[1], {t: thread})
            assert index == (row + r) * ld + col + chunk * 16 // element
            hit[r, chunk] += 1
    assert (hit == 1).all()
    for store in stores:  # one warp, one pass: 512 contiguous bytes
        first = [evaluate(store.operands[1].owner.operands[1], {t: x}) for x in range(32)]
        rows = {i // ld for i in first}
        assert len(rows) == 512 // (per_row * 16)  # whole rows, each written end to end
        assert sorted(first) == sorted(r * ld + col + c * 16 // element for r in rows
                                       for c in range(per_row))  # fmt: skip
    bound = evaluate(ifs[-1].operands[0].owner.operands[1], {})
    assert bound == 250


def test_copy_staged_refuses_rows_that_do_not_fill_passes(ctx):
    from nvwgmma import ir
    from nvwgmma.kernel import epilogue

    module = ir.Module.parse(
        "llvm.func @k(%s: !llvm.ptr<3>, %g: !llvm.ptr<1>) attributes {nvvm.kernel} { llvm.return }"
    )
    block = module.body.operations[0].regions[0].blocks[0]
    smem, ptr = block.arguments
    with ir.InsertionPoint(block.operations[0]):
        with pytest.raises(ValueError, match="power-of-two count of 16-byte chunks .* but got 192 "
                                             "bf16 columns: 24 chunks"):  # fmt: skip
            epilogue.copy_staged(smem, ptr, 8, n=192, swizzle=64)
        with pytest.raises(TypeError, match=r"ptr must be an !llvm.ptr<1>, but got !llvm.ptr<3>"):
            epilogue.copy_staged(smem, smem, 8, n=64)


def test_staging_swizzle_is_the_widest_that_tiles_the_columns():
    from nvwgmma.kernel import epilogue

    assert [epilogue.staging_swizzle(n) for n in (256, 192, 224, 96, 32)] == [128] * 2 + [64] * 3
    assert [epilogue.staging_swizzle(n) for n in (80, 112, 144, 16)] == [32] * 4
    assert [epilogue.staging_swizzle(n, "f32") for n in (128, 224, 48, 40)] == [128, 128, 64, 32]
    with pytest.raises(ValueError, match="n must be a multiple of 16 for a swizzled bf16 staging"):
        epilogue.staging_swizzle(200)
    with pytest.raises(ValueError, match="n must be a multiple of 8 for a swizzled f32 staging"):
        epilogue.staging_swizzle(36, "f32")
    with pytest.raises(
        ValueError, match="swizzle must be 128, 64 or 32 .bytes per row., but got 16"
    ):
        epilogue.staging_bytes(64, "bf16", 16)
    with pytest.raises(ValueError, match="n must be a multiple of 64 for a 128B-swizzled bf16"):
        epilogue.staging_bytes(224, "bf16")


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


def _tma_reduce_kernel(issue_alone):
    from nvwgmma import ir
    from nvwgmma.kernel import epilogue

    module = ir.Module.parse(
        "llvm.mlir.global external @dsmem() {addr_space = 3 : i32, alignment = 16 : i64}"
        " : !llvm.array<0 x i8>\n"
        "llvm.func @k(%map: !llvm.ptr, %row: i32) attributes {nvvm.kernel} { llvm.return }"
    )
    fn = module.body.operations[1]
    block = fn.regions[0].blocks[0]
    tensor_map, row = block.arguments
    with ir.InsertionPoint(block.operations[0]):
        from nvwgmma.dialects import llvm

        staging = llvm.mlir_addressof(llvm.PointerType.get(3), "dsmem")
        if issue_alone:
            epilogue.issue_tma_store(tensor_map, staging, row=row, col=0, n=64, out_type="f32",
                                     reduce=True)  # fmt: skip
        else:
            epilogue.tma_store(tensor_map, staging, row=row, col=0, n=64, barrier_id=1,
                               out_type="f32", reduce=True)  # fmt: skip
    module.operation.verify()
    return module


@pytest.mark.parametrize("issue_alone", [False, True])
def test_tma_reduce_adds_each_block(ctx, issue_alone):
    """reduce=True: one cp.reduce.async.bulk.tensor .add per 32 f32 columns
    (a 128-byte swizzled block) and one commit; issue_tma_store emits only
    the issue -- no fence or warpgroup barrier of its own."""
    from nvwgmma.compile import compile_to_ptx

    ptx = compile_to_ptx(_tma_reduce_kernel(issue_alone))
    reduces = [line for line in ptx.splitlines() if "cp.reduce.async.bulk.tensor" in line]
    assert len(reduces) == 2 and all(".add" in line for line in reduces), reduces
    assert ptx.count("cp.async.bulk.commit_group") == 1
    assert ("bar.sync" in ptx and "fence.proxy.async" in ptx) is not issue_alone
