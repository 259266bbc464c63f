// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=strict=true -verify-diagnostics | FileCheck %s
//
// Correct TMA + mbarrier pipelines (a producer filling a 3-stage ring, a
// consumer warpgroup reading it with wgmma): no diagnostic, even in strict
// mode. The same kernel with seeded bugs is pipeline-invalid.mlir.

// One group in flight: the stage read one iteration earlier is released
// after wait_group 1.
// CHECK-LABEL: func.func @ring_release_previous
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @ring_release_previous(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %stage_bytes = arith.constant 8192 : i32
  %stage_units = arith.constant 512 : i32
  %full = llvm.getelementptr %smem[24576] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %empty = llvm.getelementptr %full[3] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %desc0 = llvm.or %field, %layout : i64
  scf.if %producer {
    scf.for %k = %c0 to %k_tiles step %c1 {
      %ki = arith.index_cast %k : index to i32
      %s = arith.remui %ki, %c3 : i32
      %round = arith.divui %ki, %c3 : i32
      %par = arith.andi %round, %c1_i32 : i32
      %epar = arith.xori %par, %c1_i32 : i32
      %eb = llvm.getelementptr %empty[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %eb, %epar, %c0_i32 : !llvm.ptr<3>, i32, i32
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %tx = arith.constant 8192 : i32
      %t = nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32 -> i64
      %off = arith.muli %s, %stage_bytes : i32
      %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %fb, box[%c0_i32, %ki] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    }
  } else {
    %zero = llvm.mlir.zero : !acc
    %r = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc = %zero) -> !acc {
      %ki = arith.index_cast %k : index to i32
      %s = arith.remui %ki, %c3 : i32
      %round = arith.divui %ki, %c3 : i32
      %par = arith.andi %round, %c1_i32 : i32
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %fb, %par, %c0_i32 : !llvm.ptr<3>, i32, i32
      %units = arith.muli %s, %stage_units : i32
      %units64 = arith.extui %units : i32 to i64
      %desc = llvm.add %desc0, %units64 : i64
      nvwgmma.fence
      %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      nvwgmma.wait_group 1
      %has_prev = arith.cmpi ugt, %ki, %c0_i32 : i32
      scf.if %has_prev {
        %prev = arith.subi %ki, %c1_i32 : i32
        %ps = arith.remui %prev, %c3 : i32
        %pb = llvm.getelementptr %empty[%ps] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        %a = nvvm.mbarrier.arrive %pb : !llvm.ptr<3> -> i64
      }
      scf.yield %d : !acc
    }
    nvwgmma.wait_group 0
    %v = llvm.extractvalue %r[0] : !acc
    llvm.store %v, %out : f32, !llvm.ptr<1>
  }
  return
}

// -----

