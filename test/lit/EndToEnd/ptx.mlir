// REQUIRES: ptxas
// RUN: nvwgmma-opt %s --nvwgmma-to-llvm-pipeline | mlir-translate --mlir-to-llvmir > %t.ll
// RUN: llc -march=nvptx64 -mcpu=sm_90a -mattr=+ptx80 %t.ll -o %t.ptx
// RUN: FileCheck %s --input-file=%t.ptx
// RUN: ptxas -arch=sm_90a %t.ptx -o %t.cubin
//
// A kernel using every wgmma instruction goes from nvwgmma to PTX that
// ptxas accepts for sm_90a.

// CHECK: .target sm_90a
// CHECK-LABEL: .visible .entry kernel(
// CHECK: wgmma.fence.sync.aligned;
// CHECK: wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1,  1, 0,  0;
// CHECK: wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1,  1, 0,  0;
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK: wgmma.wait_group.sync.aligned 0;

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @kernel(%descA: i64, %descB: i64, %out: !llvm.ptr<1>, %k: i32) attributes {nvvm.kernel} {
  %zero = llvm.mlir.constant(0.0 : f32) : f32
  %u = llvm.mlir.undef : !f32x4
  %a0 = llvm.insertvalue %zero, %u[0] : !f32x4
  %a1 = llvm.insertvalue %zero, %a0[1] : !f32x4
  %a2 = llvm.insertvalue %zero, %a1[2] : !f32x4
  %acc = llvm.insertvalue %zero, %a2[3] : !f32x4
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %first = llvm.icmp "ne" %k, %c0 : i32
  nvwgmma.fence
  %d0 = nvwgmma.mma_async %descA, %descB, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
          D [f32, %first], A [f16, one, row], B [f16, one, col] : i64, !f32x4 -> !f32x4
  %d1 = nvwgmma.mma_async %descA, %descB, %d0, #nvwgmma.shape<m = 64, n = 8, k = 16>,
          D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !f32x4 -> !f32x4
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  %v = llvm.extractvalue %d1[0] : !f32x4
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}
