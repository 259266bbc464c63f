"""The protocol passes from Python, as pass-pipeline strings."""

import pytest

BAD = """
func.func @k(%da: i64, %db: i64, %acc: !llvm.struct<(f32, f32, f32, f32)>) -> f32 {
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col]
         : i64, !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
  %v = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
  return %v : f32
}
"""


def run(module, pipeline):
    from nvwgmma.passmanager import PassManager

    PassManager.parse(f"builtin.module({pipeline})").run(module.operation)


def test_checker_raises_with_labels(ctx):
    from nvwgmma import ir

    module = ir.Module.parse(BAD)
    with pytest.raises(ir.MLIRError) as info:
        run(module, "nvwgmma-check-protocol")
    text = str(info.value)
    assert "(protocol_c1)" in text and "(protocol_c4)" in text


def test_insert_then_check(ctx):
    from nvwgmma import ir

    module = ir.Module.parse(BAD)
    run(module, "nvwgmma-insert-synchronization,nvwgmma-check-protocol")
    ops = [op.operation.name for op in module.body.operations[0].regions[0].blocks[0].operations]
    # The commit and wait go before the op that reads the register (the
    # return), not before the extractvalue, which moves no data.
    assert ops == [
        "nvwgmma.fence",
        "nvwgmma.mma_async",
        "llvm.extractvalue",
        "nvwgmma.commit_group",
        "nvwgmma.wait_group",
        "func.return",
    ]
