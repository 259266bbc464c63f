// RUN: nvwgmma-opt %s --nvwgmma-check-protocol=strict=true -verify-diagnostics
//
// Two rings (FlashAttention's K and V) and a one-shot Q, with the first and last blocks
// peeled out of the loop: K stage 0 mod 2 (a constant index) waited for and
// read before the loop, V stage (n - 1) mod 2 (a symbolic index) after it;
// the producer waits on each ring's own empty barrier. No diagnostic, in
// strict mode. pipeline-two-rings-invalid.mlir deletes each wait.

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @two_rings_peeled(%smem: !llvm.ptr<3>, %tmK: !llvm.ptr, %tmV: !llvm.ptr, %n: i32, %producer: i1, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %stage_bytes = arith.constant 8192 : i32
  %stage_units = arith.constant 512 : i32
  %tx = arith.constant 8192 : i32
  %fullK = llvm.getelementptr %smem[32768] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %emptyK = llvm.getelementptr %fullK[2] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %fullV = llvm.getelementptr %fullK[4] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %emptyV = llvm.getelementptr %fullK[6] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %vbase = llvm.getelementptr %smem[16384] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %kdesc0 = llvm.or %field, %layout : i64
  %c1024_i64 = llvm.mlir.constant(1024 : i64) : i64
  %vdesc0 = llvm.add %kdesc0, %c1024_i64 : i64
  // P's stand-in (the A operand of P V): shared memory outside both rings.
  %c3072_i64 = llvm.mlir.constant(3072 : i64) : i64
  %pdesc = llvm.add %kdesc0, %c3072_i64 : i64
  // Q, loaded once outside both rings, completes on its own barrier.
  %qbar = llvm.getelementptr %fullK[8] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %qdst = llvm.getelementptr %smem[40960] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %c2560_i64 = llvm.mlir.constant(2560 : i64) : i64
  %qdesc = llvm.add %kdesc0, %c2560_i64 : i64
  %n_idx = arith.index_cast %n : i32 to index
  scf.if %producer {
    %tq = nvvm.mbarrier.arrive.expect_tx %qbar, %tx : !llvm.ptr<3>, i32 -> i64
    nvvm.cp.async.bulk.tensor.shared.cluster.global %qdst, %tmK, %qbar, box[%c0_i32, %c0_i32] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    scf.for %j = %c0 to %n_idx step %c1 {
      %ji = arith.index_cast %j : index to i32
      %s = arith.remui %ji, %c2 : i32
      %round = arith.divui %ji, %c2 : i32
      %par = arith.andi %round, %c1_i32 : i32
      %epar = arith.xori %par, %c1_i32 : i32
      %off = arith.muli %s, %stage_bytes : i32
      %ekb = llvm.getelementptr %emptyK[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %ekb, %epar, %c0_i32 : !llvm.ptr<3>, i32, i32
      %fkb = llvm.getelementptr %fullK[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %tk = nvvm.mbarrier.arrive.expect_tx %fkb, %tx : !llvm.ptr<3>, i32 -> i64
      %kdst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      nvvm.cp.async.bulk.tensor.shared.cluster.global %kdst, %tmK, %fkb, box[%c0_i32, %ji] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
      %evb = llvm.getelementptr %emptyV[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %evb, %epar, %c0_i32 : !llvm.ptr<3>, i32, i32
      %fvb = llvm.getelementptr %fullV[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %tv = nvvm.mbarrier.arrive.expect_tx %fvb, %tx : !llvm.ptr<3>, i32 -> i64
      %vdst = llvm.getelementptr %vbase[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      nvvm.cp.async.bulk.tensor.shared.cluster.global %vdst, %tmV, %fvb, box[%c0_i32, %ji] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    }
  } else {
    %zero = llvm.mlir.zero : !acc
    nvvm.mbarrier.try_wait.parity %qbar, %c0_i32, %c0_i32 : !llvm.ptr<3>, i32, i32
    // Block 0, peeled: S = Q K_0^T reads stage 0 mod 2.
    %s0 = arith.remui %c0_i32, %c2 : i32
    %r0 = arith.divui %c0_i32, %c2 : i32
    %p0 = arith.andi %r0, %c1_i32 : i32
    %fk0 = llvm.getelementptr %fullK[%s0] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
    nvvm.mbarrier.try_wait.parity %fk0, %p0, %c0_i32 : !llvm.ptr<3>, i32, i32
    %u0 = arith.muli %s0, %stage_units : i32
    %u0_64 = arith.extui %u0 : i32 to i64
    %kd0 = llvm.add %kdesc0, %u0_64 : i64
    nvwgmma.fence
    %a0 = nvwgmma.mma_async %qdesc, %kd0, %zero, #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, zero], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
    nvwgmma.commit_group
    nvwgmma.wait_group 0
    %ek0 = llvm.getelementptr %emptyK[%s0] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
    %x0 = nvvm.mbarrier.arrive %ek0 : !llvm.ptr<3> -> i64
    // Blocks 1 .. n-1: S_j reads K stage j; O += P_(j-1) V_(j-1) reads V stage j - 1.
    %r = scf.for %j = %c1 to %n_idx step %c1 iter_args(%acc = %a0) -> !acc {
      %ji = arith.index_cast %j : index to i32
      %s = arith.remui %ji, %c2 : i32
      %round = arith.divui %ji, %c2 : i32
      %par = arith.andi %round, %c1_i32 : i32
      %fkb = llvm.getelementptr %fullK[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %fkb, %par, %c0_i32 : !llvm.ptr<3>, i32, i32
      %u = arith.muli %s, %stage_units : i32
      %u64 = arith.extui %u : i32 to i64
      %kd = llvm.add %kdesc0, %u64 : i64
      nvwgmma.fence
      %sj = nvwgmma.mma_async %qdesc, %kd, %zero, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, zero], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      %prev = arith.subi %ji, %c1_i32 : i32
      %ps = arith.remui %prev, %c2 : i32
      %pround = arith.divui %prev, %c2 : i32
      %ppar = arith.andi %pround, %c1_i32 : i32
      %fvb = llvm.getelementptr %fullV[%ps] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.try_wait.parity %fvb, %ppar, %c0_i32 : !llvm.ptr<3>, i32, i32
      %pu = arith.muli %ps, %stage_units : i32
      %pu64 = arith.extui %pu : i32 to i64
      %vd = llvm.add %vdesc0, %pu64 : i64
      %o = nvwgmma.mma_async %pdesc, %vd, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      nvwgmma.wait_group 0
      %ekb = llvm.getelementptr %emptyK[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %xk = nvvm.mbarrier.arrive %ekb : !llvm.ptr<3> -> i64
      %evb = llvm.getelementptr %emptyV[%ps] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %xv = nvvm.mbarrier.arrive %evb : !llvm.ptr<3> -> i64
      scf.yield %o : !acc
    }
    // Block n - 1's P V, peeled: V stage (n - 1) mod 2.
    %last = arith.subi %n, %c1_i32 : i32
    %ls = arith.remui %last, %c2 : i32
    %lround = arith.divui %last, %c2 : i32
    %lpar = arith.andi %lround, %c1_i32 : i32
    %fvl = llvm.getelementptr %fullV[%ls] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
    nvvm.mbarrier.try_wait.parity %fvl, %lpar, %c0_i32 : !llvm.ptr<3>, i32, i32
    %lu = arith.muli %ls, %stage_units : i32
    %lu64 = arith.extui %lu : i32 to i64
    %vdl = llvm.add %vdesc0, %lu64 : i64
    nvwgmma.fence
    %ol = nvwgmma.mma_async %pdesc, %vdl, %r, #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
    nvwgmma.commit_group
    nvwgmma.wait_group 0
    %evl = llvm.getelementptr %emptyV[%ls] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
    %xl = nvvm.mbarrier.arrive %evl : !llvm.ptr<3> -> i64
    %v = llvm.extractvalue %ol[0] : !acc
    llvm.store %v, %out : f32, !llvm.ptr<1>
  }
  return
}
