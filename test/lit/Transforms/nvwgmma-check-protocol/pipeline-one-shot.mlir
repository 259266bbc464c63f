// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=strict=true -verify-diagnostics
//
// A persistent kernel's one-shot tile (attention's Q): the producer loads it
// once per tile on its own barrier; the consumer waits for it (parity: the
// tile count's), reads it, and releases it on a second barrier, which the
// producer waits on before the next tile's load. Clean; then the producer's
// wait deleted.

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @one_shot_refilled_after_release(%smem: !llvm.ptr<3>, %tmQ: !llvm.ptr, %tiles: index, %producer: i1, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %tx = arith.constant 8192 : i32
  %qbar = llvm.getelementptr %smem[8192] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %qfree = llvm.getelementptr %qbar[1] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %qdesc = llvm.or %field, %layout : i64
  scf.if %producer {
    scf.for %t = %c0 to %tiles step %c1 {
      %ti = arith.index_cast %t : index to i32
      %later = arith.cmpi ugt, %ti, %c0_i32 : i32
      scf.if %later {
        %before = arith.subi %ti, %c1_i32 : i32
        %par = arith.andi %before, %c1_i32 : i32
        nvvm.mbarrier.try_wait.parity %qfree, %par, %c0_i32 : !llvm.ptr<3>, i32, i32
      }
      %e = nvvm.mbarrier.arrive.expect_tx %qbar, %tx : !llvm.ptr<3>, i32 -> i64
      nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmQ, %qbar, box[%c0_i32, %ti] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    }
  } else {
    %zero = llvm.mlir.zero : !acc
    scf.for %t = %c0 to %tiles step %c1 {
      %ti = arith.index_cast %t : index to i32
      %par = arith.andi %ti, %c1_i32 : i32
      nvvm.mbarrier.try_wait.parity %qbar, %par, %c0_i32 : !llvm.ptr<3>, i32, i32
      nvwgmma.fence
      %s = nvwgmma.mma_async %qdesc, %qdesc, %zero, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, zero], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      nvwgmma.wait_group 0
      %a = nvvm.mbarrier.arrive %qfree : !llvm.ptr<3> -> i64
      %v = llvm.extractvalue %s[0] : !acc
      llvm.store %v, %out : f32, !llvm.ptr<1>
    }
  }
  return
}

// -----

// The producer loads the next tile's Q without waiting for its release.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c6_one_shot_refilled_unreleased(%smem: !llvm.ptr<3>, %tmQ: !llvm.ptr, %tiles: index, %producer: i1, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %tx = arith.constant 8192 : i32
  %qbar = llvm.getelementptr %smem[8192] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %qfree = llvm.getelementptr %qbar[1] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %qdesc = llvm.or %field, %layout : i64
  scf.if %producer {
    scf.for %t = %c0 to %tiles step %c1 {
      %ti = arith.index_cast %t : index to i32
      %e = nvvm.mbarrier.arrive.expect_tx %qbar, %tx : !llvm.ptr<3>, i32 -> i64
      // expected-error @+1 {{a TMA load must refill a one-shot tile only after a wait on the barrier its readers release it on, but got no such wait (protocol_c6)}}
      nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmQ, %qbar, box[%c0_i32, %ti] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    }
  } else {
    %zero = llvm.mlir.zero : !acc
    scf.for %t = %c0 to %tiles step %c1 {
      %ti = arith.index_cast %t : index to i32
      %par = arith.andi %ti, %c1_i32 : i32
      nvvm.mbarrier.try_wait.parity %qbar, %par, %c0_i32 : !llvm.ptr<3>, i32, i32
      nvwgmma.fence
      %s = nvwgmma.mma_async %qdesc, %qdesc, %zero, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, zero], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      nvwgmma.wait_group 0
      // expected-note @+1 {{the readers release the tile on this barrier}}
      %a = nvvm.mbarrier.arrive %qfree : !llvm.ptr<3> -> i64
      %v = llvm.extractvalue %s[0] : !acc
      llvm.store %v, %out : f32, !llvm.ptr<1>
    }
  }
  return
}
