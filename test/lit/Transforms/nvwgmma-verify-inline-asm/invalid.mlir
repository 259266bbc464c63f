// Inline-asm wgmma that ptxas rejects, reported with the rule's label as for
// an nvwgmma op. The first is what upstream's convert-nvvm-to-llvm writes for
// its b1 op (no .and.popc); the others are hand-written.
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-verify-inline-asm -verify-diagnostics

func.func @asm_c1_upstream_b1_without_popc(%a: i64, %b: i64, %r0: i32, %r1: i32, %r2: i32, %r3: i32) {
  %one = llvm.mlir.constant(1 : i32) : i32
  // expected-error @+1 {{'llvm.inline_asm' wgmma.mma_async: 'wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1' must be one of PTX's wgmma.mma_async forms, but got a b1 multiply without .and.popc, the only b1 operation ptxas accepts (asm_c1)}}
  %d = llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $10, 0;\0Awgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1 {$0, $1, $2, $3}, $8, $9, p;\0A}\0A", "=r,=r,=r,=r,0,1,2,3,l,l,n" %r0, %r1, %r2, %r3, %a, %b, %one : (i32, i32, i32, i32, i64, i64, i32) -> !llvm.struct<(i32, i32, i32, i32)>
  return
}

// -----

func.func @asm_c1_immediates_of_another_form(%a: i64, %b: i64, %r0: f32, %r1: f32, %r2: f32, %r3: f32) {
  // expected-error @+1 {{'llvm.inline_asm' wgmma.mma_async: 'wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32' must be one of PTX's wgmma.mma_async forms, but got 4 immediates after scale-d where the tf32 form has 2 (asm_c1)}}
  %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {$0, $1, $2, $3}, $8, $9, 1, 1, 1, 0, 0;", "=f,=f,=f,=f,0,1,2,3,l,l" %r0, %r1, %r2, %r3, %a, %b : (f32, f32, f32, f32, i64, i64) -> !llvm.struct<(f32, f32, f32, f32)>
  return
}

// -----

func.func @mma_async_c6_int8_n40(%a: i64, %b: i64, %r: i32) {
  // expected-error @+1 {{'llvm.inline_asm' wgmma.mma_async: n must be 8, 16, 24, 32 or a multiple of 16 in [48, 256] for s8/u8 inputs, but got 40 (mma_async_c6)}}
  %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n40k32.s32.s8.s8 {$0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19}, $40, $41, 1;", "=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,=r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,l,l" %r, %r, %r, %r, %r, %r, %r, %r, %r, %r, %r, %r, %r, %r, %r, %r, %r, %r, %r, %r, %a, %b : (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i64, i64) -> !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32)>
  return
}

// -----

func.func @mma_async_c9_too_few_accumulator_registers(%a: i64, %b: i64, %r0: f32, %r1: f32) {
  // expected-error @+1 {{(mma_async_c9)}}
  %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1}, $4, $5, 1, 1, 1, 0, 0;", "=f,=f,0,1,l,l" %r0, %r1, %a, %b : (f32, f32, i64, i64) -> !llvm.struct<(f32, f32)>
  return
}
