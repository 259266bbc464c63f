"""A TMA + mbarrier ring buffer in IR, on upstream `nvvm.mbarrier.*` and
`nvvm.cp.async.bulk.tensor.*` ops.

    ring = pipeline.Ring(barrier_base, stages=4, consumers=2)
    ring.init()                                   # one thread, then a CTA barrier
    # producer, iteration k (one elected thread):
    stage, phase = ring.stage_and_phase(k)
    ring.producer_acquire(stage, phase)           # the stage is free again
    ring.producer_expect(stage, bytes_per_stage)  # arrive.expect_tx on full[stage]
    ring.load(tensor_map, dst, (x, y), stage, bytes=box.bytes)  # TMA into dst, on full[stage]
    # consumer, iteration k:
    ring.consumer_wait(stage, phase)              # the stage's bytes have landed
    ... wgmma on the stage, wait_group ...
    ring.consumer_release(stage)                  # one arrival per consumer group

Phases follow the PTX ISA's mbarrier model (9.7.13.15): a barrier starts in
phase 0; `try_wait.parity P` returns once the phase of parity P completed.
Iteration k uses stage k mod S in its (k / S)-th round: consumers wait for
parity (k / S) & 1 of full[stage]; the producer waits for the opposite
parity of empty[stage], which the barrier's initial state already
satisfies in the first round (nothing to release yet).
"""

from __future__ import annotations

from .. import _checks
from ._ir import as_i32, gep, i32_constant

__all__ = ["Barriers", "Ring", "expect_tx", "load_tile", "wait_parity"]

_BARRIER_BYTES = 8  # one mbarrier object


class Barriers:
    """`count` mbarriers, 8 bytes each, from `base` (an `!llvm.ptr<3>`,
    8-byte aligned)."""

    def __init__(self, base, count: int):
        from ..dialects import llvm

        self.base = _checks.value(base, "base")
        if not (isinstance(self.base.type, llvm.PointerType) and self.base.type.address_space == 3):
            raise TypeError(f"base must be an !llvm.ptr<3>, but got {self.base.type}")
        self.count = _checks.integer(count, "count", 1, 1 << 12)

    @property
    def bytes(self) -> int:
        return self.count * _BARRIER_BYTES

    def at(self, index):
        """The address of barrier `index` (an int or an i32 Value)."""
        from ..ir import IntegerType

        if isinstance(index, int) and not isinstance(index, bool):
            _checks.integer(index, "index", 0, self.count - 1)
        return gep(self.base, as_i32(index, "index"), IntegerType.get_signless(64))

    def init(self, arrivals: int):
        """mbarrier.init every barrier with `arrivals` expected arrivals.
        Run by one thread, followed by a CTA barrier before first use."""
        from ..dialects import nvvm

        arrivals = _checks.integer(arrivals, "arrivals", 1, (1 << 20) - 1)
        for i in range(self.count):
            nvvm.mbarrier_init(self.at(i), i32_constant(arrivals))


def load_tile(tensor_map, dst, coordinates, barrier, *, bytes: int | None = None,
              multicast_mask: int | None = None):  # fmt: skip
    """A TMA tile load of the box at `coordinates` (innermost first) of
    `tensor_map` (a generic pointer to the CUtensorMap) into `dst` (an
    `!llvm.ptr<3>`), completing on the mbarrier at `barrier` (a ring
    stage's, or a one-shot barrier's).

    `bytes` (the box's `TmaBox.bytes`) is recorded on the op as
    `nvwgmma.tx_bytes`: the box lives in the tensor map, out of the IR's
    sight, and `--nvwgmma-check-protocol` compares it with the expect_tx
    count (protocol_c8).

    `multicast_mask` (bit r: cluster CTA r) writes the box to the same
    offset in each of those CTAs and completes on the barrier in each;
    every CTA of the mask is expected to multicast its own slice, so each
    barrier receives popcount(mask) boxes."""
    from ..dialects import llvm, nvvm
    from ..ir import IntegerAttr, IntegerType

    tensor_map = _checks.value(tensor_map, "tensor_map")
    dst = _checks.value(dst, "dst")
    coords = [as_i32(c, "coordinate") for c in coordinates]
    if not 1 <= len(coords) <= 5:
        raise ValueError(f"coordinates must have 1 to 5 entries, but got {len(coords)}")
    if bytes is not None:
        bytes = _checks.integer(bytes, "bytes", 1, (1 << 20) - 1)
    if multicast_mask is None:
        op = nvvm.cp_async_bulk_tensor_shared_cluster_global(
            dst, tensor_map, coords, barrier, [], is_cta_only=True
        )
    else:
        mask = _checks.integer(multicast_mask, "multicast_mask", 1, (1 << 16) - 1)
        op = nvvm.cp_async_bulk_tensor_shared_cluster_global(
            llvm.addrspacecast(llvm.PointerType.get(7), dst),
            tensor_map,
            coords,
            barrier,
            [],
            multicast_mask=llvm.mlir_constant(IntegerAttr.get(IntegerType.get_signless(16), mask)),
        )
    if bytes is not None:
        op.operation.attributes["nvwgmma.tx_bytes"] = IntegerAttr.get(
            IntegerType.get_signless(64), bytes
        )


