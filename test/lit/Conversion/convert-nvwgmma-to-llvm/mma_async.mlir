// RUN: nvwgmma-opt %s --convert-nvwgmma-to-llvm | FileCheck %s
// RUN: nvwgmma-opt %s --convert-nvwgmma-to-nvvm --convert-nvvm-to-llvm | FileCheck %s
//
// Exact asm text, constraints and immediates per family, A source and scale-d
// form. The second RUN line goes through upstream nvvm.wgmma.mma_async where
// upstream can express the op, so the same lines also prove upstream parity.

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
!i32x2 = !llvm.struct<(i32, i32)>
!i32x4 = !llvm.struct<(i32, i32, i32, i32)>
!h2x4 = !llvm.struct<(vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>)>
!f32frag = !llvm.struct<(f32, f32, f32, f32)>
!i8x4frag = !llvm.struct<(vector<4xi8>, vector<4xi8>, vector<4xi8>, vector<4xi8>)>

// CHECK-LABEL: func.func @f16_f32_desc_trans_negate
// CHECK: [[C0:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: [[C1:%.+]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK: [[C2:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: [[C3:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: [[C4:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $10, 0;\0Awgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}, $8, $9, p, $11,  $12, $13,  $14;\0A}\0A", "=f,=f,=f,=f,0,1,2,3,l,l,n,n,n,n,n" {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, %arg0, %arg1, [[C0]], [[C1]], [[C2]], [[C3]], [[C4]] : (f32, f32, f32, f32, i64, i64, i32, i32, i32, i32, i32) -> !llvm.struct<(f32, f32, f32, f32)>
func.func @f16_f32_desc_trans_negate(%a: i64, %b: i64, %acc: !f32x4) -> !f32x4 {
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, neg, col], B [f16, one, row] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// CHECK-LABEL: func.func @f16_f16acc_desc
// CHECK: [[C0:%.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: [[C1:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: [[C2:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: [[C3:%.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: [[C4:%.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $6, 0;\0Awgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {$0, $1}, $4, $5, p, $7,  $8, $9,  $10;\0A}\0A", "=r,=r,0,1,l,l,n,n,n,n,n" {{%[0-9]+}}, {{%[0-9]+}}, %arg0, %arg1, [[C0]], [[C1]], [[C2]], [[C3]], [[C4]] : (i32, i32, i64, i64, i32, i32, i32, i32, i32) -> !llvm.struct<(i32, i32)>
func.func @f16_f16acc_desc(%a: i64, %b: i64, %acc: !i32x2) -> !i32x2 {
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f16, zero], A [f16, one, row], B [f16, one, col] : i64, !i32x2 -> !i32x2
  return %r : !i32x2
}

// CHECK-LABEL: func.func @f16_regs_vector_members
// CHECK: [[X0:%.+]] = llvm.bitcast {{%[0-9]+}} : vector<2xf16> to i32
// CHECK: [[X1:%.+]] = llvm.bitcast {{%[0-9]+}} : vector<2xf16> to i32
// CHECK: [[X2:%.+]] = llvm.bitcast {{%[0-9]+}} : vector<2xf16> to i32
// CHECK: [[X3:%.+]] = llvm.bitcast {{%[0-9]+}} : vector<2xf16> to i32
// CHECK: [[C4:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: [[C5:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: [[C6:%.+]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK: [[C7:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $13, 0;\0Awgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}, {$8, $9, $10, $11}, $12, p, $14,  $15, $16;\0A}\0A", "=f,=f,=f,=f,0,1,2,3,r,r,r,r,l,n,n,n,n" {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, [[X0]], [[X1]], [[X2]], [[X3]], %arg1, [[C4]], [[C5]], [[C6]], [[C7]] : (f32, f32, f32, f32, i32, i32, i32, i32, i64, i32, i32, i32, i32) -> !llvm.struct<(f32, f32, f32, f32)>
func.func @f16_regs_vector_members(%a: !h2x4, %b: i64, %acc: !f32x4) -> !f32x4 {
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, neg, row] : !h2x4, !f32x4 -> !f32x4
  return %r : !f32x4
}

