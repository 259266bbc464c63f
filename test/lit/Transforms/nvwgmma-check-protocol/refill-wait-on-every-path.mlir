// The producer's side of a ring: a refill follows a wait on its stage's empty
// barrier in its round on every path; a wait some path skips is missing there.
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=unchecked=false -verify-diagnostics

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c6_empty_wait_skipped_on_a_path(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %skip: i1, %out: !llvm.ptr<1>) {
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
    %pr:2 = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%s = %c0_i32, %p = %c1_i32) -> (i32, i32) {
      %ki = arith.index_cast %k : index to i32
      %eb = llvm.getelementptr %empty[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %off = arith.muli %s, %stage_bytes : i32
      %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      scf.if %skip {
        %t = nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32 -> i64
        // expected-error @+1 {{a TMA load must refill stage k mod 3 only after a wait on that stage's empty barrier in the same round, but got a path without one (protocol_c6)}}
        nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %fb, box[%c0_i32, %ki] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
      } else {
        nvvm.mbarrier.try_wait.parity %eb, %p, %c0_i32 : !llvm.ptr<3>, i32, i32
        %t = nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32 -> i64
        nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %fb, box[%c0_i32, %ki] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
      }
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
