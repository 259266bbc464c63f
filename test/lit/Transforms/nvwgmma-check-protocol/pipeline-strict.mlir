// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=strict=true -verify-diagnostics
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol | FileCheck %s --check-prefix=LAX
//
// What the pipeline rules cannot decide: silent by default (the LAX run: the IR comes
// through unchanged), reported with strict=true.

// A tensor TMA load without nvwgmma.tx_bytes: its box is in the tensor map.
// LAX-LABEL: func.func @unknown_tma_bytes
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @unknown_tma_bytes(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>) {
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
      // expected-error @+1 {{the expect_tx byte count must be checked against the TMA loads completing on this barrier, but got a load whose size the IR does not say (nvwgmma.tx_bytes) (protocol_c8, strict)}}
      %t = nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32 -> i64
      %off = arith.muli %s, %stage_bytes : i32
      %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %fb, box[%c0_i32, %ki] {isCTAOnly = true} : !llvm.ptr<3>, !llvm.ptr
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

// The consumer's parity comes from outside the loop.
// LAX-LABEL: func.func @parity_from_an_argument
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @parity_from_an_argument(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: index, %producer: i1, %leader: i1, %out: !llvm.ptr<1>, %phase: i32) {
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
      // expected-error @+1 {{the parity waited on must be proven to follow the round of stage k mod 3, (k / 3) & 1, but got a value the checker cannot relate (protocol_c9, strict)}}
      nvvm.mbarrier.try_wait.parity %fb, %phase, %c0_i32 : !llvm.ptr<3>, i32, i32
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

// Upstream's sm90 GEMM tests after convert-linalg-to-loops and outlining: the
// stages are filled before the loop at a slot the kernel gets as a parameter
// (%slot), so no ring relates the two wgmma reads to the fills. Strict mode
// says so once, at the first read, counting the others.
// LAX-LABEL: func.func @reads_unrelated_to_fills
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @reads_unrelated_to_fills(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %slot: i32, %out: !llvm.ptr<1>) {
  %c0_i32 = arith.constant 0 : i32
  %c16384 = arith.constant 16384 : i32
  %full = llvm.getelementptr %smem[32768] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %fb = llvm.getelementptr %full[%slot] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
  %tx = arith.constant 16384 : i32
  %t = nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32 -> i64
  %off = arith.muli %slot, %c16384 : i32
  %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %fb, box[%c0_i32, %c0_i32] {isCTAOnly = true, nvwgmma.tx_bytes = 16384 : i64} : !llvm.ptr<3>, !llvm.ptr
  nvvm.mbarrier.try_wait.parity %fb, %c0_i32, %c0_i32 : !llvm.ptr<3>, i32, i32
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %desc = llvm.or %field, %layout : i64
  %c2_i64 = llvm.mlir.constant(2 : i64) : i64
  %desc1 = llvm.add %desc, %c2_i64 : i64
  %zero = llvm.mlir.zero : !acc
  nvwgmma.fence
  // expected-error @+1 {{the shared memory an mma_async reads must be proven filled by a TMA load and waited for, but got descriptors the checker cannot relate to any TMA ring or fill, here and at 1 more mma_async (protocol_c6, strict)}}
  %d0 = nvwgmma.mma_async %desc, %desc, %zero, #nvwgmma.shape<m = 64, n = 8, k = 16>,
          D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  %d1 = nvwgmma.mma_async %desc1, %desc1, %d0, #nvwgmma.shape<m = 64, n = 8, k = 16>,
          D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  %v = llvm.extractvalue %d1[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  return
}
