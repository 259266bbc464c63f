"""Property: any arguments to a public nvwgmma function give either a good
result (a verified op whose kernel assembles with ptxas, or a correct value)
or a Python exception of the documented kinds -- never an abort.

This file runs in a child process (test/python/test_properties.py), so an
abort of the interpreter is seen as the child's death, not as a hang.
"""

from __future__ import annotations

import shutil

import numpy as np
from conftest import count
from hypothesis import given
from hypothesis import strategies as st
from nvwgmma import ir
from nvwgmma.compile import CompileError, compile_to_ptx
from nvwgmma.dialects import llvm
from nvwgmma.dialects import nvwgmma as wg
from nvwgmma.errors import WgmmaRuleError

HAVE_PTXAS = shutil.which("ptxas") is not None
# What a public function may raise for bad arguments.
EXPECTED = (TypeError, ValueError, WgmmaRuleError)

TYPE_NAMES = ["f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8", "b1", "f32", "s32"]
type_names = st.one_of(
    st.sampled_from(TYPE_NAMES),
    st.sampled_from(["s4", "F16", "", "f64", "i8"]),
    st.sampled_from(list(wg.ElemType)),
    st.integers(-3, 12),
    st.none(),
    st.text(max_size=4),
)
# N, K, M: mostly plausible, sometimes absurd.
dims = st.one_of(
    st.sampled_from([8, 16, 24, 32, 40, 48, 64, 128, 136, 240, 256]),
    st.integers(-10, 300),
    st.sampled_from([0, -8, 264, 2**31, 2**63, -(2**63) - 1, 2**70]),
)
flags = st.one_of(st.booleans(), st.sampled_from([None, 0, 1, "yes", 2.5]))
# Operands, named, made inside the example's kernel.
OPERANDS = ["desc_a", "desc_b", "pred", "meta", "f32", "frag", "frag_f16", "frag3", "acc"]
operands = st.one_of(st.sampled_from(OPERANDS), st.sampled_from([None, 0, "x"]))


class Kernel:
    """A fresh context and an llvm.func kernel to build into."""

    def __init__(self):
        self.context = ir.Context()
        self.context.__enter__()
        self.location = ir.Location.unknown()
        self.location.__enter__()
        self.module = ir.Module.parse(
            "llvm.func @k(%a: i64, %b: i64, %p: i1, %m: i32, %x: f32) "
            "attributes {nvvm.kernel} { llvm.return }"
        )
        block = self.module.body.operations[0].regions[0].blocks[0]
        self.ip = ir.InsertionPoint(block.operations[0])
        self.ip.__enter__()
        self.args = dict(zip(["desc_a", "desc_b", "pred", "meta", "f32"], block.arguments))

    def operand(self, name, acc=None):
        if not isinstance(name, str) or name not in OPERANDS:
            return name
        if name == "acc":
            return acc
        if name == "frag":
            return llvm.mlir_zero(wg.a_fragment_type())
        if name == "frag_f16":
            return llvm.mlir_zero(wg.a_fragment_type(ir.VectorType.get([2], ir.F16Type.get())))
        if name == "frag3":
            i32 = ir.IntegerType.get_signless(32)
            return llvm.mlir_zero(llvm.StructType.get_literal([i32] * 3))
        return self.args[name]

    def close(self):
        self.ip.__exit__(None, None, None)
        self.location.__exit__(None, None, None)
        self.context.__exit__(None, None, None)

    def assembles(self):
        """The kernel verifies and, with ptxas present, assembles."""
        self.module.operation.verify()
        if HAVE_PTXAS:
            ptx = compile_to_ptx(self.module, assemble=True)
            assert "wgmma" in ptx


def build_kernel():
    return Kernel()


