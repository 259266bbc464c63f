// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol -verify-diagnostics
//
// Seeded mutations of the correct pipeline of pipeline-valid.mlir, one bug
// each (protocol_c6..c9 of docs/Protocol.md).

// wait_group 2 leaves the previous iteration's group pending when its stage is released.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c7_wait_depth_two_for_release_distance_one(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
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
      // expected-note @+1 {{mma_async reading the stage issued here}}
      %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      // expected-note @+1 {{the last wait_group executed before it}}
      nvwgmma.wait_group 2
      %has_prev = arith.cmpi ugt, %ki, %c0_i32 : i32
      scf.if %has_prev {
        %prev = arith.subi %ki, %c1_i32 : i32
        %ps = arith.remui %prev, %c3 : i32
        %pb = llvm.getelementptr %empty[%ps] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        // expected-error @+1 {{a stage must be released only after the wgmma groups reading it completed (wait_group 1 or lower first), but got stage (k - 1) mod 3 released while that group may be pending (protocol_c7)}}
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

// wait_group 5 keeps reads pending for more than a ring of 3 stages: the
// release of stage k - 4, the slot of stage k - 1, while that group may run.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c7_pending_for_more_than_a_ring(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
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
      // expected-note @+1 {{mma_async reading the stage issued here}}
      %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      // expected-note @+1 {{the last wait_group executed before it}}
      nvwgmma.wait_group 5
      %c4_i32 = arith.constant 4 : i32
      %has_prev = arith.cmpi ugt, %ki, %c3 : i32
      scf.if %has_prev {
        %prev = arith.subi %ki, %c4_i32 : i32
        %ps = arith.remui %prev, %c3 : i32
        %pb = llvm.getelementptr %empty[%ps] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        // expected-error @+1 {{a stage must be released only after the wgmma groups reading it completed (wait_group 1 or lower first), but got stage (k - 4) mod 3 released while that group may be pending (protocol_c7)}}
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

// The issue's case: wait_group 3 with the release one iteration behind.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c7_wait_depth_three_for_release_distance_one(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
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
      // expected-note @+1 {{mma_async reading the stage issued here}}
      %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      // expected-note @+1 {{the last wait_group executed before it}}
      nvwgmma.wait_group 3
      %has_prev = arith.cmpi ugt, %ki, %c0_i32 : i32
      scf.if %has_prev {
        %prev = arith.subi %ki, %c1_i32 : i32
        %ps = arith.remui %prev, %c3 : i32
        %pb = llvm.getelementptr %empty[%ps] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        // expected-error @+1 {{a stage must be released only after the wgmma groups reading it completed (wait_group 1 or lower first), but got stage (k - 1) mod 3 released while that group may be pending (protocol_c7)}}
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

// The release moved before the wait.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c7_release_before_wait(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
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
      // expected-note @+1 {{mma_async reading the stage issued here}}
      %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      scf.if %leader {
        %cb = llvm.getelementptr %empty[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        // expected-error @+1 {{a stage must be released only after the wgmma groups reading it completed (wait_group 0 or lower first), but got stage k mod 3 released while that group may be pending (protocol_c7)}}
        %a = nvvm.mbarrier.arrive %cb : !llvm.ptr<3> -> i64
      }
      // expected-note @+1 {{the last wait_group executed before it}}
      nvwgmma.wait_group 0
      scf.yield %d : !acc
    }
    nvwgmma.wait_group 0
    %v = llvm.extractvalue %r[0] : !acc
    llvm.store %v, %out : f32, !llvm.ptr<1>
  }
  return
}

// -----

// The consumer's wait on the full barrier removed.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c6_consumer_wait_removed(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
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
      // expected-note @+1 {{the stage is filled by this TMA load, which completes on the full barrier}}
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

      %units = arith.muli %s, %stage_units : i32
      %units64 = arith.extui %units : i32 to i64
      %desc = llvm.add %desc0, %units64 : i64
      nvwgmma.fence
      // expected-error @+1 {{an mma_async must read stage k mod 3 only after a wait on that stage's full barrier in the same round, but got no such wait (protocol_c6)}}
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

// expect_tx announces half of what the load brings.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c8_wrong_expect_tx(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
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
      %tx = arith.constant 4096 : i32
      // expected-error @+1 {{the expect_tx byte count must equal the bytes the TMA loads completing on this barrier bring, 8192, but got 4096 (protocol_c8)}}
      %t = nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32 -> i64
      %off = arith.muli %s, %stage_bytes : i32
      %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      // expected-note @+1 {{TMA load of 8192 bytes completing on the barrier}}
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

// The consumer waits on the complement parity: passes before the data lands.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c9_consumer_waits_complement(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
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
      %fpar = arith.xori %par, %c1_i32 : i32
      // expected-error @+1 {{a wait for a filled stage must use the round's parity (k / 3) & 1, but got its complement, which passes in the first round before the stage is filled (protocol_c9)}}
      nvvm.mbarrier.try_wait.parity %fb, %fpar, %c0_i32 : !llvm.ptr<3>, i32, i32
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

// The producer waits on the round's parity of the empty barrier: deadlock in round 0.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c9_producer_waits_round_parity(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
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
      // expected-error @+1 {{a wait for a released stage must use the complement of the round's parity, (k / 3) & 1 ^ 1, but got the round's parity, which in the first round waits for a release that never comes (protocol_c9)}}
      nvvm.mbarrier.try_wait.parity %eb, %par, %c0_i32 : !llvm.ptr<3>, i32, i32
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

// Stage k mod 3 but the parity of k / 4.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c9_parity_of_another_ring_size(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %c4 = arith.constant 4 : i32
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
      %round = arith.divui %ki, %c4 : i32
      %par = arith.andi %round, %c1_i32 : i32
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      // expected-error @+1 {{the parity waited on must follow the round of stage k mod 3, (k / 3) & 1, but got (k / 4) & 1 (protocol_c9)}}
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

// The wait-depth race in IR built from upstream nvvm.wgmma ops.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c7_upstream_wait_depth_two(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
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
      // expected-note @+1 {{mma_async reading the stage issued here}}
      %d = nvvm.wgmma.mma_async %desc, %desc, %acc, <m = 64, n = 8, k = 16>, D[<f32>, <one>],
             A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !acc -> !acc
      nvvm.wgmma.commit.group.sync.aligned
      // expected-note @+1 {{the last wait_group executed before it}}
      nvvm.wgmma.wait.group.sync.aligned 2
      %has_prev = arith.cmpi ugt, %ki, %c0_i32 : i32
      scf.if %has_prev {
        %prev = arith.subi %ki, %c1_i32 : i32
        %ps = arith.remui %prev, %c3 : i32
        %pb = llvm.getelementptr %empty[%ps] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        // expected-error @+1 {{a stage must be released only after the wgmma groups reading it completed (wait_group 1 or lower first), but got stage (k - 1) mod 3 released while that group may be pending (protocol_c7)}}
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

// Prefetching S - 1 = 2 stages ahead with one group in flight: the TMA
// refills the stage the previous iteration's pending wgmma reads.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c7_prefetch_overwrites_pending_stage(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %cdist = arith.constant 2 : i32
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
    // One thread prefetches 2 iterations ahead into stage (k + 2) mod 3.
    %ahead = arith.addi %ki, %cdist : i32
    %ps = arith.remui %ahead, %c3 : i32
    %pb = llvm.getelementptr %full[%ps] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
    %t = nvvm.mbarrier.arrive.expect_tx %pb, %tx : !llvm.ptr<3>, i32 -> i64
    %off = arith.muli %ps, %stage_bytes : i32
    %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
    // expected-error @+1 {{a stage must be overwritten only after the wgmma groups reading it completed (wait_group 0 or lower first), but got stage (k + 2) mod 3 overwritten while that group may be pending (protocol_c7)}}
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
    // expected-note @+1 {{mma_async reading the stage issued here}}
    %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
    nvwgmma.commit_group
    // expected-note @+1 {{the last wait_group executed before it}}
    nvwgmma.wait_group 1
    scf.yield %d : !acc
  }
  nvwgmma.wait_group 0
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  return
}

