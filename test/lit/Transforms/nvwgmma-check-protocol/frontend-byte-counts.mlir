// A TMA load whose destination is the start of a statically shaped memref
// (Mosaic GPU addresses its copies so) brings that memref's bytes.
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=unchecked=false -verify-diagnostics

!desc = !llvm.struct<(ptr<3>, ptr<3>, i64, array<3 x i64>, array<3 x i64>)>
func.func @memref_destination_half_counted(%tile: memref<2x64x64xf16, #gpu.address_space<workgroup>>, %tmap: !llvm.ptr, %bar: !llvm.ptr<3>) {
  %s = builtin.unrealized_conversion_cast %tile : memref<2x64x64xf16, #gpu.address_space<workgroup>> to !desc
  %p = llvm.extractvalue %s[1] : !desc
  %o = llvm.extractvalue %s[2] : !desc
  %c2 = llvm.mlir.constant(2 : i64) : i64
  %ob = llvm.mul %o, %c2 : i64
  %pi = llvm.ptrtoint %p : !llvm.ptr<3> to i64
  %a = llvm.add %pi, %ob : i64
  %dst = llvm.inttoptr %a : i64 to !llvm.ptr<3>
  %bytes = llvm.mlir.constant(8192 : i32) : i32
  %i0 = llvm.mlir.constant(0 : i32) : i32
  // expected-error @below {{the expect_tx byte count must equal the bytes the TMA loads completing on this barrier bring, 16384, but got 8192 (protocol_c8)}}
  nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
  // expected-note @below {{TMA load of 16384 bytes completing on the barrier}}
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmap, %bar, box[%i0, %i0, %i0] {isCTAOnly = true} : !llvm.ptr<3>, !llvm.ptr
  return
}

// -----

!desc = !llvm.struct<(ptr<3>, ptr<3>, i64, array<3 x i64>, array<3 x i64>)>
func.func @memref_destination_counted(%tile: memref<2x64x64xf16, #gpu.address_space<workgroup>>, %tmap: !llvm.ptr, %bar: !llvm.ptr<3>) {
  %s = builtin.unrealized_conversion_cast %tile : memref<2x64x64xf16, #gpu.address_space<workgroup>> to !desc
  %p = llvm.extractvalue %s[1] : !desc
  %o = llvm.extractvalue %s[2] : !desc
  %c2 = llvm.mlir.constant(2 : i64) : i64
  %ob = llvm.mul %o, %c2 : i64
  %pi = llvm.ptrtoint %p : !llvm.ptr<3> to i64
  %a = llvm.add %pi, %ob : i64
  %dst = llvm.inttoptr %a : i64 to !llvm.ptr<3>
  %bytes = llvm.mlir.constant(16384 : i32) : i32
  %i0 = llvm.mlir.constant(0 : i32) : i32
  nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmap, %bar, box[%i0, %i0, %i0] {isCTAOnly = true} : !llvm.ptr<3>, !llvm.ptr
  return
}

// -----

// The loads an expect counts for are those of its round, in the blocks
// after it (an elected thread's expect, then the loads in loops of their
// own, as CuTe issues them).
llvm.func @loads_after_the_expect_block(%dst: !llvm.ptr<3>, %tmap: !llvm.ptr, %bar: !llvm.ptr<3>, %elect: i1) {
  %bytes = llvm.mlir.constant(8192 : i32) : i32
  %i0 = llvm.mlir.constant(0 : i32) : i32
  llvm.cond_br %elect, ^expect, ^load
^expect:
  // expected-error @below {{the expect_tx byte count must equal the bytes the TMA loads completing on this barrier bring, 16384, but got 8192 (protocol_c8)}}
  nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
  llvm.br ^load
^load:
  // expected-note @below {{TMA load of 16384 bytes completing on the barrier}}
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmap, %bar, box[%i0, %i0] {isCTAOnly = true, nvwgmma.tx_bytes = 16384 : i64} : !llvm.ptr<3>, !llvm.ptr
  llvm.return
}
