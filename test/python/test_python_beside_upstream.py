"""nvwgmma and upstream MLIR's own Python bindings in one process.

Both embed an MLIR core under their own package (`nvwgmma.ir`, `mlir.ir`) and
nanobind domain (`nvwgmma`, `mlir`), so neither registers the other's
classes. A module moves between them as text (upstream, which does not know the
nvwgmma dialect, carries our ops in generic form) or as bytecode.

Skipped where upstream's bindings are not installed (PyPI has no build of
them); test/install/upstream-bindings/CMakeLists.txt builds them from the
MLIR wheel's sources.
"""

from __future__ import annotations

import io

import pytest

upstream_ir = pytest.importorskip("mlir.ir", reason="upstream MLIR's Python bindings")

from nvwgmma import ir  # noqa: E402
from nvwgmma.dialects import nvwgmma as wg  # noqa: E402

KERNEL = """
func.func @k(%a: i64, %b: i64) {
  return
}
"""


def build_module():
    with ir.Context() as ctx, ir.Location.unknown():
        module = ir.Module.parse(
            "llvm.func @k(%a: i64, %b: i64) attributes {nvvm.kernel} { llvm.return }"
        )
        block = module.body.operations[0].regions[0].blocks[0]
        a, b = block.arguments
        with ir.InsertionPoint(block.operations[0]):
            acc = wg.zero_accumulator("f32", 64)
            wg.fence()
            wg.mma_async(acc, a, b, shape=(64, 64, 16), a_type="bf16", d_type="f32", scale_d=False)
            wg.commit_group()
            wg.wait_group(0)
        assert module.operation.verify()
        generic = module.operation.get_asm(print_generic_op_form=True)
        buffer = io.BytesIO()
        module.operation.write_bytecode(buffer)
        return str(module), generic, buffer.getvalue(), ctx


def test_both_bindings_load_in_one_process():
    assert ir.Context is not upstream_ir.Context
    assert ir.Module is not upstream_ir.Module
    with ir.Context(), upstream_ir.Context():
        pass


def test_module_round_trips_through_upstream_as_text():
    text, generic, _, _ = build_module()
    with upstream_ir.Context() as uctx:
        uctx.allow_unregistered_dialects = True
        theirs = upstream_ir.Module.parse(generic)
        assert "nvwgmma.mma_async" in str(theirs)
        back_text = theirs.operation.get_asm(print_generic_op_form=True)
    with ir.Context():
        back = ir.Module.parse(back_text)
        assert back.operation.verify()
        assert str(back) == text


def test_bytecode_moves_both_ways():
    """Our bytecode reads in upstream (our ops unregistered there), and
    upstream's bytecode of upstream ops reads in nvwgmma. (Bytecode that
    upstream re-writes for ops it does not know keeps their properties as
    plain attributes, which our registered ops cannot read back: move such
    modules as text, or use the mlir-opt plugin, where upstream knows us.)"""
    _, _, bytecode, _ = build_module()
    with upstream_ir.Context() as uctx:
        uctx.allow_unregistered_dialects = True
        theirs = upstream_ir.Module.parse(bytecode)
        assert '"nvwgmma.mma_async"' in str(theirs)
        plain = upstream_ir.Module.parse(KERNEL)
        buffer = io.BytesIO()
        plain.operation.write_bytecode(buffer)
    with ir.Context():
        back = ir.Module.parse(buffer.getvalue())
        assert back.operation.verify()
        assert "func.func @k(%arg0: i64, %arg1: i64)" in str(back)


def test_upstream_module_with_upstream_ops_reaches_nvwgmma():
    with upstream_ir.Context():
        theirs = upstream_ir.Module.parse(KERNEL)
        text = str(theirs)
    with ir.Context():
        ours = ir.Module.parse(text)
        assert ours.operation.verify()
        assert "func.func @k" in str(ours)
