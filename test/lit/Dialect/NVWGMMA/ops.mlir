// RUN: nvwgmma-opt %s | nvwgmma-opt | FileCheck %s
// RUN: nvwgmma-opt %s --mlir-print-op-generic | nvwgmma-opt | FileCheck %s

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
!i32x2 = !llvm.struct<(i32, i32)>
!i32x4 = !llvm.struct<(i32, i32, i32, i32)>
!fraghalf = !llvm.struct<(vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>)>

// CHECK-LABEL: func.func @sync_ops
func.func @sync_ops() {
  // CHECK: nvwgmma.fence
  nvwgmma.fence
  // CHECK-NEXT: nvwgmma.commit_group
  nvwgmma.commit_group
  // CHECK-NEXT: nvwgmma.wait_group 0
  nvwgmma.wait_group 0
  // CHECK-NEXT: nvwgmma.wait_group 9223372036854775807
  nvwgmma.wait_group 9223372036854775807
  return
}

// CHECK-LABEL: func.func @mma_async_f16_f32
func.func @mma_async_f16_f32(%a: i64, %b: i64, %acc: !f32x4) -> !f32x4 {
  // CHECK: nvwgmma.mma_async %{{.*}}, %{{.*}}, %{{.*}}, #nvwgmma.shape<m = 64, n = 8, k = 16>, D [f32, one], A [f16, neg, col], B [f16, one, row] : i64, !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, neg, col], B [f16, one, row]
         : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// CHECK-LABEL: func.func @mma_async_f16_acc_registers
func.func @mma_async_f16_acc_registers(%a: !fraghalf, %b: i64, %acc: !i32x2) -> !i32x2 {
  // CHECK: nvwgmma.mma_async {{.*}} D [f16, zero], A [f16, one, row], B [f16, one, col] : !llvm.struct<(vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>)>, !llvm.struct<(i32, i32)> -> !llvm.struct<(i32, i32)>
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f16, zero], A [f16, one, row], B [f16, one, col]
         : !fraghalf, !i32x2 -> !i32x2
  return %r : !i32x2
}

// CHECK-LABEL: func.func @mma_async_runtime_scale_d
func.func @mma_async_runtime_scale_d(%a: i64, %b: i64, %acc: !f32x4, %p: i1) -> !f32x4 {
  // CHECK: nvwgmma.mma_async {{.*}} D [f32, %{{.*}}], A [bf16, one, row], B [bf16, one, col]
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, %p], A [bf16, one, row], B [bf16, one, col]
         : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// CHECK-LABEL: func.func @mma_async_tf32
func.func @mma_async_tf32(%a: i64, %b: i64, %acc: !f32x4) -> !f32x4 {
  // CHECK: #nvwgmma.shape<m = 64, n = 8, k = 8>, D [f32, one], A [tf32, neg, row], B [tf32, neg, col]
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 8>,
         D [f32, one], A [tf32, neg, row], B [tf32, neg, col]
         : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// CHECK-LABEL: func.func @mma_async_fp8_mixed
func.func @mma_async_fp8_mixed(%a: i64, %b: i64, %acc: !i32x2) -> !i32x2 {
  // CHECK: #nvwgmma.shape<m = 64, n = 8, k = 32>, D [f16, one], A [e4m3, one, row], B [e5m2, neg, col]
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [f16, one], A [e4m3, one, row], B [e5m2, neg, col]
         : i64, !i32x2 -> !i32x2
  return %r : !i32x2
}

// CHECK-LABEL: func.func @mma_async_int8_satfinite
func.func @mma_async_int8_satfinite(%a: !i32x4, %b: i64, %acc: !i32x4) -> !i32x4 {
  // CHECK: #nvwgmma.shape<m = 64, n = 8, k = 32>, D [s32, one, satfinite], A [s8, one, row], B [u8, one, col] : !llvm.struct<(i32, i32, i32, i32)>, !llvm.struct<(i32, i32, i32, i32)>
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [s32, one, satfinite], A [s8, one, row], B [u8, one, col]
         : !i32x4, !i32x4 -> !i32x4
  return %r : !i32x4
}

// CHECK-LABEL: func.func @mma_async_b1
func.func @mma_async_b1(%a: i64, %b: i64, %acc: !i32x4) -> !i32x4 {
  // CHECK: #nvwgmma.shape<m = 64, n = 8, k = 256>, D [s32, zero], A [b1, one, row], B [b1, one, col]
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 256>,
         D [s32, zero], A [b1, one, row], B [b1, one, col]
         : i64, !i32x4 -> !i32x4
  return %r : !i32x4
}

// CHECK-LABEL: func.func @mma_async_sp_f16
func.func @mma_async_sp_f16(%a: i64, %b: i64, %acc: !f32x4, %m: i32, %p: i1) -> !f32x4 {
  // CHECK: nvwgmma.mma_async.sp %{{.*}}, %{{.*}}, %{{.*}}, sparsity [%{{.*}}, 1], #nvwgmma.shape<m = 64, n = 8, k = 32>, D [f32, %{{.*}}], A [f16, neg, col], B [f16, one, row] : i64, !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
  %r = nvwgmma.mma_async.sp %a, %b, %acc, sparsity [%m, 1], #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [f32, %p], A [f16, neg, col], B [f16, one, row] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// CHECK-LABEL: func.func @mma_async_sp_int8_registers
func.func @mma_async_sp_int8_registers(%a: !i32x4, %b: i64, %acc: !i32x4, %m: i32) -> !i32x4 {
  // CHECK: sparsity [%{{.*}}, 0], #nvwgmma.shape<m = 64, n = 8, k = 64>, D [s32, one, satfinite], A [u8, one, row], B [s8, one, col] : !llvm.struct<(i32, i32, i32, i32)>
  %r = nvwgmma.mma_async.sp %a, %b, %acc, sparsity [%m, 0], #nvwgmma.shape<m = 64, n = 8, k = 64>,
         D [s32, one, satfinite], A [u8, one, row], B [s8, one, col] : !i32x4, !i32x4 -> !i32x4
  return %r : !i32x4
}

// The wait that carries the values it guards returns them, types inferred.
// CHECK-LABEL: llvm.func @wait_with_values
// CHECK-NEXT: %{{.+}}:2 = nvwgmma.wait_group 1 (%{{.+}}, %{{.+}} : !llvm.struct<(f32, f32, f32, f32)>, !llvm.struct<(i32, i32, i32, i32)>)
// CHECK-NEXT: %{{.+}} = nvwgmma.wait_group 0 (%{{.+}} : f32)
llvm.func @wait_with_values(%d: !llvm.struct<(f32, f32, f32, f32)>, %a: !llvm.struct<(i32, i32, i32, i32)>, %x: f32) {
  %dw, %aw = nvwgmma.wait_group 1 (%d, %a : !llvm.struct<(f32, f32, f32, f32)>, !llvm.struct<(i32, i32, i32, i32)>)
  %y = nvwgmma.wait_group 0 (%x : f32)
  llvm.return
}
