// Every form our lowering and upstream's write reads back as a legal
// configuration: nvwgmma ops lowered to inline asm (descriptor and register
// A, transposes, negation, runtime scale-d, tf32, fp8, int8 satfinite, b1,
// sparse), and upstream nvvm.wgmma.mma_async through convert-nvvm-to-llvm.
// RUN: nvwgmma-opt %s --convert-nvwgmma-to-llvm --convert-nvvm-to-llvm --nvwgmma-verify-inline-asm | FileCheck %s
// CHECK-COUNT-9: llvm.inline_asm{{.*}}wgmma.mma_async
// CHECK-NOT: nvwgmma.mma_async

!f4 = !llvm.struct<(f32, f32, f32, f32)>
!i4 = !llvm.struct<(i32, i32, i32, i32)>
!i2 = !llvm.struct<(i32, i32)>
func.func @forms(%a: i64, %b: i64, %f: !f4, %i: !i4, %h: !i2, %frag: !i4, %p: i1, %meta: i32) {
  %0 = nvwgmma.mma_async %a, %b, %f, #nvwgmma.shape<m = 64, n = 8, k = 16>, D [f32, one], A [f16, neg, col], B [f16, one, row] : i64, !f4 -> !f4
  %1 = nvwgmma.mma_async %frag, %b, %f, #nvwgmma.shape<m = 64, n = 8, k = 16>, D [f32, %p], A [bf16, one, row], B [bf16, neg, row] : !i4, !f4 -> !f4
  %2 = nvwgmma.mma_async %a, %b, %f, #nvwgmma.shape<m = 64, n = 8, k = 8>, D [f32, zero], A [tf32, neg, row], B [tf32, one, col] : i64, !f4 -> !f4
  %3 = nvwgmma.mma_async %a, %b, %h, #nvwgmma.shape<m = 64, n = 8, k = 32>, D [f16, one], A [e4m3, one, row], B [e5m2, one, col] : i64, !i2 -> !i2
  %4 = nvwgmma.mma_async %a, %b, %i, #nvwgmma.shape<m = 64, n = 8, k = 32>, D [s32, one, satfinite], A [s8, one, row], B [u8, one, col] : i64, !i4 -> !i4
  %5 = nvwgmma.mma_async %a, %b, %i, #nvwgmma.shape<m = 64, n = 8, k = 256>, D [s32, one], A [b1, one, row], B [b1, one, col] : i64, !i4 -> !i4
  %6 = nvwgmma.mma_async.sp %a, %b, %f, sparsity [%meta, 1], #nvwgmma.shape<m = 64, n = 8, k = 32>, D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !f4 -> !f4
  %7 = nvvm.wgmma.mma_async %a, %b, %f, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<bf16>, <neg>, <col>], B[<bf16>, <one>, <row>] : !f4 -> !f4
  %8 = nvvm.wgmma.mma_async %a, %b, %i, <m = 64, n = 8, k = 32>, D[<s32>, <zero>, <satfinite>], A[<u8>, <one>, <row>], B[<s8>, <one>, <col>] : !i4 -> !i4
  return
}