// CHECK-LABEL: func.func @bf16_runtime_scale_d
// CHECK: [[X0:%.+]] = llvm.zext %arg3 : i1 to i32
// CHECK: [[C1:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: [[C2:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: [[C3:%.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: [[C4:%.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $10, 0;\0Awgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {$0, $1, $2, $3}, $8, $9, p, $11,  $12, $13,  $14;\0A}\0A", "=f,=f,=f,=f,0,1,2,3,l,l,r,n,n,n,n" {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, %arg0, %arg1, [[X0]], [[C1]], [[C2]], [[C3]], [[C4]] : (f32, f32, f32, f32, i64, i64, i32, i32, i32, i32, i32) -> !llvm.struct<(f32, f32, f32, f32)>
func.func @bf16_runtime_scale_d(%a: i64, %b: i64, %acc: !f32x4, %p: i1) -> !f32x4 {
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, %p], A [bf16, one, row], B [bf16, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// CHECK-LABEL: func.func @tf32_regs_f32_members
// CHECK: [[X0:%.+]] = llvm.bitcast {{%[0-9]+}} : f32 to i32
// CHECK: [[X1:%.+]] = llvm.bitcast {{%[0-9]+}} : f32 to i32
// CHECK: [[X2:%.+]] = llvm.bitcast {{%[0-9]+}} : f32 to i32
// CHECK: [[X3:%.+]] = llvm.bitcast {{%[0-9]+}} : f32 to i32
// CHECK: [[C4:%.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: [[C5:%.+]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK: [[C6:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $13, 0;\0Awgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {$0, $1, $2, $3}, {$8, $9, $10, $11}, $12, p, $14,  $15;\0A}\0A", "=f,=f,=f,=f,0,1,2,3,r,r,r,r,l,n,n,n" {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, [[X0]], [[X1]], [[X2]], [[X3]], %arg1, [[C4]], [[C5]], [[C6]] : (f32, f32, f32, f32, i32, i32, i32, i32, i64, i32, i32, i32) -> !llvm.struct<(f32, f32, f32, f32)>
func.func @tf32_regs_f32_members(%a: !f32frag, %b: i64, %acc: !f32x4) -> !f32x4 {
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 8>,
         D [f32, zero], A [tf32, neg, row], B [tf32, one, col] : !f32frag, !f32x4 -> !f32x4
  return %r : !f32x4
}

// CHECK-LABEL: func.func @e5m2_e4m3_f16acc
// CHECK: [[C0:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: [[C1:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: [[C2:%.+]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $6, 0;\0Awgmma.mma_async.sync.aligned.m64n8k32.f16.e5m2.e4m3 {$0, $1}, $4, $5, p, $7,  $8;\0A}\0A", "=r,=r,0,1,l,l,n,n,n" {{%[0-9]+}}, {{%[0-9]+}}, %arg0, %arg1, [[C0]], [[C1]], [[C2]] : (i32, i32, i64, i64, i32, i32, i32) -> !llvm.struct<(i32, i32)>
func.func @e5m2_e4m3_f16acc(%a: i64, %b: i64, %acc: !i32x2) -> !i32x2 {
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [f16, one], A [e5m2, one, row], B [e4m3, neg, col] : i64, !i32x2 -> !i32x2
  return %r : !i32x2
}

// CHECK-LABEL: func.func @u8_s8_satfinite_regs
// CHECK: [[X0:%.+]] = llvm.bitcast {{%[0-9]+}} : vector<4xi8> to i32
// CHECK: [[X1:%.+]] = llvm.bitcast {{%[0-9]+}} : vector<4xi8> to i32
// CHECK: [[X2:%.+]] = llvm.bitcast {{%[0-9]+}} : vector<4xi8> to i32
// CHECK: [[X3:%.+]] = llvm.bitcast {{%[0-9]+}} : vector<4xi8> to i32
// CHECK: [[X4:%.+]] = llvm.zext %arg3 : i1 to i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $13, 0;\0Awgmma.mma_async.sync.aligned.m64n8k32.s32.u8.s8.satfinite {$0, $1, $2, $3}, {$8, $9, $10, $11}, $12, p;\0A}\0A", "=r,=r,=r,=r,0,1,2,3,r,r,r,r,l,r" {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, [[X0]], [[X1]], [[X2]], [[X3]], %arg1, [[X4]] : (i32, i32, i32, i32, i32, i32, i32, i32, i64, i32) -> !llvm.struct<(i32, i32, i32, i32)>
func.func @u8_s8_satfinite_regs(%a: !i8x4frag, %b: i64, %acc: !i32x4, %p: i1) -> !i32x4 {
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [s32, %p, satfinite], A [u8, one, row], B [s8, one, col] : !i8x4frag, !i32x4 -> !i32x4
  return %r : !i32x4
}

// CHECK-LABEL: func.func @s8_desc
// CHECK: [[C0:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $10, 0;\0Awgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {$0, $1, $2, $3}, $8, $9, p;\0A}\0A", "=r,=r,=r,=r,0,1,2,3,l,l,n" {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, %arg0, %arg1, [[C0]] : (i32, i32, i32, i32, i64, i64, i32) -> !llvm.struct<(i32, i32, i32, i32)>
func.func @s8_desc(%a: i64, %b: i64, %acc: !i32x4) -> !i32x4 {
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [s32, one], A [s8, one, row], B [s8, one, col] : i64, !i32x4 -> !i32x4
  return %r : !i32x4
}

// CHECK-LABEL: func.func @b1_and_popc
// CHECK: [[C0:%.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $10, 0;\0Awgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc {$0, $1, $2, $3}, $8, $9, p;\0A}\0A", "=r,=r,=r,=r,0,1,2,3,l,l,n" {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, %arg0, %arg1, [[C0]] : (i32, i32, i32, i32, i64, i64, i32) -> !llvm.struct<(i32, i32, i32, i32)>
func.func @b1_and_popc(%a: i64, %b: i64, %acc: !i32x4) -> !i32x4 {
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 256>,
         D [s32, one], A [b1, one, row], B [b1, one, col] : i64, !i32x4 -> !i32x4
  return %r : !i32x4
}

