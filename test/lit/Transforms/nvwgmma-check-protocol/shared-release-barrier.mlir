// One barrier releases every stage of a ring, one phase per round (JAX
// Mosaic GPU's consumed barriers): the consumers arrive on it once per
// round after reading the round's stage (here through a transposed view of
// it), the producer waits on it before each refill. A rendezvous barrier
// the consumers arrive on and then wait on themselves releases nothing.
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=unchecked=false -verify-diagnostics
// RUN: nvwgmma-opt %s -split-input-file --convert-scf-to-cf --nvwgmma-check-protocol=unchecked=false -verify-diagnostics

!acc = !llvm.struct<(f32, f32, f32, f32)>
!view = !llvm.struct<(ptr<3>, ptr<3>, i64, array<2 x i64>, array<2 x i64>)>
func.func @shared_release_clean(%tmK: !llvm.ptr, %n: index, %wg: i32, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c2_i32 = arith.constant 2 : i32
  %tx = arith.constant 8192 : i32
  %smem = memref.alloca() : memref<16400xi8, #gpu.address_space<workgroup>>
  %ring = memref.view %smem[%c0][] : memref<16400xi8, #gpu.address_space<workgroup>> to memref<2x64x64xf16, #gpu.address_space<workgroup>>
  %base = llvm.mlir.addressof @bars : !llvm.ptr<3>
  %consumed = llvm.getelementptr %base[2] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %schedule = llvm.getelementptr %base[3] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %c2_i64 = llvm.mlir.constant(2 : i64) : i64
  %is_producer = arith.cmpi eq, %wg, %c2_i32 : i32
  scf.if %is_producer {
    scf.for %s = %c0 to %c2 step %c1 {
      %si = arith.index_cast %s : index to i32
      %fb = llvm.getelementptr %base[%si] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %stage = memref.subview %ring[%s, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
      %sv = builtin.unrealized_conversion_cast %stage : memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>> to !view
      %sa = llvm.extractvalue %sv[1] : !view
      %so = llvm.extractvalue %sv[2] : !view
      %dst = llvm.getelementptr %sa[%so] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
      nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmK, %fb, box[%c0_i32, %si] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    }
    %m = arith.subi %n, %c2 : index
    %p_end = scf.for %k = %c0 to %m step %c1 iter_args(%p = %c0_i32) -> (i32) {
      nvvm.mbarrier.try_wait.parity %consumed, %p, %c0_i32 : !llvm.ptr<3>, i32, i32
      %slot = arith.remui %k, %c2 : index
      %si = arith.index_cast %slot : index to i32
      %fb = llvm.getelementptr %base[%si] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %stage = memref.subview %ring[%slot, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
      %sv = builtin.unrealized_conversion_cast %stage : memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>> to !view
      %sa = llvm.extractvalue %sv[1] : !view
      %so = llvm.extractvalue %sv[2] : !view
      %dst = llvm.getelementptr %sa[%so] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
      %ki = arith.index_cast %k : index to i32
      nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmK, %fb, box[%c0_i32, %ki] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
      %pn = arith.xori %p, %c1_i32 : i32
      scf.yield %pn : i32
    }
    // The last rounds' releases, before the CTA exits.
    %p_fin = scf.for %k = %c0 to %c2 step %c1 iter_args(%p = %p_end) -> (i32) {
      nvvm.mbarrier.try_wait.parity %consumed, %p, %c0_i32 : !llvm.ptr<3>, i32, i32
      %pn = arith.xori %p, %c1_i32 : i32
      scf.yield %pn : i32
    }
  } else {
    %zero = llvm.mlir.zero : !acc
    %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) {
      %slot = arith.remui %k, %c2 : index
      %si = arith.index_cast %slot : index to i32
      %fb = llvm.getelementptr %base[%si] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %ki = arith.index_cast %k : index to i32
      %round = arith.divui %ki, %c2_i32 : i32
      %phase = arith.andi %round, %c1_i32 : i32
      nvvm.mbarrier.try_wait.parity %fb, %phase, %c0_i32 : !llvm.ptr<3>, i32, i32
      %stage = memref.subview %ring[%slot, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
      %t = memref.transpose %stage (d0, d1) -> (d1, d0) : memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[1, 64], offset: ?>, #gpu.address_space<workgroup>>
      %v = builtin.unrealized_conversion_cast %t : memref<64x64xf16, strided<[1, 64], offset: ?>, #gpu.address_space<workgroup>> to !view
      %aligned = llvm.extractvalue %v[1] : !view
      %offset = llvm.extractvalue %v[2] : !view
      %bytes = llvm.mul %offset, %c2_i64 : i64
      %p0 = llvm.ptrtoint %aligned : !llvm.ptr<3> to i64
      %addr = llvm.add %p0, %bytes : i64
      %field = llvm.lshr %addr, %c4_i64 : i64
      %desc = llvm.or %field, %layout : i64
      nvwgmma.fence
      %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      %a1 = nvvm.mbarrier.arrive %schedule : !llvm.ptr<3> -> i64
      nvvm.mbarrier.try_wait.parity %schedule, %phase, %c0_i32 : !llvm.ptr<3>, i32, i32
      nvwgmma.wait_group 0
      %a2 = nvvm.mbarrier.arrive %consumed : !llvm.ptr<3> -> i64
      scf.yield %d : !acc
    }
    %x = llvm.extractvalue %r[0] : !acc
    llvm.store %x, %out : f32, !llvm.ptr<1>
  }
  return
}
llvm.mlir.global internal @bars() {addr_space = 3 : i32} : !llvm.array<4 x i64>

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
!view = !llvm.struct<(ptr<3>, ptr<3>, i64, array<2 x i64>, array<2 x i64>)>
func.func @protocol_c7_release_before_wait(%tmK: !llvm.ptr, %n: index, %wg: i32, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c2_i32 = arith.constant 2 : i32
  %tx = arith.constant 8192 : i32
  %smem = memref.alloca() : memref<16400xi8, #gpu.address_space<workgroup>>
  %ring = memref.view %smem[%c0][] : memref<16400xi8, #gpu.address_space<workgroup>> to memref<2x64x64xf16, #gpu.address_space<workgroup>>
  %base = llvm.mlir.addressof @bars : !llvm.ptr<3>
  %consumed = llvm.getelementptr %base[2] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %schedule = llvm.getelementptr %base[3] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %c2_i64 = llvm.mlir.constant(2 : i64) : i64
  %is_producer = arith.cmpi eq, %wg, %c2_i32 : i32
  scf.if %is_producer {
    scf.for %s = %c0 to %c2 step %c1 {
      %si = arith.index_cast %s : index to i32
      %fb = llvm.getelementptr %base[%si] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %stage = memref.subview %ring[%s, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
      %sv = builtin.unrealized_conversion_cast %stage : memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>> to !view
      %sa = llvm.extractvalue %sv[1] : !view
      %so = llvm.extractvalue %sv[2] : !view
      %dst = llvm.getelementptr %sa[%so] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
      nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmK, %fb, box[%c0_i32, %si] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    }
    %m = arith.subi %n, %c2 : index
    %p_end = scf.for %k = %c0 to %m step %c1 iter_args(%p = %c0_i32) -> (i32) {
      nvvm.mbarrier.try_wait.parity %consumed, %p, %c0_i32 : !llvm.ptr<3>, i32, i32
      %slot = arith.remui %k, %c2 : index
      %si = arith.index_cast %slot : index to i32
      %fb = llvm.getelementptr %base[%si] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %stage = memref.subview %ring[%slot, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
      %sv = builtin.unrealized_conversion_cast %stage : memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>> to !view
      %sa = llvm.extractvalue %sv[1] : !view
      %so = llvm.extractvalue %sv[2] : !view
      %dst = llvm.getelementptr %sa[%so] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
      %ki = arith.index_cast %k : index to i32
      nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmK, %fb, box[%c0_i32, %ki] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
      %pn = arith.xori %p, %c1_i32 : i32
      scf.yield %pn : i32
    }
    // The last rounds' releases, before the CTA exits.
    %p_fin = scf.for %k = %c0 to %c2 step %c1 iter_args(%p = %p_end) -> (i32) {
      nvvm.mbarrier.try_wait.parity %consumed, %p, %c0_i32 : !llvm.ptr<3>, i32, i32
      %pn = arith.xori %p, %c1_i32 : i32
      scf.yield %pn : i32
    }
  } else {
    %zero = llvm.mlir.zero : !acc
    %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) {
      %slot = arith.remui %k, %c2 : index
      %si = arith.index_cast %slot : index to i32
      %fb = llvm.getelementptr %base[%si] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %ki = arith.index_cast %k : index to i32
      %round = arith.divui %ki, %c2_i32 : i32
      %phase = arith.andi %round, %c1_i32 : i32
      nvvm.mbarrier.try_wait.parity %fb, %phase, %c0_i32 : !llvm.ptr<3>, i32, i32
      %stage = memref.subview %ring[%slot, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
      %t = memref.transpose %stage (d0, d1) -> (d1, d0) : memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[1, 64], offset: ?>, #gpu.address_space<workgroup>>
      %v = builtin.unrealized_conversion_cast %t : memref<64x64xf16, strided<[1, 64], offset: ?>, #gpu.address_space<workgroup>> to !view
      %aligned = llvm.extractvalue %v[1] : !view
      %offset = llvm.extractvalue %v[2] : !view
      %bytes = llvm.mul %offset, %c2_i64 : i64
      %p0 = llvm.ptrtoint %aligned : !llvm.ptr<3> to i64
      %addr = llvm.add %p0, %bytes : i64
      %field = llvm.lshr %addr, %c4_i64 : i64
      %desc = llvm.or %field, %layout : i64
      nvwgmma.fence
      // expected-note @+1 {{mma_async reading the stage issued here}}
      %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      %a1 = nvvm.mbarrier.arrive %schedule : !llvm.ptr<3> -> i64
      nvvm.mbarrier.try_wait.parity %schedule, %phase, %c0_i32 : !llvm.ptr<3>, i32, i32
      // expected-error @+1 {{a stage must be released only after the wgmma groups reading it completed (wait_group 0 or lower first), but got stage k mod 2 released while that group may be pending (protocol_c7)}}
      %a2 = nvvm.mbarrier.arrive %consumed : !llvm.ptr<3> -> i64
      // expected-note @+1 {{the last wait_group executed before it}}
      nvwgmma.wait_group 0
      scf.yield %d : !acc
    }
    %x = llvm.extractvalue %r[0] : !acc
    llvm.store %x, %out : f32, !llvm.ptr<1>
  }
  return
}
llvm.mlir.global internal @bars() {addr_space = 3 : i32} : !llvm.array<4 x i64>

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
!view = !llvm.struct<(ptr<3>, ptr<3>, i64, array<2 x i64>, array<2 x i64>)>
func.func @protocol_c6_refill_without_release(%tmK: !llvm.ptr, %n: index, %wg: i32, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c2_i32 = arith.constant 2 : i32
  %tx = arith.constant 8192 : i32
  %smem = memref.alloca() : memref<16400xi8, #gpu.address_space<workgroup>>
  %ring = memref.view %smem[%c0][] : memref<16400xi8, #gpu.address_space<workgroup>> to memref<2x64x64xf16, #gpu.address_space<workgroup>>
  %base = llvm.mlir.addressof @bars : !llvm.ptr<3>
  %consumed = llvm.getelementptr %base[2] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %schedule = llvm.getelementptr %base[3] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %c2_i64 = llvm.mlir.constant(2 : i64) : i64
  %is_producer = arith.cmpi eq, %wg, %c2_i32 : i32
  scf.if %is_producer {
    scf.for %s = %c0 to %c2 step %c1 {
      %si = arith.index_cast %s : index to i32
      %fb = llvm.getelementptr %base[%si] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %stage = memref.subview %ring[%s, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
      %sv = builtin.unrealized_conversion_cast %stage : memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>> to !view
      %sa = llvm.extractvalue %sv[1] : !view
      %so = llvm.extractvalue %sv[2] : !view
      %dst = llvm.getelementptr %sa[%so] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
      nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmK, %fb, box[%c0_i32, %si] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    }
    %m = arith.subi %n, %c2 : index
    %p_end = scf.for %k = %c0 to %m step %c1 iter_args(%p = %c0_i32) -> (i32) {
      %slot = arith.remui %k, %c2 : index
      %si = arith.index_cast %slot : index to i32
      %fb = llvm.getelementptr %base[%si] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %stage = memref.subview %ring[%slot, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
      %sv = builtin.unrealized_conversion_cast %stage : memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>> to !view
      %sa = llvm.extractvalue %sv[1] : !view
      %so = llvm.extractvalue %sv[2] : !view
      %dst = llvm.getelementptr %sa[%so] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
      %ki = arith.index_cast %k : index to i32
      nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32
      // expected-error @+1 {{a TMA load must refill a stage of this 2-stage ring only after a wait on that stage's empty barrier, but got no such wait (protocol_c6)}}
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmK, %fb, box[%c0_i32, %ki] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
      %pn = arith.xori %p, %c1_i32 : i32
      scf.yield %pn : i32
    }
    // The last rounds' releases, before the CTA exits.
    %p_fin = scf.for %k = %c0 to %c2 step %c1 iter_args(%p = %p_end) -> (i32) {
      nvvm.mbarrier.try_wait.parity %consumed, %p, %c0_i32 : !llvm.ptr<3>, i32, i32
      %pn = arith.xori %p, %c1_i32 : i32
      scf.yield %pn : i32
    }
  } else {
    %zero = llvm.mlir.zero : !acc
    %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) {
      %slot = arith.remui %k, %c2 : index
      %si = arith.index_cast %slot : index to i32
      %fb = llvm.getelementptr %base[%si] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %ki = arith.index_cast %k : index to i32
      %round = arith.divui %ki, %c2_i32 : i32
      %phase = arith.andi %round, %c1_i32 : i32
      nvvm.mbarrier.try_wait.parity %fb, %phase, %c0_i32 : !llvm.ptr<3>, i32, i32
      %stage = memref.subview %ring[%slot, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
      %t = memref.transpose %stage (d0, d1) -> (d1, d0) : memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[1, 64], offset: ?>, #gpu.address_space<workgroup>>
      %v = builtin.unrealized_conversion_cast %t : memref<64x64xf16, strided<[1, 64], offset: ?>, #gpu.address_space<workgroup>> to !view
      %aligned = llvm.extractvalue %v[1] : !view
      %offset = llvm.extractvalue %v[2] : !view
      %bytes = llvm.mul %offset, %c2_i64 : i64
      %p0 = llvm.ptrtoint %aligned : !llvm.ptr<3> to i64
      %addr = llvm.add %p0, %bytes : i64
      %field = llvm.lshr %addr, %c4_i64 : i64
      %desc = llvm.or %field, %layout : i64
      nvwgmma.fence
      %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      %a1 = nvvm.mbarrier.arrive %schedule : !llvm.ptr<3> -> i64
      nvvm.mbarrier.try_wait.parity %schedule, %phase, %c0_i32 : !llvm.ptr<3>, i32, i32
      nvwgmma.wait_group 0
      // expected-note @+1 {{the consumers release the ring's stages on this barrier}}
      %a2 = nvvm.mbarrier.arrive %consumed : !llvm.ptr<3> -> i64
      scf.yield %d : !acc
    }
    %x = llvm.extractvalue %r[0] : !acc
    llvm.store %x, %out : f32, !llvm.ptr<1>
  }
  return
}
llvm.mlir.global internal @bars() {addr_space = 3 : i32} : !llvm.array<4 x i64>

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
!view = !llvm.struct<(ptr<3>, ptr<3>, i64, array<2 x i64>, array<2 x i64>)>
func.func @protocol_c9_first_release_parity(%tmK: !llvm.ptr, %n: index, %wg: i32, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c2_i32 = arith.constant 2 : i32
  %tx = arith.constant 8192 : i32
  %smem = memref.alloca() : memref<16400xi8, #gpu.address_space<workgroup>>
  %ring = memref.view %smem[%c0][] : memref<16400xi8, #gpu.address_space<workgroup>> to memref<2x64x64xf16, #gpu.address_space<workgroup>>
  %base = llvm.mlir.addressof @bars : !llvm.ptr<3>
  %consumed = llvm.getelementptr %base[2] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %schedule = llvm.getelementptr %base[3] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %c2_i64 = llvm.mlir.constant(2 : i64) : i64
  %is_producer = arith.cmpi eq, %wg, %c2_i32 : i32
  scf.if %is_producer {
    scf.for %s = %c0 to %c2 step %c1 {
      %si = arith.index_cast %s : index to i32
      %fb = llvm.getelementptr %base[%si] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %stage = memref.subview %ring[%s, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
      %sv = builtin.unrealized_conversion_cast %stage : memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>> to !view
      %sa = llvm.extractvalue %sv[1] : !view
      %so = llvm.extractvalue %sv[2] : !view
      %dst = llvm.getelementptr %sa[%so] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
      nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmK, %fb, box[%c0_i32, %si] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
    }
    %m = arith.subi %n, %c2 : index
    %p_end = scf.for %k = %c0 to %m step %c1 iter_args(%p = %c1_i32) -> (i32) {
      // expected-error @+1 {{a first wait on a barrier the consumers release every stage on, one phase per round, must use parity 0, the phase their first release completes, but got 1, which passes before any stage is released (protocol_c9)}}
      nvvm.mbarrier.try_wait.parity %consumed, %p, %c0_i32 : !llvm.ptr<3>, i32, i32
      %slot = arith.remui %k, %c2 : index
      %si = arith.index_cast %slot : index to i32
      %fb = llvm.getelementptr %base[%si] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %stage = memref.subview %ring[%slot, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
      %sv = builtin.unrealized_conversion_cast %stage : memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>> to !view
      %sa = llvm.extractvalue %sv[1] : !view
      %so = llvm.extractvalue %sv[2] : !view
      %dst = llvm.getelementptr %sa[%so] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
      %ki = arith.index_cast %k : index to i32
      nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32
      nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmK, %fb, box[%c0_i32, %ki] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
      %pn = arith.xori %p, %c1_i32 : i32
      scf.yield %pn : i32
    }
    // The last rounds' releases, before the CTA exits.
    %p_fin = scf.for %k = %c0 to %c2 step %c1 iter_args(%p = %p_end) -> (i32) {
      nvvm.mbarrier.try_wait.parity %consumed, %p, %c0_i32 : !llvm.ptr<3>, i32, i32
      %pn = arith.xori %p, %c1_i32 : i32
      scf.yield %pn : i32
    }
  } else {
    %zero = llvm.mlir.zero : !acc
    %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) {
      %slot = arith.remui %k, %c2 : index
      %si = arith.index_cast %slot : index to i32
      %fb = llvm.getelementptr %base[%si] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
      %ki = arith.index_cast %k : index to i32
      %round = arith.divui %ki, %c2_i32 : i32
      %phase = arith.andi %round, %c1_i32 : i32
      nvvm.mbarrier.try_wait.parity %fb, %phase, %c0_i32 : !llvm.ptr<3>, i32, i32
      %stage = memref.subview %ring[%slot, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
      %t = memref.transpose %stage (d0, d1) -> (d1, d0) : memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>> to memref<64x64xf16, strided<[1, 64], offset: ?>, #gpu.address_space<workgroup>>
      %v = builtin.unrealized_conversion_cast %t : memref<64x64xf16, strided<[1, 64], offset: ?>, #gpu.address_space<workgroup>> to !view
      %aligned = llvm.extractvalue %v[1] : !view
      %offset = llvm.extractvalue %v[2] : !view
      %bytes = llvm.mul %offset, %c2_i64 : i64
      %p0 = llvm.ptrtoint %aligned : !llvm.ptr<3> to i64
      %addr = llvm.add %p0, %bytes : i64
      %field = llvm.lshr %addr, %c4_i64 : i64
      %desc = llvm.or %field, %layout : i64
      nvwgmma.fence
      %d = nvwgmma.mma_async %desc, %desc, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
      nvwgmma.commit_group
      %a1 = nvvm.mbarrier.arrive %schedule : !llvm.ptr<3> -> i64
      nvvm.mbarrier.try_wait.parity %schedule, %phase, %c0_i32 : !llvm.ptr<3>, i32, i32
      nvwgmma.wait_group 0
      %a2 = nvvm.mbarrier.arrive %consumed : !llvm.ptr<3> -> i64
      scf.yield %d : !acc
    }
    %x = llvm.extractvalue %r[0] : !acc
    llvm.store %x, %out : f32, !llvm.ptr<1>
  }
  return
}
llvm.mlir.global internal @bars() {addr_space = 3 : i32} : !llvm.array<4 x i64>
