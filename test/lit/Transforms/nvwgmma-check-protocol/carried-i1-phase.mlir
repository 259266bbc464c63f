// A pipeline phase carried as an i1 (`arith.constant true` is 1, not -1).
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol -verify-diagnostics

// A producer's phase carried as an i1 that starts at true and flips at the
// ring's last stage (upstream's NVGPU examples): the complement of the
// round's parity, as a released stage's wait must use.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @producer_phase_starts_at_true(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
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
    %p0 = arith.constant true
    %last = arith.constant 2 : i32
    %true = arith.constant true
    %pn = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%p = %p0) -> i1 {
      %ki = arith.index_cast %k : index to i32
      %s = arith.remui %ki, %c3 : i32
      %eb = llvm.getelementptr %empty[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %p32 = arith.extui %p : i1 to i32
      nvvm.mbarrier.try_wait.parity %eb, %p32, %c0_i32 : !llvm.ptr<3>, i32, i32
      %wrap = arith.cmpi eq, %s, %last : i32
      %flip = arith.xori %p, %true : i1
      %pnext = arith.select %wrap, %flip, %p : i1
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %tx = arith.constant 8192 : i32
      %t = nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32 -> i64
      %off = arith.muli %s, %stage_bytes : i32
      %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %fb, box[%c0_i32, %ki] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
      scf.yield %pnext : i1
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

// The same phase starting at false: the round's parity, a deadlock in round 0.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @producer_phase_starts_at_false(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
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
    %p0 = arith.constant false
    %last = arith.constant 2 : i32
    %true = arith.constant true
    %pn = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%p = %p0) -> i1 {
      %ki = arith.index_cast %k : index to i32
      %s = arith.remui %ki, %c3 : i32
      %eb = llvm.getelementptr %empty[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %p32 = arith.extui %p : i1 to i32
      // expected-error @+1 {{a wait for a released stage must use the complement of the round's parity, (k / 3) & 1 ^ 1, but got the round's parity, which in the first round waits for a release that never comes (protocol_c9)}}
      nvvm.mbarrier.try_wait.parity %eb, %p32, %c0_i32 : !llvm.ptr<3>, i32, i32
      %wrap = arith.cmpi eq, %s, %last : i32
      %flip = arith.xori %p, %true : i1
      %pnext = arith.select %wrap, %flip, %p : i1
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %tx = arith.constant 8192 : i32
      %t = nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32 -> i64
      %off = arith.muli %s, %stage_bytes : i32
      %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %fb, box[%c0_i32, %ki] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
      scf.yield %pnext : i1
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

