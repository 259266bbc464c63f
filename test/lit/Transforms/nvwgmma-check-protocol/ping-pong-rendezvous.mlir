// A ping-pong schedule (JAX Mosaic GPU's two-warpgroup flash attention):
// one warpgroup waits for the next stage, the other reads it after their
// next rendezvous (a barrier both arrive on and wait on each round), so the
// one wait serves both. Without that wait the read is reported.
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=unchecked=false -verify-diagnostics
// RUN: nvwgmma-opt %s -split-input-file --convert-scf-to-cf --nvwgmma-check-protocol=unchecked=false -verify-diagnostics

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @ping_pong_clean(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %n: index, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c2_i32 = arith.constant 2 : i32
  %stage_bytes = arith.constant 8192 : i32
  %stage_units = arith.constant 512 : i32
  %tx = arith.constant 8192 : i32
  %full = llvm.getelementptr %smem[16384] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %schedule = llvm.getelementptr %full[2] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %desc0 = llvm.or %field, %layout : i64
  %tid = gpu.thread_id x
  %c128 = arith.constant 128 : index
  %wgx = arith.divui %tid, %c128 : index
  %wg = arith.index_cast %wgx : index to i32
  %is0 = arith.cmpi eq, %wg, %c0_i32 : i32
  %is1 = arith.cmpi eq, %wg, %c1_i32 : i32
  scf.if %is1 {
    %t = nvvm.mbarrier.arrive.expect_tx %full, %tx : !llvm.ptr<3>, i32 -> i64
    nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmA, %full, box[%c0_i32, %c0_i32] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
  }
  scf.if %is0 {
    nvvm.mbarrier.try_wait.parity %full, %c0_i32, %c0_i32 : !llvm.ptr<3>, i32, i32
  }
  %zero = llvm.mlir.zero : !acc
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) {
    %ki = arith.index_cast %k : index to i32
    %s = arith.remui %ki, %c2_i32 : i32
    %units = arith.muli %s, %stage_units : i32
    %units64 = arith.extui %units : i32 to i64
    %desc = llvm.add %desc0, %units64 : i64
    nvwgmma.fence
    %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
    nvwgmma.commit_group
    %next = arith.addi %ki, %c1_i32 : i32
    %ni = arith.index_cast %next : i32 to index
    %more = arith.cmpi slt, %ni, %n : index
    %ns = arith.remui %next, %c2_i32 : i32
    %nb = llvm.getelementptr %full[%ns] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
    scf.if %is1 {
      scf.if %more {
        %off = arith.muli %ns, %stage_bytes : i32
        %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
        %t = nvvm.mbarrier.arrive.expect_tx %nb, %tx : !llvm.ptr<3>, i32 -> i64
        nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %nb, box[%c0_i32, %next] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
      }
    }
    %sp = arith.andi %ki, %c1_i32 : i32
    %a = nvvm.mbarrier.arrive %schedule : !llvm.ptr<3> -> i64
    nvvm.mbarrier.try_wait.parity %schedule, %sp, %c0_i32 : !llvm.ptr<3>, i32, i32
    nvwgmma.wait_group 0
    scf.if %is0 {
      scf.if %more {
        %round = arith.divui %next, %c2_i32 : i32
        %p = arith.andi %round, %c1_i32 : i32
        nvvm.mbarrier.try_wait.parity %nb, %p, %c0_i32 : !llvm.ptr<3>, i32, i32
      }
    }
    scf.yield %d : !acc
  }
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c6_ping_pong_wait_deleted(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %n: index, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c2_i32 = arith.constant 2 : i32
  %stage_bytes = arith.constant 8192 : i32
  %stage_units = arith.constant 512 : i32
  %tx = arith.constant 8192 : i32
  %full = llvm.getelementptr %smem[16384] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %schedule = llvm.getelementptr %full[2] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %desc0 = llvm.or %field, %layout : i64
  %tid = gpu.thread_id x
  %c128 = arith.constant 128 : index
  %wgx = arith.divui %tid, %c128 : index
  %wg = arith.index_cast %wgx : index to i32
  %is0 = arith.cmpi eq, %wg, %c0_i32 : i32
  %is1 = arith.cmpi eq, %wg, %c1_i32 : i32
  scf.if %is1 {
    %t = nvvm.mbarrier.arrive.expect_tx %full, %tx : !llvm.ptr<3>, i32 -> i64
    nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmA, %full, box[%c0_i32, %c0_i32] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
  }
  scf.if %is0 {
    nvvm.mbarrier.try_wait.parity %full, %c0_i32, %c0_i32 : !llvm.ptr<3>, i32, i32
  }
  %zero = llvm.mlir.zero : !acc
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) {
    %ki = arith.index_cast %k : index to i32
    %s = arith.remui %ki, %c2_i32 : i32
    %units = arith.muli %s, %stage_units : i32
    %units64 = arith.extui %units : i32 to i64
    %desc = llvm.add %desc0, %units64 : i64
    nvwgmma.fence
    // expected-error @+1 {{an mma_async must read stage k mod 2 only after a wait on that stage's full barrier in the same round, but got no such wait (protocol_c6)}}
    %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
    nvwgmma.commit_group
    %next = arith.addi %ki, %c1_i32 : i32
    %ni = arith.index_cast %next : i32 to index
    %more = arith.cmpi slt, %ni, %n : index
    %ns = arith.remui %next, %c2_i32 : i32
    %nb = llvm.getelementptr %full[%ns] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
    scf.if %is1 {
      scf.if %more {
        %off = arith.muli %ns, %stage_bytes : i32
        %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
        %t = nvvm.mbarrier.arrive.expect_tx %nb, %tx : !llvm.ptr<3>, i32 -> i64
        // expected-note @+1 {{the stage is filled by this TMA load, which completes on the full barrier}}
        nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %nb, box[%c0_i32, %next] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
      }
    }
    %sp = arith.andi %ki, %c1_i32 : i32
    %a = nvvm.mbarrier.arrive %schedule : !llvm.ptr<3> -> i64
    nvvm.mbarrier.try_wait.parity %schedule, %sp, %c0_i32 : !llvm.ptr<3>, i32, i32
    nvwgmma.wait_group 0
    scf.if %is0 {
      scf.if %more {
      }
    }
    scf.yield %d : !acc
  }
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c6_ping_pong_without_rendezvous(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %n: index, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c2_i32 = arith.constant 2 : i32
  %stage_bytes = arith.constant 8192 : i32
  %stage_units = arith.constant 512 : i32
  %tx = arith.constant 8192 : i32
  %full = llvm.getelementptr %smem[16384] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %schedule = llvm.getelementptr %full[2] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %desc0 = llvm.or %field, %layout : i64
  %tid = gpu.thread_id x
  %c128 = arith.constant 128 : index
  %wgx = arith.divui %tid, %c128 : index
  %wg = arith.index_cast %wgx : index to i32
  %is0 = arith.cmpi eq, %wg, %c0_i32 : i32
  %is1 = arith.cmpi eq, %wg, %c1_i32 : i32
  scf.if %is1 {
    %t = nvvm.mbarrier.arrive.expect_tx %full, %tx : !llvm.ptr<3>, i32 -> i64
    nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %tmA, %full, box[%c0_i32, %c0_i32] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
  }
  scf.if %is0 {
    nvvm.mbarrier.try_wait.parity %full, %c0_i32, %c0_i32 : !llvm.ptr<3>, i32, i32
  }
  %zero = llvm.mlir.zero : !acc
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) {
    %ki = arith.index_cast %k : index to i32
    %s = arith.remui %ki, %c2_i32 : i32
    %units = arith.muli %s, %stage_units : i32
    %units64 = arith.extui %units : i32 to i64
    %desc = llvm.add %desc0, %units64 : i64
    nvwgmma.fence
    // expected-error @+1 {{an mma_async must read stage k mod 2 only after a wait on that stage's full barrier in the same round, but got no such wait (protocol_c6)}}
    %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
    nvwgmma.commit_group
    %next = arith.addi %ki, %c1_i32 : i32
    %ni = arith.index_cast %next : i32 to index
    %more = arith.cmpi slt, %ni, %n : index
    %ns = arith.remui %next, %c2_i32 : i32
    %nb = llvm.getelementptr %full[%ns] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
    scf.if %is1 {
      scf.if %more {
        %off = arith.muli %ns, %stage_bytes : i32
        %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
        %t = nvvm.mbarrier.arrive.expect_tx %nb, %tx : !llvm.ptr<3>, i32 -> i64
        // expected-note @+1 {{the stage is filled by this TMA load, which completes on the full barrier}}
        nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %nb, box[%c0_i32, %next] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
      }
    }
    %sp = arith.andi %ki, %c1_i32 : i32
    nvwgmma.wait_group 0
    scf.if %is0 {
      scf.if %more {
        %round = arith.divui %next, %c2_i32 : i32
        %p = arith.andi %round, %c1_i32 : i32
        nvvm.mbarrier.try_wait.parity %nb, %p, %c0_i32 : !llvm.ptr<3>, i32, i32
      }
    }
    scf.yield %d : !acc
  }
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  return
}