// No group in flight: the stage is released after wait_group 0.
// CHECK-LABEL: func.func @ring_release_current
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @ring_release_current(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %stage_bytes = arith.constant 8192 : i32
  %stage_units = arith.constant 512 : i32
  %full = llvm.getelementptr %smem[24576] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %empty = llvm.getelementptr %full[3] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %desc0 = llvm.or %field, %layout : i64
  scf.if %producer {
    scf.for %k = %c0 to %k_tiles step %c1 {
      %ki = arith.index_cast %k : index to i32
      %s = arith.remui %ki, %c3 : i32
      %round = arith.divui %ki, %c3 : i32
      %par = arith.andi %round, %c1_i32 : i32
      %epar = arith.xori %par, %c1_i32 : i32
      %eb = llvm.getelementptr %empty[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %eb, %epar, %c0_i32 : !llvm.ptr<3>, i32, i32
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %tx = arith.constant 8192 : i32
      %t = nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32 -> i64
      %off = arith.muli %s, %stage_bytes : i32
      %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %fb, box[%c0_i32, %ki] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    }
  } else {
    %zero = llvm.mlir.zero : !acc
    %r = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc = %zero) -> !acc {
      %ki = arith.index_cast %k : index to i32
      %s = arith.remui %ki, %c3 : i32
      %round = arith.divui %ki, %c3 : i32
      %par = arith.andi %round, %c1_i32 : i32
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %fb, %par, %c0_i32 : !llvm.ptr<3>, i32, i32
      %units = arith.muli %s, %stage_units : i32
      %units64 = arith.extui %units : i32 to i64
      %desc = llvm.add %desc0, %units64 : i64
      nvwgmma.fence
      %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      nvwgmma.wait_group 0
      scf.if %leader {
        %cb = llvm.getelementptr %empty[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        %a = nvvm.mbarrier.arrive %cb : !llvm.ptr<3> -> i64
      }
      scf.yield %d : !acc
    }
    nvwgmma.wait_group 0
    %v = llvm.extractvalue %r[0] : !acc
    llvm.store %v, %out : f32, !llvm.ptr<1>
  }
  return
}

// -----

// The same ring with upstream nvvm.wgmma ops (IR of another frontend).
// CHECK-LABEL: func.func @ring_upstream_nvvm
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @ring_upstream_nvvm(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %stage_bytes = arith.constant 8192 : i32
  %stage_units = arith.constant 512 : i32
  %full = llvm.getelementptr %smem[24576] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %empty = llvm.getelementptr %full[3] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %desc0 = llvm.or %field, %layout : i64
  scf.if %producer {
    scf.for %k = %c0 to %k_tiles step %c1 {
      %ki = arith.index_cast %k : index to i32
      %s = arith.remui %ki, %c3 : i32
      %round = arith.divui %ki, %c3 : i32
      %par = arith.andi %round, %c1_i32 : i32
      %epar = arith.xori %par, %c1_i32 : i32
      %eb = llvm.getelementptr %empty[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %eb, %epar, %c0_i32 : !llvm.ptr<3>, i32, i32
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %tx = arith.constant 8192 : i32
      %t = nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32 -> i64
      %off = arith.muli %s, %stage_bytes : i32
      %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %fb, box[%c0_i32, %ki] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    }
  } else {
    %zero = llvm.mlir.zero : !acc
    %r = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc = %zero) -> !acc {
      %ki = arith.index_cast %k : index to i32
      %s = arith.remui %ki, %c3 : i32
      %round = arith.divui %ki, %c3 : i32
      %par = arith.andi %round, %c1_i32 : i32
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %fb, %par, %c0_i32 : !llvm.ptr<3>, i32, i32
      %units = arith.muli %s, %stage_units : i32
      %units64 = arith.extui %units : i32 to i64
      %desc = llvm.add %desc0, %units64 : i64
      nvvm.wgmma.fence.aligned
      %d = nvvm.wgmma.mma_async %desc, %desc, %acc, <m = 64, n = 8, k = 16>, D[<f32>, <one>],
             A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !acc -> !acc
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 1
      %has_prev = arith.cmpi ugt, %ki, %c0_i32 : i32
      scf.if %has_prev {
        %prev = arith.subi %ki, %c1_i32 : i32
        %ps = arith.remui %prev, %c3 : i32
        %pb = llvm.getelementptr %empty[%ps] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        %a = nvvm.mbarrier.arrive %pb : !llvm.ptr<3> -> i64
      }
      scf.yield %d : !acc
    }
    nvvm.wgmma.wait.group.sync.aligned 0
    %v = llvm.extractvalue %r[0] : !acc
    llvm.store %v, %out : f32, !llvm.ptr<1>
  }
  return
}

// -----

// A single-thread pipeline prefetching one stage ahead with one group in
// flight: the stage it refills was read two iterations ago.
// CHECK-LABEL: func.func @prefetch_distance_one
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @prefetch_distance_one(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %cdist = arith.constant 1 : i32
  %stage_bytes = arith.constant 8192 : i32
  %stage_units = arith.constant 512 : i32
  %tx = arith.constant 8192 : i32
  %full = llvm.getelementptr %smem[24576] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %desc0 = llvm.or %field, %layout : i64
  // Prologue: stage 0.
  %t0 = nvvm.mbarrier.arrive.expect_tx %full, %tx : !llvm.ptr<3>, i32 -> i64
  nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmA, %full, box[%c0_i32, %c0_i32] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
  %zero = llvm.mlir.zero : !acc
  nvwgmma.fence
  %r = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc = %zero) -> !acc {
    %ki = arith.index_cast %k : index to i32
    // One thread prefetches 1 iterations ahead into stage (k + 1) mod 3.
    %ahead = arith.addi %ki, %cdist : i32
    %ps = arith.remui %ahead, %c3 : i32
    %pb = llvm.getelementptr %full[%ps] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
    %t = nvvm.mbarrier.arrive.expect_tx %pb, %tx : !llvm.ptr<3>, i32 -> i64
    %off = arith.muli %ps, %stage_bytes : i32
    %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %pb, box[%c0_i32, %ahead] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    %s = arith.remui %ki, %c3 : i32
    %round = arith.divui %ki, %c3 : i32
    %par = arith.andi %round, %c1_i32 : i32
    %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
    nvvm.mbarrier.try_wait.parity %fb, %par, %c0_i32 : !llvm.ptr<3>, i32, i32
    %units = arith.muli %s, %stage_units : i32
    %units64 = arith.extui %units : i32 to i64
    %desc = llvm.add %desc0, %units64 : i64
    nvwgmma.fence
    %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
    nvwgmma.commit_group
    nvwgmma.wait_group 1
    scf.yield %d : !acc
  }
  nvwgmma.wait_group 0
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  return
}

// -----

// Every thread stores its part of the tile, fences for the async proxy,
// and a CTA barrier makes all parts visible before the wgmma.
// CHECK-LABEL: func.func @generic_stores_then_barrier
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @generic_stores_then_barrier(%smem: !llvm.ptr<3>, %tid: i32, %x: vector<4xi32>, %acc: !acc) -> !acc {
  %c16 = arith.constant 16 : i32
  %off = arith.muli %tid, %c16 : i32
  %p = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
  llvm.store %x, %p : vector<4xi32>, !llvm.ptr<3>
  nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
  nvvm.barrier0
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %desc = llvm.or %field, %layout : i64
  nvwgmma.fence
  %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  return %d : !acc
}

// -----

