"""kernel.pipeline builds the ring on upstream ops, with the phases of the
PTX mbarrier model; kernel.tensormap says what it needs when cuda-python is
absent."""

import pytest
from ir_interpret import evaluate


def test_ring_phases_and_ops(body):
    from nvwgmma import ir
    from nvwgmma.dialects import llvm
    from nvwgmma.kernel import pipeline

    module, (_, _, _) = body
    base = llvm.mlir_zero(llvm.PointerType.get(3))
    ring = pipeline.Ring(base, stages=3, consumers=2)
    assert ring.bytes == 48
    ring.init()
    k = llvm.mlir_zero(ir.IntegerType.get_signless(32))
    stage, phase = ring.stage_and_phase(k)
    for kv in range(10):
        assert evaluate(stage, {k: kv}) == kv % 3
        assert evaluate(phase, {k: kv}) == (kv // 3) & 1
    ring.producer_acquire(stage, phase)
    ring.producer_expect(stage, 32768)
    ring.load(llvm.mlir_zero(llvm.PointerType.get()), base, (k, k), stage)
    ring.consumer_wait(stage, phase)
    ring.consumer_release(stage)
    module.operation.verify()
    names = [op.name for op in module.body.operations[0].regions[0].blocks[0].operations]
    assert names.count("nvvm.mbarrier.init") == 6
    assert names.count("nvvm.mbarrier.try_wait.parity") == 2
    assert "nvvm.mbarrier.arrive.expect_tx" in names and "nvvm.mbarrier.arrive" in names
    assert "nvvm.cp.async.bulk.tensor.shared.cluster.global" in names
    # The producer's first round passes on a fresh barrier: it waits for
    # parity (k / S & 1) ^ 1 = 1, the phase "before" phase 0.
    waits = [
        op
        for op in module.body.operations[0].regions[0].blocks[0].operations
        if op.name == "nvvm.mbarrier.try_wait.parity"
    ]
    assert evaluate(waits[0].operands[1], {k: 0}) == 1
    assert evaluate(waits[1].operands[1], {k: 0}) == 0


def test_ring_refuses_bad_arguments(body):
    from nvwgmma.dialects import llvm
    from nvwgmma.kernel import pipeline

    with pytest.raises(TypeError, match=r"base must be an !llvm.ptr<3>, but got !llvm.ptr<1>"):
        pipeline.Ring(llvm.mlir_zero(llvm.PointerType.get(1)), stages=2, consumers=1)
    ring = pipeline.Ring(llvm.mlir_zero(llvm.PointerType.get(3)), stages=2, consumers=1)
    with pytest.raises(ValueError, match=r"index must be in \[0, 1\], but got 2"):
        ring.full.at(2)
    with pytest.raises(ValueError, match="coordinates must have 1 to 5 entries"):
        ring.load(llvm.mlir_zero(llvm.PointerType.get()), ring.full.base, (), 0)


def test_tensormap_without_cuda_python_says_so(monkeypatch):
    import builtins

    from nvwgmma.kernel import tensormap, tile_geometry

    real_import = builtins.__import__

    def no_cuda(name, *args, **kwargs):
        if name.startswith("cuda"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cuda)
    box = tile_geometry("bf16", 128, 64, "K", "128B").tma()
    with pytest.raises(ImportError, match="encode_tiled needs cuda-python"):
        tensormap.encode_tiled(1 << 20, "bf16", rows=128, cols=64, box=box)
    with pytest.raises(ValueError, match="16-byte aligned"):
        tensormap.encode_tiled(8, "bf16", rows=128, cols=64, box=box)
