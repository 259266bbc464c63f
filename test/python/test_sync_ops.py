"""fence / commit_group / wait_group from Python: build, verify, print, lower."""

import pytest


def build_sync_module():
    from nvwgmma import ir
    from nvwgmma.dialects import func
    from nvwgmma.dialects import nvwgmma as wg

    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        f = func.FuncOp("sync", ir.FunctionType.get([], []))
        with ir.InsertionPoint(f.add_entry_block()):
            wg.fence()
            wg.commit_group()
            wg.wait_group(0)
            wg.wait_group(2**63 - 1)
            func.ReturnOp([])
    return module


def run(module, pipeline):
    from nvwgmma.passmanager import PassManager

    PassManager.parse(f"builtin.module({pipeline})").run(module.operation)
    return str(module)


def test_build_verify_print(ctx):
    module = build_sync_module()
    assert module.operation.verify()
    text = str(module)
    assert "nvwgmma.fence\n" in text
    assert "nvwgmma.commit_group\n" in text
    assert "nvwgmma.wait_group 0\n" in text
    assert "nvwgmma.wait_group 9223372036854775807\n" in text


def test_generated_classes(ctx):
    from nvwgmma.dialects import nvwgmma as wg

    module = build_sync_module()
    ops = list(module.body.operations[0].regions[0].blocks[0].operations)
    assert isinstance(ops[0], wg.FenceOp)
    assert isinstance(ops[1], wg.CommitGroupOp)
    assert isinstance(ops[2], wg.WaitGroupOp)
    assert ops[3].group.value == 2**63 - 1


def test_convert_to_nvvm(ctx):
    text = run(build_sync_module(), "convert-nvwgmma-to-nvvm")
    assert "nvvm.wgmma.fence.aligned" in text
    assert "nvvm.wgmma.commit.group.sync.aligned" in text
    assert "nvvm.wgmma.wait.group.sync.aligned 0" in text
    assert "nvwgmma." not in text


def test_convert_to_llvm(ctx):
    text = run(build_sync_module(), "convert-nvwgmma-to-llvm")
    assert 'llvm.call_intrinsic "llvm.nvvm.wgmma.fence.sync.aligned"()' in text
    assert 'llvm.call_intrinsic "llvm.nvvm.wgmma.commit_group.sync.aligned"()' in text
    assert "llvm.mlir.constant(9223372036854775807 : i64) : i64" in text
    assert 'llvm.call_intrinsic "llvm.nvvm.wgmma.wait_group.sync.aligned"' in text
    assert "nvwgmma." not in text


def test_ptx_text_of_sync_ops(ctx):
    from nvwgmma.dialects import nvwgmma as wg

    module = build_sync_module()
    ops = list(module.body.operations[0].regions[0].blocks[0].operations)
    assert wg.ptx(ops[0]) == "wgmma.fence.sync.aligned;"
    assert wg.ptx(ops[1]) == "wgmma.commit_group.sync.aligned;"
    assert wg.ptx(ops[2]) == "wgmma.wait_group.sync.aligned 0;"


@pytest.mark.parametrize("n", [-1, -(2**63)])
def test_negative_wait_group_raises(ctx, n):
    from nvwgmma.dialects import nvwgmma as wg

    with pytest.raises(wg.WgmmaRuleError) as info:
        wg.wait_group(n)
    assert info.value.label == "wait_group_c1"
    assert f"but got {n}" in str(info.value)


def test_invalid_text_raises_not_aborts(ctx):
    from nvwgmma import ir

    with pytest.raises(ir.MLIRError, match=r"wait_group_c1"):
        ir.Module.parse("func.func @f() {\n nvwgmma.wait_group -1\n return\n}")
    # The interpreter is still alive and the context usable.
    assert ir.Module.parse("func.func @g() { return }") is not None


def test_generic_op_without_builder_raises_on_verify(ctx):
    from nvwgmma import ir

    op = ir.Operation.create(
        "nvwgmma.wait_group",
        attributes={"group": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), -5)},
    )
    with pytest.raises(ir.MLIRError, match=r"but got -5 \(wait_group_c1\)"):
        op.verify()
