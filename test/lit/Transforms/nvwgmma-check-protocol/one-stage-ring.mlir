// A tile refilled every round at one address (a 1-stage ring, upstream's
// sm90 multistage GEMM with one stage): the refill waits for the groups
// reading the tile (protocol_c7), the first round's wait uses parity 0
// (protocol_c9), and an expect_tx before the loop counts only the loads of
// its own round (the loop's refills are later rounds).
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=unchecked=false -verify-diagnostics

// Waits for 0 before each refill, first wait parity 0: clean.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @one_stage_ring(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %n: index, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %tx = arith.constant 8192 : i32
  %bar = llvm.getelementptr %smem[16384] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %desc = llvm.or %field, %layout : i64
  %t0 = nvvm.mbarrier.arrive.expect_tx %bar, %tx : !llvm.ptr<3>, i32 -> i64
  nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmA, %bar, box[%c0_i32, %c0_i32] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
  %zero = llvm.mlir.zero : !acc
  %p0 = arith.constant false
  %r:2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %p = %p0) -> (!acc, i1) {
    %p32 = arith.extui %p : i1 to i32
    nvvm.mbarrier.try_wait.parity %bar, %p32, %c0_i32 : !llvm.ptr<3>, i32, i32
    nvwgmma.fence
    %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
    nvwgmma.commit_group
    nvwgmma.wait_group 0
    %t = nvvm.mbarrier.arrive.expect_tx %bar, %tx : !llvm.ptr<3>, i32 -> i64
    nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmA, %bar, box[%c0_i32, %c0_i32] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    %true = arith.constant true
    %pn = arith.xori %p, %true : i1
    scf.yield %d, %pn : !acc, i1
  }
  nvwgmma.wait_group 0
  %v = llvm.extractvalue %r#0[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c7_one_stage_refill_while_pending(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %n: index, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %tx = arith.constant 8192 : i32
  %bar = llvm.getelementptr %smem[16384] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %desc = llvm.or %field, %layout : i64
  %t0 = nvvm.mbarrier.arrive.expect_tx %bar, %tx : !llvm.ptr<3>, i32 -> i64
  nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmA, %bar, box[%c0_i32, %c0_i32] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
  %zero = llvm.mlir.zero : !acc
  %p0 = arith.constant false
  %r:2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %p = %p0) -> (!acc, i1) {
    %p32 = arith.extui %p : i1 to i32
    nvvm.mbarrier.try_wait.parity %bar, %p32, %c0_i32 : !llvm.ptr<3>, i32, i32
    nvwgmma.fence
    %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
    nvwgmma.commit_group
    nvwgmma.wait_group 1
    %t = nvvm.mbarrier.arrive.expect_tx %bar, %tx : !llvm.ptr<3>, i32 -> i64
    // expected-error @below {{a tile must be overwritten only after the wgmma groups reading it completed (wait_group 0 or lower first), but got it overwritten while that group may be pending (protocol_c7)}}
    // expected-note @-6 {{mma_async reading the tile issued here}}
    // expected-note @-4 {{the last wait_group executed before it}}
    nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmA, %bar, box[%c0_i32, %c0_i32] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    %true = arith.constant true
    %pn = arith.xori %p, %true : i1
    scf.yield %d, %pn : !acc, i1
  }
  nvwgmma.wait_group 0
  %v = llvm.extractvalue %r#0[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c9_one_stage_first_wait_parity_one(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %n: index, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %tx = arith.constant 8192 : i32
  %bar = llvm.getelementptr %smem[16384] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %desc = llvm.or %field, %layout : i64
  %t0 = nvvm.mbarrier.arrive.expect_tx %bar, %tx : !llvm.ptr<3>, i32 -> i64
  nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmA, %bar, box[%c0_i32, %c0_i32] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
  %zero = llvm.mlir.zero : !acc
  %p0 = arith.constant true
  %r:2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %p = %p0) -> (!acc, i1) {
    %p32 = arith.extui %p : i1 to i32
    // expected-error @below {{a first wait for a tile a TMA load refills each round must use parity 0, the phase its first fill completes, but got 1, which passes before the bytes land (protocol_c9)}}
    nvvm.mbarrier.try_wait.parity %bar, %p32, %c0_i32 : !llvm.ptr<3>, i32, i32
    nvwgmma.fence
    %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
    nvwgmma.commit_group
    nvwgmma.wait_group 0
    %t = nvvm.mbarrier.arrive.expect_tx %bar, %tx : !llvm.ptr<3>, i32 -> i64
    nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmA, %bar, box[%c0_i32, %c0_i32] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    %true = arith.constant true
    %pn = arith.xori %p, %true : i1
    scf.yield %d, %pn : !acc, i1
  }
  nvwgmma.wait_group 0
  %v = llvm.extractvalue %r#0[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  return
}