def expect_tx(barrier, tx_bytes: int):
    """One arrival on the mbarrier at `barrier` announcing `tx_bytes`
    (`mbarrier.arrive.expect_tx`)."""
    from ..dialects import nvvm
    from ..ir import IntegerType

    tx_bytes = _checks.integer(tx_bytes, "tx_bytes", 1, (1 << 20) - 1)
    nvvm.mbarrier_arrive_expect_tx(IntegerType.get_signless(64), barrier, i32_constant(tx_bytes))


def wait_parity(barrier, parity):
    """Wait until the phase of parity `parity` (an int or i32 Value) of the
    mbarrier at `barrier` completed (`mbarrier.try_wait.parity` loop)."""
    from ..dialects import nvvm

    nvvm.mbarrier_try_wait_parity(barrier, as_i32(parity, "phase"), i32_constant(0))


class Ring:
    """S stages guarded by a full and an empty barrier each: full[s]
    completes when the producer's expected bytes for stage s have landed
    (one arrival: the producer's expect_tx); empty[s] when `consumers`
    consumer arrivals released it."""

    def __init__(self, barrier_base, stages: int, consumers: int):
        from ..ir import IntegerType

        self.stages = _checks.integer(stages, "stages", 1, 64)
        self.consumers = _checks.integer(consumers, "consumers", 1, 1 << 12)
        self.full = Barriers(barrier_base, self.stages)
        self.empty = Barriers(
            gep(self.full.base, self.stages, IntegerType.get_signless(64)), self.stages
        )

    @property
    def bytes(self) -> int:
        """Shared memory the barriers take."""
        return self.full.bytes + self.empty.bytes

    def init(self):
        self.full.init(1)
        self.empty.init(self.consumers)

    def stage_and_phase(self, k):
        """(k mod S, (k / S) & 1) for iteration k (an i32 Value or int)."""
        from ..dialects import arith

        k = as_i32(k, "k")
        stages = i32_constant(self.stages)
        stage = arith.remui(k, stages)
        phase = arith.andi(arith.divui(k, stages), i32_constant(1))
        return stage, phase

    def producer_acquire(self, stage, phase):
        """Wait until the consumers released `stage` in the previous round."""
        from ..dialects import arith

        wait_parity(self.empty.at(stage), arith.xori(as_i32(phase, "phase"), i32_constant(1)))

    def producer_expect(self, stage, tx_bytes: int):
        """The producer's arrival on full[stage], announcing `tx_bytes`."""
        expect_tx(self.full.at(stage), tx_bytes)

    def load(self, tensor_map, dst, coordinates, stage, *, bytes: int | None = None,
             multicast_mask: int | None = None):  # fmt: skip
        """`load_tile` of the box at `coordinates` into `dst`, completing on
        full[stage]."""
        load_tile(tensor_map, dst, coordinates, self.full.at(stage), bytes=bytes,
                  multicast_mask=multicast_mask)  # fmt: skip

    def consumer_wait(self, stage, phase):
        """Wait until the bytes of `stage` for this round have landed."""
        wait_parity(self.full.at(stage), phase)

    def consumer_release(self, stage, *, peers=()):
        """One consumer arrival on empty[stage], and one on empty[stage] of
        each cluster CTA in `peers` (i32 cluster ranks): a stage that other
        CTAs multicast into is free only when every reader released it."""
        from ..dialects import llvm, nvvm
        from ..ir import IntegerType

        nvvm.mbarrier_arrive(IntegerType.get_signless(64), self.empty.at(stage))
        for peer in peers:
            remote = nvvm.mapa(llvm.PointerType.get(7), self.empty.at(stage), as_i32(peer, "peer"))
            # .release.cta, as CUTLASS's ClusterBarrier does: the reads being
            # released are the async proxy's (wgmma), completed by wait_group;
            # a .cluster release fence measured 25 % slower (bench/gemm).
            nvvm.mbarrier_arrive(None, remote)
