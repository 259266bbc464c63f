// Gluon's warp-specialised consumer releases stage (k - 1) mod S under
// `if k > 0`, with signed remainders: k - 1 is not negative there, so the
// release names that stage and a group still reading it is caught.
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=unchecked=false -verify-diagnostics
// RUN: nvwgmma-opt %s -split-input-file --convert-scf-to-cf --nvwgmma-check-protocol=unchecked=false -verify-diagnostics

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @guarded_release_clean(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: i32, %producer: i1, %out: !llvm.ptr<1>) {
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
    scf.for %k = %c0_i32 to %k_tiles step %c1_i32 : i32 {
      %s = arith.remsi %k, %c3 : i32
      %round = arith.divsi %k, %c3 : i32
      %odd = arith.andi %round, %c1_i32 : i32
      %p = arith.xori %odd, %c1_i32 : i32
      %eb = llvm.getelementptr %empty[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %eb, %p, %c0_i32 : !llvm.ptr<3>, i32, i32
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %off = arith.muli %s, %stage_bytes : i32
      %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      %t = nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32 -> i64
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %fb, box[%c0_i32, %k] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    }
  } else {
    %zero = llvm.mlir.zero : !acc
    %r = scf.for %k = %c0_i32 to %k_tiles step %c1_i32 iter_args(%acc = %zero) -> (!acc) : i32 {
      %s = arith.remsi %k, %c3 : i32
      %round = arith.divsi %k, %c3 : i32
      %p = arith.andi %round, %c1_i32 : i32
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %fb, %p, %c0_i32 : !llvm.ptr<3>, i32, i32
      %units = arith.muli %s, %stage_units : i32
      %units64 = arith.extui %units : i32 to i64
      %desc = llvm.add %desc0, %units64 : i64
      nvwgmma.fence
      %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      nvwgmma.wait_group 1
      %started = arith.cmpi sgt, %k, %c0_i32 : i32
      scf.if %started {
        %prev = arith.subi %k, %c1_i32 : i32
        %ps = arith.remsi %prev, %c3 : i32
        %cb = llvm.getelementptr %empty[%ps] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
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

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c7_deepened_wait_before_guarded_release(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: i32, %producer: i1, %out: !llvm.ptr<1>) {
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
    scf.for %k = %c0_i32 to %k_tiles step %c1_i32 : i32 {
      %s = arith.remsi %k, %c3 : i32
      %round = arith.divsi %k, %c3 : i32
      %odd = arith.andi %round, %c1_i32 : i32
      %p = arith.xori %odd, %c1_i32 : i32
      %eb = llvm.getelementptr %empty[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %eb, %p, %c0_i32 : !llvm.ptr<3>, i32, i32
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %off = arith.muli %s, %stage_bytes : i32
      %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      %t = nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32 -> i64
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %fb, box[%c0_i32, %k] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    }
  } else {
    %zero = llvm.mlir.zero : !acc
    %r = scf.for %k = %c0_i32 to %k_tiles step %c1_i32 iter_args(%acc = %zero) -> (!acc) : i32 {
      %s = arith.remsi %k, %c3 : i32
      %round = arith.divsi %k, %c3 : i32
      %p = arith.andi %round, %c1_i32 : i32
      %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %fb, %p, %c0_i32 : !llvm.ptr<3>, i32, i32
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
      %started = arith.cmpi sgt, %k, %c0_i32 : i32
      scf.if %started {
        %prev = arith.subi %k, %c1_i32 : i32
        %ps = arith.remsi %prev, %c3 : i32
        %cb = llvm.getelementptr %empty[%ps] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        // expected-error @+1 {{a stage must be released only after the wgmma groups reading it completed (wait_group 1 or lower first), but got stage (k - 1) mod 3 released while that group may be pending (protocol_c7)}}
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