// -----

// Each thread's store is fenced, but no barrier orders the other threads'
// stores before the wgmma that reads the whole tile.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c6_generic_stores_without_barrier(%smem: !llvm.ptr<3>, %tid: i32, %x: vector<4xi32>, %acc: !acc) -> !acc {
  %c16 = arith.constant 16 : i32
  %off = arith.muli %tid, %c16 : i32
  %p = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
  // expected-note @+1 {{shared memory written here}}
  llvm.store %x, %p : vector<4xi32>, !llvm.ptr<3>
  nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %desc = llvm.or %field, %layout : i64
  nvwgmma.fence
  // expected-error @+1 {{a barrier across the writing threads must separate a generic store to the shared memory an mma_async reads from it, but got none (protocol_c6)}}
  %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  return %d : !acc
}

// -----

// The consumer's carried phase starts at 1: its first wait passes at once.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c9_carried_phase_starts_complemented(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
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
    %r:3 = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc = %zero, %s = %c0_i32, %p = %c1_i32) -> (!acc, i32, i32) {
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      // expected-error @+1 {{a wait for a filled stage must use the round's parity (k / 3) & 1, but got its complement, which passes in the first round before the stage is filled (protocol_c9)}}
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

// wait_group 3 leaves the group of two iterations ago pending when its stage
// is released.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c7_wait_depth_three_for_release_distance_two(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
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
      // expected-note @+1 {{mma_async reading the stage issued here}}
      %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      // expected-note @+1 {{the last wait_group executed before it}}
      nvwgmma.wait_group 3
      %has_prev = arith.cmpi ugt, %ki, %c1_i32 : i32
      scf.if %has_prev {
        %c2_i32 = arith.constant 2 : i32
        %prev = arith.subi %ki, %c2_i32 : i32
        %ps = arith.remui %prev, %c3 : i32
        %pb = llvm.getelementptr %empty[%ps] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        // expected-error @+1 {{a stage must be released only after the wgmma groups reading it completed (wait_group 2 or lower first), but got stage (k - 2) mod 3 released while that group may be pending (protocol_c7)}}
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