@given(d_type=type_names, n=dims)
def test_accumulator_builders(d_type, n):
    count("zero_accumulator/accumulator_type")
    k = build_kernel()
    try:
        acc = wg.zero_accumulator(d_type, n)
    except EXPECTED:
        return
    finally:
        k.close()
    members = llvm.StructType(acc.type).body
    assert len(members) in (n // 2, n // 4) and n % 8 == 0


@given(n=st.one_of(st.integers(), st.sampled_from([None, "1", 1.0, True])))
def test_wait_group(n):
    count("wait_group")
    k = build_kernel()
    try:
        op = wg.wait_group(n)
    except EXPECTED:
        k.close()
        return
    wg.commit_group()
    assert n >= 0
    assert f"wgmma.wait_group.sync.aligned {n};" in wg.ptx(op)
    k.assembles()
    k.close()


mma_options = st.fixed_dictionaries(
    {
        "shape": st.one_of(
            st.tuples(st.sampled_from([64, 32, 0]), dims, st.sampled_from([8, 16, 32, 64, 256])),
            st.tuples(dims, dims, dims),
            st.sampled_from([None, (64, 8), "64x8x16", (64.0, 8, 16)]),
        ),
        "a_type": type_names,
        "d_type": type_names,
    },
    optional={
        "b_type": type_names,
        "scale_d": st.one_of(flags, st.sampled_from(["pred", "meta"])),
        "negate_a": flags,
        "negate_b": flags,
        "transpose_a": flags,
        "transpose_b": flags,
        "satfinite": flags,
        "bogus": st.just(1),
    },
)


def _mma(builder, options, acc_spec, a, b, extra=()):
    count(builder.__name__)
    k = build_kernel()
    try:
        options = dict(options)
        if options.get("scale_d") in ("pred", "meta"):
            options["scale_d"] = k.operand(options["scale_d"])
        try:
            acc = wg.zero_accumulator(*acc_spec)
        except EXPECTED:
            acc = k.operand("f32")
        operands = [k.operand(x, acc) for x in (a, b, *extra)]
        try:
            d = builder(k.operand("acc", acc), operands[0], operands[1], *operands[2:], **options)
        except EXPECTED:
            return
        wg.commit_group()
        wg.wait_group(0)
        assert d.type == acc.type
        assert "wgmma.mma_async" in wg.ptx(d)
        k.assembles()
    finally:
        k.close()


@given(
    options=mma_options,
    acc=st.tuples(type_names, dims),
    a=operands,
    b=operands,
)
def test_mma_async(options, acc, a, b):
    _mma(wg.mma_async, options, acc, a, b)


@given(
    options=mma_options,
    acc=st.tuples(type_names, dims),
    a=operands,
    b=operands,
    meta=operands,
    selector=st.one_of(st.integers(-2, 4), st.sampled_from([2**64, None, "0"])),
)
def test_mma_async_sp(options, acc, a, b, meta, selector):
    options = dict(options, selector=selector)
    _mma(wg.mma_async_sp, options, acc, a, b, (meta,))


@given(
    address=st.sampled_from(["desc_a", "meta", "f32", "pred", None, 7]),
    lbo=st.one_of(st.integers(-32, 2**20), st.sampled_from([16, 1024, None])),
    sbo=st.one_of(st.integers(-32, 2**20), st.sampled_from([16, 1024, "x"])),
    swizzle=st.sampled_from(["none", "128B", "64B", "32B", "16B", 0, None]),
    base=st.integers(-2, 9),
    step=st.one_of(st.integers(-(2**20), 2**20), st.sampled_from([32, 2**64, None])),
)
def test_descriptor_builders(address, lbo, sbo, swizzle, base, step):
    count("descriptor/advance_descriptor")
    k = build_kernel()
    try:
        try:
            d = wg.descriptor(
                k.operand(address),
                leading_byte_offset=lbo,
                stride_byte_offset=sbo,
                swizzle=swizzle,
                base_offset=base,
            )
        except EXPECTED:
            return
        assert str(d.type) == "i64"
        try:
            wg.advance_descriptor(d, step)
        except EXPECTED:
            pass
        k.module.operation.verify()
    finally:
        k.close()


@given(
    thing=st.one_of(st.sampled_from(["desc_a", "frag", "op"]), st.integers(), st.text(), st.none())
)
def test_ptx_queries(thing):
    count("ptx/inline_asm")
    k = build_kernel()
    try:
        target = wg.fence() if thing == "op" else k.operand(thing)
        for query in (wg.ptx, wg.inline_asm):
            try:
                text = query(target)
            except EXPECTED:
                continue
            assert thing == "op" and "wgmma.fence" in str(text)
    finally:
        k.close()


@given(a_type=type_names, b_type=st.one_of(st.none(), type_names), sparse=flags)
def test_lattice_queries(a_type, b_type, sparse):
    from nvwgmma import lattice

    count("lattice")
    try:
        fam = lattice.family(a_type, b_type)
    except EXPECTED:
        return
    assert fam.k in (8, 16, 32, 256) and all(8 <= n <= 256 for n in fam.n_values)
    try:
        k = lattice.instruction_k(a_type, b_type, sparse=sparse)
    except EXPECTED:
        return
    assert k in (fam.k, fam.sparse_k)


@given(
    d_type=type_names,
    n=dims,
    a_type=type_names,
    rows=st.integers(-8, 80),
    kdim=st.integers(-8, 80),
    major=st.sampled_from(["K", "MN", "x", None]),
    swizzle=st.sampled_from(["none", "128B", "64B", "32B", "7B"]),
)
def test_layout_helpers(d_type, n, a_type, rows, kdim, major, swizzle):
    from nvwgmma import layouts as L

    count("layouts")
    try:
        thread, register, _ = L.accumulator_map(d_type, n)
        assert (thread >= 0).all()
    except EXPECTED:
        pass
    try:
        L.a_fragment_map(a_type)
    except EXPECTED:
        pass
    try:
        bits = np.zeros((max(rows, 0), max(kdim, 0)), np.uint64)
        L.shared_tile(bits, a_type, major, swizzle)
    except EXPECTED:
        pass


@given(
    type_name=type_names,
    shape=st.tuples(st.integers(0, 8), st.integers(0, 70)),
    selector=st.integers(-1, 3),
)
def test_sparsity_helpers(type_name, shape, selector):
    from nvwgmma import sparsity as S

    count("sparsity")
    rng = np.random.default_rng(0)
    try:
        bits = S.random_sparse(rng, rng.integers(0, 255, shape).astype(np.uint64), type_name)
        values, positions = S.compress(bits, type_name)
        assert (S.expand(values, positions, type_name) == bits).all()
        S.pack_metadata(positions[:64], type_name, selector)
    except EXPECTED:
        pass


@given(
    module=st.sampled_from(["module", None, "text", 3]),
    chip=st.sampled_from(["sm_90a", "sm_90", "", "sm 90", None]),
    version=st.one_of(st.none(), st.integers(-5, 200), st.just("8.0")),
    assemble=flags,
)
def test_compile_to_ptx(module, chip, version, assemble):
    count("compile_to_ptx")
    k = build_kernel()
    try:
        wg.fence()
        target = k.module if module == "module" else module
        try:
            ptx = compile_to_ptx(target, chip=chip, ptx_version=version, assemble=assemble)
        except (*EXPECTED, CompileError, ir.MLIRError):
            return
        assert ".target sm_90a" in ptx
    finally:
        k.close()
