// Each upstream nvvm.wgmma op becomes its nvwgmma twin, attributes mapped
// one to one; lowering back with --convert-nvwgmma-to-nvvm gives the input.
// RUN: nvwgmma-opt %s --nvwgmma-raise-nvvm | FileCheck %s
// RUN: nvwgmma-opt %s -o %t.orig.mlir
// RUN: nvwgmma-opt %s --nvwgmma-raise-nvvm --convert-nvwgmma-to-nvvm -o %t.round.mlir
// RUN: diff %t.orig.mlir %t.round.mlir

!f4 = !llvm.struct<(f32, f32, f32, f32)>
!i4 = !llvm.struct<(i32, i32, i32, i32)>

// CHECK-LABEL: func.func @dense
// CHECK-NEXT: nvwgmma.fence
// CHECK-NEXT: %[[D0:.*]] = nvwgmma.mma_async %arg0, %arg1, %arg2, #nvwgmma.shape<m = 64, n = 8, k = 16>, D [f32, zero], A [bf16, neg, col], B [bf16, one, row] : i64, !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: %[[D1:.*]] = nvwgmma.mma_async %arg0, %arg1, %[[D0]], #nvwgmma.shape<m = 64, n = 8, k = 16>, D [f32, one], A [f16, one, row], B [f16, neg, col] {nvwgmma.nvvm_wrapped} : i64, !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: nvwgmma.commit_group
// CHECK-NEXT: nvwgmma.wait_group 1
// CHECK-NEXT: nvwgmma.wait_group 0
func.func @dense(%a: i64, %b: i64, %acc: !f4) -> !f4 {
  nvvm.wgmma.fence.aligned
  %0 = nvvm.wgmma.mma_async %a, %b, %acc, <m = 64, n = 8, k = 16>, D[<f32>, <zero>], A[<bf16>, <neg>, <col>], B[<bf16>, <one>, <row>] : !f4 -> !f4
  %1 = nvvm.wgmma.mma_async %a, %b, %0, <m = 64, n = 8, k = 16>, D[<f32>, <one>, <wrapped>], A[<f16>, <one>, <row>], B[<f16>, <neg>, <col>] : !f4 -> !f4
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 1
  nvvm.wgmma.wait.group.sync.aligned 0
  return %1 : !f4
}

// CHECK-LABEL: func.func @mixed
// CHECK-NEXT: nvwgmma.mma_async %arg0, %arg1, %arg2, #nvwgmma.shape<m = 64, n = 8, k = 32>, D [s32, one, satfinite], A [s8, one, row], B [u8, one, col] : i64, !llvm.struct<(i32, i32, i32, i32)> -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NEXT: nvwgmma.mma_async %arg0, %arg1, %arg3, #nvwgmma.shape<m = 64, n = 8, k = 32>, D [f16, zero], A [e4m3, one, row], B [e5m2, one, col] : i64, !llvm.struct<(i32, i32)> -> !llvm.struct<(i32, i32)>
func.func @mixed(%a: i64, %b: i64, %acc: !i4, %h: !llvm.struct<(i32, i32)>) -> !i4 {
  %0 = nvvm.wgmma.mma_async %a, %b, %acc, <m = 64, n = 8, k = 32>, D[<s32>, <one>, <satfinite>], A[<s8>, <one>, <row>], B[<u8>, <one>, <col>] : !i4 -> !i4
  %1 = nvvm.wgmma.mma_async %a, %b, %h, <m = 64, n = 8, k = 32>, D[<f16>, <zero>], A[<e4m3>, <one>, <row>], B[<e5m2>, <one>, <col>] : !llvm.struct<(i32, i32)> -> !llvm.struct<(i32, i32)>
  return %0 : !i4
}
