// RUN: nvwgmma-opt %s --convert-nvwgmma-to-llvm | FileCheck %s
// RUN: nvwgmma-opt %s --convert-nvwgmma-to-nvvm | FileCheck %s
//
// Upstream has no sparse wgmma: both passes emit our inline PTX, with
// sp-meta and sp-sel after the B descriptor.

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
!i32x4 = !llvm.struct<(i32, i32, i32, i32)>

// CHECK-LABEL: func.func @sp_f16_desc
// CHECK: [[SEL:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: [[SD:%.+]] = llvm.zext %arg4 : i1 to i32
// CHECK: [[SA:%.+]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK: [[SB:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: [[TA:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: [[TB:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $12, 0;\0Awgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {$0, $1, $2, $3}, $8, $9, $10, $11, p, $13,  $14, $15,  $16;\0A}\0A", "=f,=f,=f,=f,0,1,2,3,l,l,r,n,r,n,n,n,n" {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, %arg0, %arg1, %arg3, [[SEL]], [[SD]], [[SA]], [[SB]], [[TA]], [[TB]] : (f32, f32, f32, f32, i64, i64, i32, i32, i32, i32, i32, i32, i32) -> !llvm.struct<(f32, f32, f32, f32)>
func.func @sp_f16_desc(%a: i64, %b: i64, %acc: !f32x4, %m: i32, %p: i1) -> !f32x4 {
  %r = nvwgmma.mma_async.sp %a, %b, %acc, sparsity [%m, 1], #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [f32, %p], A [f16, neg, col], B [f16, one, row] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// CHECK-LABEL: func.func @sp_int8_registers
// CHECK: [[SEL:%.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: [[SD:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $15, 0;\0Awgmma.mma_async.sp.sync.aligned.m64n8k64.s32.u8.s8.satfinite {$0, $1, $2, $3}, {$8, $9, $10, $11}, $12, $13, $14, p;\0A}\0A", "=r,=r,=r,=r,0,1,2,3,r,r,r,r,l,r,n,n" {{.*}}, %arg1, %arg3, [[SEL]], [[SD]] :
func.func @sp_int8_registers(%a: !i32x4, %b: i64, %acc: !i32x4, %m: i32) -> !i32x4 {
  %r = nvwgmma.mma_async.sp %a, %b, %acc, sparsity [%m, 0], #nvwgmma.shape<m = 64, n = 8, k = 64>,
         D [s32, one, satfinite], A [u8, one, row], B [s8, one, col] : !i32x4, !i32x4 -> !i32x4
  return %r : !i32x4
}
