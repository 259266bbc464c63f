// The consumer's own tool runs nvwgmma's verifier and lowering; its C program
// parses, checks and lowers through the C API and is refused an illegal op.
// RUN: consumer-opt %s --convert-nvwgmma-to-nvvm | FileCheck %s
// RUN: consumer-capi | FileCheck %s --check-prefix=CAPI

// CHECK-LABEL: func.func @k
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK-NEXT: %[[D:.*]] = nvvm.wgmma.mma_async %arg0, %arg1, %arg2, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0

// CAPI: nvvm.wgmma.fence.aligned
// CAPI: nvvm.wgmma.mma_async
// CAPI: family f16: k = 16, sparse k = 32, registers(f32, n = 256) = 128
// CAPI: diagnostic: 'nvwgmma.mma_async' op n must be a multiple of 8 in [8, 256] for f16 inputs, but got 12 (mma_async_c5)
func.func @k(%a: i64, %b: i64, %acc: !llvm.struct<(f32, f32, f32, f32)>) -> !llvm.struct<(f32, f32, f32, f32)> {
  nvwgmma.fence
  %d = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col]
         : i64, !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  return %d : !llvm.struct<(f32, f32, f32, f32)>
}
