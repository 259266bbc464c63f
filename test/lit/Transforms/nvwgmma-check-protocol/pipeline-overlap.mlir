// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol -verify-diagnostics
//
// FlashAttention-3's one-ring overlap: in iteration j, S = Q K_j^T reads
// stage j (waited for just before) while O += P_{j-1} V_{j-1} reads stage
// j - 1, whose full barrier was waited for in iteration j - 1 and which is
// released only after that read. A wait keeps its stage filled until the
// stage is released, not for one loop round. No diagnostic; then the same
// kernel with the consumer's and with the producer's barrier wait deleted.

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @overlap_previous_stage(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
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
      // S = Q K_j^T reads stage j.
      %sj = nvwgmma.mma_async %desc, %desc, %zero, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, zero], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      %has_prev = arith.cmpi ugt, %ki, %c0_i32 : i32
      %o = scf.if %has_prev -> !acc {
        // O += P_{j-1} V_{j-1} reads stage j - 1: waited for in iteration
        // j - 1 and not released yet.
        %prev = arith.subi %ki, %c1_i32 : i32
        %ps = arith.remui %prev, %c3 : i32
        %punits = arith.muli %ps, %stage_units : i32
        %punits64 = arith.extui %punits : i32 to i64
        %pdesc = llvm.add %desc0, %punits64 : i64
        %ov = nvwgmma.mma_async %pdesc, %pdesc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
               D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
        nvwgmma.commit_group
        nvwgmma.wait_group 0
        %pb = llvm.getelementptr %empty[%ps] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        %a = nvvm.mbarrier.arrive %pb : !llvm.ptr<3> -> i64
        scf.yield %ov : !acc
      } else {
        nvwgmma.wait_group 0
        scf.yield %acc : !acc
      }
      %x = llvm.extractvalue %sj[0] : !acc
      %keep = llvm.insertvalue %x, %o[1] : !acc
      scf.yield %keep : !acc
    }
    nvwgmma.wait_group 0
    %v = llvm.extractvalue %r[0] : !acc
    llvm.store %v, %out : f32, !llvm.ptr<1>
  }
  return
}


// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @overlap_consumer_wait_deleted(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
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
      %units = arith.muli %s, %stage_units : i32
      %units64 = arith.extui %units : i32 to i64
      %desc = llvm.add %desc0, %units64 : i64
      nvwgmma.fence
      // S = Q K_j^T reads stage j.
      // expected-error @+1 {{an mma_async must read stage k mod 3 only after a wait on that stage's full barrier in the same round, but got no such wait (protocol_c6)}}
      %sj = nvwgmma.mma_async %desc, %desc, %zero, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, zero], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      %has_prev = arith.cmpi ugt, %ki, %c0_i32 : i32
      %o = scf.if %has_prev -> !acc {
        // O += P_{j-1} V_{j-1} reads stage j - 1: waited for in iteration
        // j - 1 and not released yet.
        %prev = arith.subi %ki, %c1_i32 : i32
        %ps = arith.remui %prev, %c3 : i32
        %punits = arith.muli %ps, %stage_units : i32
        %punits64 = arith.extui %punits : i32 to i64
        %pdesc = llvm.add %desc0, %punits64 : i64
        %ov = nvwgmma.mma_async %pdesc, %pdesc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
               D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
        nvwgmma.commit_group
        nvwgmma.wait_group 0
        %pb = llvm.getelementptr %empty[%ps] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        %a = nvvm.mbarrier.arrive %pb : !llvm.ptr<3> -> i64
        scf.yield %ov : !acc
      } else {
        nvwgmma.wait_group 0
        scf.yield %acc : !acc
      }
      %x = llvm.extractvalue %sj[0] : !acc
      %keep = llvm.insertvalue %x, %o[1] : !acc
      scf.yield %keep : !acc
    }
    nvwgmma.wait_group 0
    %v = llvm.extractvalue %r[0] : !acc
    llvm.store %v, %out : f32, !llvm.ptr<1>
  }
  return
}


// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @overlap_producer_wait_deleted(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
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
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %tx = arith.constant 8192 : i32
      %t = nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32 -> i64
      %off = arith.muli %s, %stage_bytes : i32
      %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      // expected-error @+1 {{a TMA load must refill a stage of this 3-stage ring only after a wait on that stage's empty barrier, but got no such wait (protocol_c6)}}
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
      // S = Q K_j^T reads stage j.
      %sj = nvwgmma.mma_async %desc, %desc, %zero, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, zero], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      %has_prev = arith.cmpi ugt, %ki, %c0_i32 : i32
      %o = scf.if %has_prev -> !acc {
        // O += P_{j-1} V_{j-1} reads stage j - 1: waited for in iteration
        // j - 1 and not released yet.
        %prev = arith.subi %ki, %c1_i32 : i32
        %ps = arith.remui %prev, %c3 : i32
        %punits = arith.muli %ps, %stage_units : i32
        %punits64 = arith.extui %punits : i32 to i64
        %pdesc = llvm.add %desc0, %punits64 : i64
        %ov = nvwgmma.mma_async %pdesc, %pdesc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
               D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
        nvwgmma.commit_group
        nvwgmma.wait_group 0
        %pb = llvm.getelementptr %empty[%ps] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        // expected-note @+1 {{the consumers release the ring's stages on this barrier}}
        %a = nvvm.mbarrier.arrive %pb : !llvm.ptr<3> -> i64
        scf.yield %ov : !acc
      } else {
        nvwgmma.wait_group 0
        scf.yield %acc : !acc
      }
      %x = llvm.extractvalue %sj[0] : !acc
      %keep = llvm.insertvalue %x, %o[1] : !acc
      scf.yield %keep : !acc
    }
    nvwgmma.wait_group 0
    %v = llvm.extractvalue %r[0] : !acc
    llvm.store %v, %out : f32, !llvm.ptr<1>
  }
  return
}

