"""The accumulator helpers (nvwgmma.kernel.fragment), run on all 128 threads
of a warpgroup by warpgroup_interpret against numpy on the matrix the
registers hold; the layout claims against nvwgmma.layouts' tables; and
every helper compiled and assembled in a kernel."""

import numpy as np
import pytest
from warpgroup_interpret import Warpgroup, accumulator_args


def _build(n, body):
    """A function taking an m64nN f32 accumulator; body(acc) builds the IR
    and returns what the test evaluates."""
    from nvwgmma import ir
    from nvwgmma.dialects import nvwgmma as wg

    ctx = ir.Context()
    with ctx, ir.Location.unknown():
        acc_type = wg.accumulator_type("f32", n)
        module = ir.Module.parse(f"llvm.func @f(%acc: {acc_type}) {{\n  llvm.return\n}}")
        block = module.body.operations[0].regions[0].blocks[0]
        with ir.InsertionPoint(block.operations[0]):
            out = body(block.arguments[0])
    return ctx, module, block.arguments[0], out


def _matrix(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((64, n)).astype(np.float32) * 4


def _run(n, body, matrix):
    ctx, module, arg, out = _build(n, body)
    with ctx:
        wgi = Warpgroup(accumulator_args(arg, matrix))
        return [wgi(v) for v in out] if isinstance(out, list) else wgi(out)


def _rows_of_threads():
    """(128, 2): the two rows each thread holds."""
    t = np.arange(128)
    base = 16 * (t // 32) + (t % 32) // 4
    return np.stack([base, base + 8], axis=1)


@pytest.mark.parametrize("n", [16, 64, 128, 256])
@pytest.mark.parametrize("kind", ["max", "sum"])
def test_row_reduce_gives_every_thread_its_rows(n, kind):
    from nvwgmma.kernel import fragment

    m = _matrix(n, seed=n)
    got = _run(n, lambda acc: fragment.row_reduce(fragment.unpack(acc), kind), m)
    want = (m.max(axis=1) if kind == "max" else m.sum(axis=1, dtype=np.float64))[_rows_of_threads()]
    np.testing.assert_allclose(np.stack(got, axis=1), want, rtol=1e-5, atol=1e-4)


def test_row_reduce_without_quad_keeps_the_thread_partial():
    from nvwgmma.kernel import fragment

    m = _matrix(32, seed=3)
    got = _run(32, lambda acc: fragment.row_sum(fragment.unpack(acc), quad=False), m)
    # Summing the partials of a quad gives the row.
    quad = np.stack(got, axis=1).reshape(32, 4, 2).sum(axis=1)
    np.testing.assert_allclose(quad, m.sum(axis=1)[_rows_of_threads()[::4]], rtol=1e-5, atol=1e-4)
    assert not np.allclose(got[0], np.repeat(got[0][::4], 4))  # not already reduced


def _unpacked_matrix(values, n):
    from nvwgmma.layouts import unpack_accumulator

    regs = np.stack([np.asarray(v, np.float32) for v in values], axis=1).view(np.uint32)
    return unpack_accumulator(regs, "f32", n).view(np.float32)


def test_scale_rows_and_coordinates():
    from nvwgmma.kernel import fragment

    n = 64
    m = _matrix(n, seed=5)

    def body(acc):
        values = fragment.unpack(acc)
        at = fragment.Coordinates(n, row=100, col=7)
        maxes = fragment.row_max(values)
        scaled = fragment.scale_rows(values, maxes)
        return scaled + [at.row(e) for e in range(n // 2)] + [at.col(e) for e in range(n // 2)]

    out = _run(n, body, m)
    k = n // 2
    np.testing.assert_allclose(_unpacked_matrix(out[:k], n), m * m.max(axis=1, keepdims=True))
    rows = _unpacked_matrix([np.asarray(r, np.uint32).view(np.float32) for r in out[k : 2 * k]], n)
    cols = _unpacked_matrix([np.asarray(c, np.uint32).view(np.float32) for c in out[2 * k :]], n)
    r, c = np.meshgrid(np.arange(64), np.arange(n), indexing="ij")
    assert (rows.view(np.uint32) == 100 + r).all() and (cols.view(np.uint32) == 7 + c).all()


@pytest.mark.parametrize("diagonal,limit", [(0, 64), (5, 40), (-3, 17)])
def test_masks_match_numpy(diagonal, limit):
    from nvwgmma.kernel import fragment

    n = 64
    m = _matrix(n, seed=9)

    def body(acc):
        at = fragment.Coordinates(n, row=8, col=0)
        values = fragment.mask_causal(fragment.unpack(acc), at, diagonal=diagonal)
        return fragment.mask_columns(values, at, limit)

    got = _unpacked_matrix(_run(n, body, m), n)
    r, c = np.meshgrid(np.arange(64) + 8, np.arange(n), indexing="ij")
    want = np.where((c <= r + diagonal) & (c < limit), m, -np.inf)
    np.testing.assert_array_equal(got, want)


def _fragment_matrix(frags, a_type):
    """The (64, n) bit patterns the A fragments hold, k step by k step."""
    from nvwgmma.layouts import unpack_a_fragment

    steps = []
    for frag in frags:
        regs = np.stack([np.asarray(r, np.uint64) for r in frag], axis=1).astype(np.uint32)
        steps.append(unpack_a_fragment(regs, a_type))
    return np.concatenate(steps, axis=1)


@pytest.mark.parametrize("a_type", ["bf16", "f16", "e4m3", "e5m2"])
@pytest.mark.parametrize("n", [32, 64, 128])
def test_a_fragments_hold_the_accumulator(a_type, n):
    """Fragment s of to_a_fragments is columns sK .. sK+K-1 of the
    accumulator's matrix, rounded to a_type -- what wgmma multiplies."""
    from nvwgmma.kernel import fragment
    from nvwgmma.layouts import to_bits

    m = _matrix(n, seed=11) / 4
    got = _run(n, lambda acc: fragment.to_a_fragments(fragment.unpack(acc), a_type), m)
    want = to_bits(m, a_type)
    assert len(got) == n // (16 if a_type in ("bf16", "f16") else 32)
    np.testing.assert_array_equal(_fragment_matrix(got, a_type), want)


@pytest.mark.parametrize("a_type", ["e4m3", "e5m2"])
@pytest.mark.parametrize("n", [32, 128])
def test_permuted_fp8_fragments_hold_the_key_order(a_type, n):
    """permuted=True: no shuffles, and fragment K position k holds column
    fp8_key_order(n)[k] -- a permutation of each 32 columns."""
    from nvwgmma.kernel import fragment
    from nvwgmma.layouts import to_bits

    m = _matrix(n, seed=5) / 4
    got = _run(n, lambda acc: fragment.to_a_fragments(fragment.unpack(acc), a_type,
                                                      permuted=True), m)  # fmt: skip
    order = fragment.fp8_key_order(n)
    assert sorted(order) == list(range(n)) and order != list(range(n))
    assert all(c // 32 == k // 32 for k, c in enumerate(order))
    np.testing.assert_array_equal(_fragment_matrix(got, a_type), to_bits(m[:, order], a_type))


def test_permuted_refuses_16_bit_and_partial_steps():
    from nvwgmma.kernel import fragment

    with pytest.raises(ValueError, match="n must be a multiple of 32"):
        fragment.fp8_key_order(48)
    with pytest.raises(ValueError, match="permuted applies to fp8 fragments"):
        _run(16, lambda acc: fragment.to_a_fragments(fragment.unpack(acc), "bf16", permuted=True),
             _matrix(16))  # fmt: skip


@pytest.mark.parametrize("n", [16, 64, 256])
def test_16_bit_fragment_layout_is_the_accumulator_layout(n):
    """The claim behind the no-movement conversion, from the layout tables:
    16-bit fragment s, register r, position p is accumulator element
    8s + 2r + p of the same thread."""
    from nvwgmma.layouts import a_fragment_map, accumulator_map

    a_thread, a_reg, a_pos = a_fragment_map("bf16")
    d_thread, d_reg, _ = accumulator_map("f32", n)
    for s in range(n // 16):
        cols = slice(16 * s, 16 * s + 16)
        assert (d_thread[:, cols] == a_thread).all()
        assert (d_reg[:, cols] == 8 * s + 2 * a_reg + a_pos).all()


def test_fragment_errors():
    from nvwgmma.kernel import fragment

    def body(acc):
        values = fragment.unpack(acc)
        with pytest.raises(ValueError, match="a_type must be one of bf16, f16, e4m3, e5m2"):
            fragment.to_a_fragments(values, "tf32")
        with pytest.raises(ValueError, match="whole k steps of 32 columns"):
            fragment.to_a_fragments(values, "e4m3")  # n = 16: half an fp8 step
        with pytest.raises(ValueError, match="kind must be max or sum"):
            fragment.row_reduce(values, "min")
        with pytest.raises(ValueError, match="factors must be two Values"):
            fragment.scale_rows(values, values[:1])
        with pytest.raises(ValueError, match="a multiple of 4"):
            fragment.row_max(values[:3])
        with pytest.raises(TypeError, match="acc must be an accumulator"):
            fragment.unpack(values[0])
        return []

    _build(16, body)


def test_helpers_assemble_in_a_kernel():
    """Every helper, compiled through compile_to_ptx and assembled: quad
    shuffles, ex2/lg2/rcp, the fp8 conversion with shuffles, math.exp2."""
    pytest.importorskip("nvwgmma._mlir_libs._nvwgmma")
    from nvwgmma import ir
    from nvwgmma.compile import compile_to_ptx
    from nvwgmma.dialects import llvm, math
    from nvwgmma.dialects import nvwgmma as wg
    from nvwgmma.kernel import fastmath, fragment
    from nvwgmma.kernel._ir import gep
    from nvwgmma.tools import find_tool

    if find_tool("ptxas") is None:
        pytest.skip("ptxas not found")
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(
            "llvm.func @k(%out: !llvm.ptr<1>, %x: f32) attributes {nvvm.kernel} {\n  llvm.return\n}"
        )
        func = module.body.operations[0]
        entry = func.regions[0].blocks[0]
        out, x = entry.arguments
        with ir.InsertionPoint(entry.operations[0]):
            acc = wg.zero_accumulator("f32", 64)
            values = [llvm.fadd(v, x) for v in fragment.unpack(acc)]
            at = fragment.Coordinates(64)
            values = fragment.mask_causal(values, at)
            m = fragment.row_max(values)
            values = [fastmath.exp2(llvm.fsub(v, m[(e // 2) % 2])) for e, v in enumerate(values)]
            values[0] = math.exp2(values[0])
            total = fragment.row_sum(values)
            values = fragment.scale_rows(values, [fastmath.reciprocal(t) for t in total])
            frags = fragment.to_a_fragments(values, "bf16") + fragment.to_a_fragments(
                values, "e4m3"
            )
            i32 = ir.IntegerType.get_signless(32)
            for i, f in enumerate(frags):
                for r in range(4):
                    llvm.store(llvm.extractvalue(i32, f, [r]), gep(out, 4 * i + r, i32))
            llvm.store(fastmath.log2(total[1]), out)
        ptx = compile_to_ptx(module, assemble=True)
    assert ptx.count("shfl.sync.bfly.b32") == 8  # 2 rows x 2 lanes x (max, sum)
    assert "ex2.approx.ftz.f32" in ptx and "ex2.approx.f32" in ptx
    assert "lg2.approx.ftz.f32" in ptx and "rcp.approx.ftz.f32" in ptx
    assert ptx.count("shfl.sync.idx.b32") == 2 * 4 * 2  # 2 fp8 steps x 4 registers x 2
    assert ptx.count("cvt.rn.bf16x2.f32") == 16 and ptx.count("cvt.rn.satfinite.e4m3x2.f32") == 16


@pytest.mark.parametrize("degree,bound", [(3, 8e-5), (4, 3e-6)])
def test_exp2_fma_is_exp2_within_its_bound(degree, bound):
    """fastmath.exp2_fma on every thread: within its polynomial's relative
    bound of 2^x over the softmax's range and past it (lazy rescaling's
    2^8), below 2^-126 under -126, +0 at -inf and from -128 down."""
    from nvwgmma.kernel import fastmath, fragment

    rng = np.random.default_rng(degree)
    x = rng.uniform(-126, 8, (64, 64)).astype(np.float32)
    x[0, :16] = np.arange(-8, 8)  # integers: f = 0
    x[2, :8] = np.linspace(-127.9, -126.1, 8)  # the exponent's underflow
    x[1, :4] = [-np.inf, -128.0, -200.0, -1e30]
    got = np.stack(
        _run(64, lambda acc: [fastmath.exp2_fma(v, degree=degree) for v in fragment.unpack(acc)],
             x), axis=1)  # fmt: skip
    want = _per_thread(np.exp2(x.astype(np.float64)))
    got = got.astype(np.float64)
    tiny = want < 2.0**-126
    assert (got[tiny] < 2.0**-126).all()
    assert np.abs(got[~tiny] / want[~tiny] - 1).max() <= bound
    zero = np.isin(_per_thread(x), [-np.inf, -128.0, -200.0, -1e30])
    assert (got[zero] == 0).all()


def _per_thread(matrix):
    """(128, elements): each thread's accumulator elements of `matrix`."""
    from nvwgmma.layouts import accumulator_map

    thread, reg, _ = accumulator_map("f32", matrix.shape[1])
    out = np.empty((128, matrix.size // 128), matrix.dtype)
    out[thread, reg] = matrix
    return out


def test_exp2_fma_refuses_other_degrees():
    from nvwgmma import ir
    from nvwgmma.kernel import fastmath

    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse("llvm.func @f(%x: f32, %i: i32) {\n  llvm.return\n}")
        block = module.body.operations[0].regions[0].blocks[0]
        with ir.InsertionPoint(block.operations[0]):
            with pytest.raises(ValueError, match="degree must be 3 or 4, but got 2"):
                fastmath.exp2_fma(block.arguments[0], degree=2)
            with pytest.raises(TypeError, match="x must be an f32 Value, but got i32"):
                fastmath.exp2_fma(block.arguments[1])
