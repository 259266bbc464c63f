// TMA byte counts from tensor maps the host code of the same function
// encodes: upstream's lowering of nvgpu.tma.create.descriptor calls
// mgpuTensorMapEncodeTiledMemref with the box in a stack array, and the
// kernel (a gpu.launch region) loads through the map it returns.
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=strict=true -verify-diagnostics

!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @mgpuTensorMapEncodeTiledMemref(i64, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr) -> !llvm.ptr
func.func @box_from_host(%rank: i64, %global: !llvm.ptr, %smem: !llvm.ptr<3>, %bar: !llvm.ptr<3>, %out: !llvm.ptr<1>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %f16 = llvm.mlir.constant(6 : i32) : i64
  %zero = llvm.mlir.constant(0 : i32) : i64
  %five = llvm.mlir.constant(5 : i32) : i64
  // A box of 64 x 128 f16 elements: 16384 bytes a load.
  %d0 = llvm.mlir.constant(64 : i64) : i64
  %d1 = llvm.mlir.constant(128 : i64) : i64
  %box = llvm.alloca %five x i64 : (i64) -> !llvm.ptr
  llvm.store %d0, %box : i64, !llvm.ptr
  %box1 = llvm.getelementptr %box[1] : (!llvm.ptr) -> !llvm.ptr, i64
  llvm.store %d1, %box1 : i64, !llvm.ptr
  %map = llvm.call @mgpuTensorMapEncodeTiledMemref(%rank, %global, %f16, %zero, %zero, %zero, %zero, %box) : (i64, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr) -> !llvm.ptr
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %i0 = llvm.mlir.constant(0 : i32) : i32
    %tx_bytes = llvm.mlir.constant(16384 : i32) : i32
    %mask = llvm.mlir.constant(262143 : i64) : i64
    %c4 = llvm.mlir.constant(4 : i64) : i64
    %layout = llvm.mlir.constant(4611686293305294848 : i64) : i64
    %acc0 = llvm.mlir.zero : !acc
    nvvm.mbarrier.arrive.expect_tx %bar, %tx_bytes : !llvm.ptr<3>, i32
    %dst = llvm.addrspacecast %smem : !llvm.ptr<3> to !llvm.ptr<7>
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %map, %bar, box[%i0, %i0] : !llvm.ptr<7>, !llvm.ptr
    nvvm.mbarrier.try_wait.parity %bar, %i0, %i0 : !llvm.ptr<3>, i32, i32
    %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
    %masked = llvm.and %addr, %mask : i64
    %field = llvm.lshr %masked, %c4 : i64
    %desc = llvm.or %field, %layout : i64
    nvvm.wgmma.fence.aligned
    %d = nvvm.wgmma.mma_async %desc, %desc, %acc0, <m = 64, n = 8, k = 16>, D[<f32>, <zero>, <wrapped>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>] : !acc -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    %v = llvm.extractvalue %d[0] : !acc
    llvm.store %v, %out : f32, !llvm.ptr<1>
    gpu.terminator
  }
  return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @mgpuTensorMapEncodeTiledMemref(i64, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr) -> !llvm.ptr
func.func @expect_tx_half_the_host_box(%rank: i64, %global: !llvm.ptr, %smem: !llvm.ptr<3>, %bar: !llvm.ptr<3>, %out: !llvm.ptr<1>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %f16 = llvm.mlir.constant(6 : i32) : i64
  %zero = llvm.mlir.constant(0 : i32) : i64
  %five = llvm.mlir.constant(5 : i32) : i64
  %d0 = llvm.mlir.constant(64 : i64) : i64
  %d1 = llvm.mlir.constant(128 : i64) : i64
  %box = llvm.alloca %five x i64 : (i64) -> !llvm.ptr
  llvm.store %d0, %box : i64, !llvm.ptr
  %box1 = llvm.getelementptr %box[1] : (!llvm.ptr) -> !llvm.ptr, i64
  llvm.store %d1, %box1 : i64, !llvm.ptr
  %map = llvm.call @mgpuTensorMapEncodeTiledMemref(%rank, %global, %f16, %zero, %zero, %zero, %zero, %box) : (i64, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr) -> !llvm.ptr
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %i0 = llvm.mlir.constant(0 : i32) : i32
    %tx_bytes = llvm.mlir.constant(8192 : i32) : i32
    %mask = llvm.mlir.constant(262143 : i64) : i64
    %c4 = llvm.mlir.constant(4 : i64) : i64
    %layout = llvm.mlir.constant(4611686293305294848 : i64) : i64
    %acc0 = llvm.mlir.zero : !acc
    // expected-error@+1 {{'nvvm.mbarrier.arrive.expect_tx' the expect_tx byte count must equal the bytes the TMA loads completing on this barrier bring, 16384, but got 8192 (protocol_c8)}}
    nvvm.mbarrier.arrive.expect_tx %bar, %tx_bytes : !llvm.ptr<3>, i32
    %dst = llvm.addrspacecast %smem : !llvm.ptr<3> to !llvm.ptr<7>
    // expected-note@+1 {{TMA load of 16384 bytes completing on the barrier}}
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %map, %bar, box[%i0, %i0] : !llvm.ptr<7>, !llvm.ptr
    nvvm.mbarrier.try_wait.parity %bar, %i0, %i0 : !llvm.ptr<3>, i32, i32
    %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
    %masked = llvm.and %addr, %mask : i64
    %field = llvm.lshr %masked, %c4 : i64
    %desc = llvm.or %field, %layout : i64
    nvvm.wgmma.fence.aligned
    %d = nvvm.wgmma.mma_async %desc, %desc, %acc0, <m = 64, n = 8, k = 16>, D[<f32>, <zero>, <wrapped>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>] : !acc -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    %v = llvm.extractvalue %d[0] : !acc
    llvm.store %v, %out : f32, !llvm.ptr<1>
    gpu.terminator
  }
  return
}