// The pipeline-state idiom (CUTLASS's PipelineState): a stage index carried
// as (s + 1) mod S and a phase flipped when it wraps, 1 for the producer.
// CHECK-LABEL: func.func @ring_carried_index_and_phase
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @ring_carried_index_and_phase(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %stage_bytes = arith.constant 8192 : i32
  %stage_units = arith.constant 512 : i32
  %tx = arith.constant 8192 : i32
  %full = llvm.getelementptr %smem[24576] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %empty = llvm.getelementptr %full[3] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %desc0 = llvm.or %field, %layout : i64
  scf.if %producer {
    // The producer's phase starts at 1: the empty barriers' first round is free.
    %pr:2 = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%s = %c0_i32, %p = %c1_i32) -> (i32, i32) {
      %ki = arith.index_cast %k : index to i32
      %eb = llvm.getelementptr %empty[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %eb, %p, %c0_i32 : !llvm.ptr<3>, i32, i32
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %t = nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32 -> i64
      %off = arith.muli %s, %stage_bytes : i32
      %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %fb, box[%c0_i32, %ki] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
      %s1 = arith.addi %s, %c1_i32 : i32
      %wrap = arith.cmpi eq, %s1, %c3 : i32
      %sn = arith.select %wrap, %c0_i32, %s1 : i32
      %pf = arith.xori %p, %c1_i32 : i32
      %pn = arith.select %wrap, %pf, %p : i32
      scf.yield %sn, %pn : i32, i32
    }
  } else {
    %zero = llvm.mlir.zero : !acc
    %r:3 = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc = %zero, %s = %c0_i32, %p = %c0_i32) -> (!acc, i32, i32) {
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %fb, %p, %c0_i32 : !llvm.ptr<3>, i32, i32
      %units = arith.muli %s, %stage_units : i32
      %units64 = arith.extui %units : i32 to i64
      %desc = llvm.add %desc0, %units64 : i64
      nvwgmma.fence
      %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      nvwgmma.wait_group 0
      scf.if %leader {
        %cb = llvm.getelementptr %empty[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        %a = nvvm.mbarrier.arrive %cb : !llvm.ptr<3> -> i64
      }
      %s1 = arith.addi %s, %c1_i32 : i32
      %wrap = arith.cmpi eq, %s1, %c3 : i32
      %sn = arith.select %wrap, %c0_i32, %s1 : i32
      %flip = arith.extui %wrap : i1 to i32
      %pn = arith.xori %p, %flip : i32
      scf.yield %d, %sn, %pn : !acc, i32, i32
    }
    %v = llvm.extractvalue %r#0[0] : !acc
    llvm.store %v, %out : f32, !llvm.ptr<1>
  }
  return
}

// -----

// Two groups in flight: the stage read two iterations earlier is released
// after wait_group 2.
// CHECK-LABEL: func.func @ring_release_two_behind
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @ring_release_two_behind(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %stage_bytes = arith.constant 8192 : i32
  %stage_units = arith.constant 512 : i32
  %full = llvm.getelementptr %smem[24576] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %empty = llvm.getelementptr %full[3] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %desc0 = llvm.or %field, %layout : i64
  scf.if %producer {
    scf.for %k = %c0 to %k_tiles step %c1 {
      %ki = arith.index_cast %k : index to i32
      %s = arith.remui %ki, %c3 : i32
      %round = arith.divui %ki, %c3 : i32
      %par = arith.andi %round, %c1_i32 : i32
      %epar = arith.xori %par, %c1_i32 : i32
      %eb = llvm.getelementptr %empty[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %eb, %epar, %c0_i32 : !llvm.ptr<3>, i32, i32
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %tx = arith.constant 8192 : i32
      %t = nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32 -> i64
      %off = arith.muli %s, %stage_bytes : i32
      %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %fb, box[%c0_i32, %ki] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    }
  } else {
    %zero = llvm.mlir.zero : !acc
    %r = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc = %zero) -> !acc {
      %ki = arith.index_cast %k : index to i32
      %s = arith.remui %ki, %c3 : i32
      %round = arith.divui %ki, %c3 : i32
      %par = arith.andi %round, %c1_i32 : i32
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %fb, %par, %c0_i32 : !llvm.ptr<3>, i32, i32
      %units = arith.muli %s, %stage_units : i32
      %units64 = arith.extui %units : i32 to i64
      %desc = llvm.add %desc0, %units64 : i64
      nvwgmma.fence
      %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      nvwgmma.wait_group 2
      %has_prev = arith.cmpi ugt, %ki, %c1_i32 : i32
      scf.if %has_prev {
        %c2_i32 = arith.constant 2 : i32
        %prev = arith.subi %ki, %c2_i32 : i32
        %ps = arith.remui %prev, %c3 : i32
        %pb = llvm.getelementptr %empty[%ps] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        %a = nvvm.mbarrier.arrive %pb : !llvm.ptr<3> -> i64
      }
      scf.yield %d : !acc
    }
    nvwgmma.wait_group 0
    %v = llvm.extractvalue %r[0] : !acc
    llvm.store %v, %out : f32, !llvm.ptr<1>
  }
  return
}
