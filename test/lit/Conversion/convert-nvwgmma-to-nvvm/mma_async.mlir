// RUN: nvwgmma-opt %s --convert-nvwgmma-to-nvvm | FileCheck %s
//
// What upstream nvvm.wgmma.mma_async can express becomes that op; the rest
// (A in registers, runtime scale-d, b1) becomes our inline PTX directly.

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
!i32x4 = !llvm.struct<(i32, i32, i32, i32)>

// CHECK-LABEL: func.func @expressible
// CHECK: nvvm.wgmma.mma_async %arg0, %arg1, %arg2, <m = 64, n = 8, k = 16>, D[<f32>, <zero>], A[<f16>, <neg>, <col>], B[<f16>, <one>, <row>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: nvvm.wgmma.mma_async %arg0, %arg1, %{{.*}}, <m = 64, n = 8, k = 32>, D[<s32>, <one>, <satfinite>], A[<s8>, <one>, <row>], B[<u8>, <one>, <col>] : !llvm.struct<(i32, i32, i32, i32)> -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NOT: llvm.inline_asm
func.func @expressible(%a: i64, %b: i64, %acc: !f32x4, %iacc: !i32x4) -> (!f32x4, !i32x4) {
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, zero], A [f16, neg, col], B [f16, one, row] : i64, !f32x4 -> !f32x4
  %s = nvwgmma.mma_async %a, %b, %iacc, #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [s32, one, satfinite], A [s8, one, row], B [u8, one, col] : i64, !i32x4 -> !i32x4
  return %r, %s : !f32x4, !i32x4
}

// CHECK-LABEL: func.func @registers
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $13, 0;\0Awgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}, {$8, $9, $10, $11}, $12, p, $14,  $15, $16;\0A}\0A", "=f,=f,=f,=f,0,1,2,3,r,r,r,r,l,n,n,n,n"
func.func @registers(%a: !i32x4, %b: i64, %acc: !f32x4) -> !f32x4 {
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : !i32x4, !f32x4 -> !f32x4
  return %r : !f32x4
}

// CHECK-LABEL: func.func @runtime_scale_d
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: [[P:%.+]] = llvm.zext %arg3 : i1 to i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $10, 0;\0Awgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {$0, $1, $2, $3}, $8, $9, p, $11,  $12;\0A}\0A", "=f,=f,=f,=f,0,1,2,3,l,l,r,n,n" {{.*}}, %arg0, %arg1, [[P]],
func.func @runtime_scale_d(%a: i64, %b: i64, %acc: !f32x4, %p: i1) -> !f32x4 {
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 8>,
         D [f32, %p], A [tf32, one, row], B [tf32, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// CHECK-LABEL: func.func @b1
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $10, 0;\0Awgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc {$0, $1, $2, $3}, $8, $9, p;\0A}\0A", "=r,=r,=r,=r,0,1,2,3,l,l,n"
func.func @b1(%a: i64, %b: i64, %acc: !i32x4) -> !i32x4 {
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 256>,
         D [s32, one], A [b1, one, row], B [b1, one, col] : i64, !i32x4 -> !i32x4
  return %r : !i32x4
}
