// RUN: nvwgmma-opt %s -split-input-file -verify-diagnostics
//
// One block per rule of docs/Constraints.md, named @<label>_<what>.

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c1_m(%a: i64, %b: i64, %acc: !f32x4) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op m must be 64, but got 32 (mma_async_c1)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 32, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c2_type_a_f32(%a: i64, %b: i64, %acc: !f32x4) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op typeA must be one of f16, bf16, tf32, e4m3, e5m2, s8, u8, b1, but got f32 (mma_async_c2)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 8>,
         D [f32, one], A [f32, one, row], B [f32, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!i32x4 = !llvm.struct<(i32, i32, i32, i32)>
func.func @mma_async_c2_type_b_s32(%a: i64, %b: i64, %acc: !i32x4) -> !i32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op typeB must be one of f16, bf16, tf32, e4m3, e5m2, s8, u8, b1, but got s32 (mma_async_c2)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [s32, one], A [s8, one, row], B [s32, one, col] : i64, !i32x4 -> !i32x4
  return %r : !i32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c3_f16_bf16(%a: i64, %b: i64, %acc: !f32x4) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op typeA and typeB must be equal, both e4m3/e5m2 or both s8/u8, but got f16 and bf16 (mma_async_c3)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [bf16, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c3_fp8_int8(%a: i64, %b: i64, %acc: !f32x4) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op typeA and typeB must be equal, both e4m3/e5m2 or both s8/u8, but got e4m3 and s8 (mma_async_c3)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [f32, one], A [e4m3, one, row], B [s8, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c4_tf32_k16(%a: i64, %b: i64, %acc: !f32x4) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op k must be 8 for tf32 inputs, but got 16 (mma_async_c4)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [tf32, one, row], B [tf32, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!f32x6 = !llvm.struct<(f32, f32, f32, f32, f32, f32)>
func.func @mma_async_c5_n12(%a: i64, %b: i64, %acc: !f32x6) -> !f32x6 {
  // expected-error @+1 {{'nvwgmma.mma_async' op n must be a multiple of 8 in [8, 256] for f16 inputs, but got 12 (mma_async_c5)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 12, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !f32x6 -> !f32x6
  return %r : !f32x6
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c5_n264(%a: i64, %b: i64, %acc: !f32x4) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op n must be a multiple of 8 in [8, 256] for e4m3/e5m2 inputs, but got 264 (mma_async_c5)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 264, k = 32>,
         D [f32, one], A [e5m2, one, row], B [e4m3, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!i32x20 = !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32)>
func.func @mma_async_c6_int8_n40(%a: i64, %b: i64, %acc: !i32x20) -> !i32x20 {
  // expected-error @+1 {{'nvwgmma.mma_async' op n must be 8, 16, 24, 32 or a multiple of 16 in [48, 256] for s8/u8 inputs, but got 40 (mma_async_c6)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 40, k = 32>,
         D [s32, one], A [s8, one, row], B [s8, one, col] : i64, !i32x20 -> !i32x20
  return %r : !i32x20
}

// -----

!i32x4 = !llvm.struct<(i32, i32, i32, i32)>
func.func @mma_async_c6_b1_n56(%a: i64, %b: i64, %acc: !i32x4) -> !i32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op n must be 8, 16, 24, 32 or a multiple of 16 in [48, 256] for b1 inputs, but got 56 (mma_async_c6)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 56, k = 256>,
         D [s32, one], A [b1, one, row], B [b1, one, col] : i64, !i32x4 -> !i32x4
  return %r : !i32x4
}

// -----

!i32x2 = !llvm.struct<(i32, i32)>
func.func @mma_async_c7_bf16_f16_acc(%a: i64, %b: i64, %acc: !i32x2) -> !i32x2 {
  // expected-error @+1 {{'nvwgmma.mma_async' op typeD must be f32 for bf16 inputs, but got f16 (mma_async_c7)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f16, one], A [bf16, one, row], B [bf16, one, col] : i64, !i32x2 -> !i32x2
  return %r : !i32x2
}

// -----

!i32x4 = !llvm.struct<(i32, i32, i32, i32)>
func.func @mma_async_c7_int8_f32(%a: i64, %b: i64, %acc: !i32x4) -> !i32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op typeD must be s32 for s8/u8 inputs, but got f32 (mma_async_c7)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [f32, one], A [u8, one, row], B [u8, one, col] : i64, !i32x4 -> !i32x4
  return %r : !i32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
!i32x3 = !llvm.struct<(i32, i32, i32)>
func.func @mma_async_c8_three_registers(%a: !i32x3, %b: i64, %acc: !f32x4) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op A must be an i64 descriptor or an !llvm.struct of 4 identical members of i32 or vector<2xf16> for f16 A, but got !llvm.struct<(i32, i32, i32)> (mma_async_c8)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : !i32x3, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c8_i32_descriptor(%a: i32, %b: i64, %acc: !f32x4) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op A must be an i64 descriptor or an !llvm.struct of 4 identical members of i32 or f32 for tf32 A, but got i32 (mma_async_c8)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 8>,
         D [f32, one], A [tf32, one, row], B [tf32, one, col] : i32, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
!bf16frag = !llvm.struct<(vector<2xbf16>, vector<2xbf16>, vector<2xbf16>, vector<2xbf16>)>
func.func @mma_async_c8_member_mismatch(%a: !bf16frag, %b: i64, %acc: !f32x4) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op A must be an i64 descriptor or an !llvm.struct of 4 identical members of i32 or vector<2xf16> for f16 A, but got !llvm.struct<(vector<2xbf16>, vector<2xbf16>, vector<2xbf16>, vector<2xbf16>)> (mma_async_c8)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : !bf16frag, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c9_count(%a: i64, %b: i64, %acc: !f32x4) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op accumulator must be an !llvm.struct of 8 members (n/2 for n = 16, f32 accumulator), but got !llvm.struct<(f32, f32, f32, f32)> (mma_async_c9)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 16, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!i32x4 = !llvm.struct<(i32, i32, i32, i32)>
func.func @mma_async_c9_f16_count(%a: i64, %b: i64, %acc: !i32x4) -> !i32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op accumulator must be an !llvm.struct of 2 members (n/4 for n = 8, f16 accumulator), but got !llvm.struct<(i32, i32, i32, i32)> (mma_async_c9)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f16, one], A [f16, one, row], B [f16, one, col] : i64, !i32x4 -> !i32x4
  return %r : !i32x4
}

// -----

func.func @mma_async_c9_not_struct(%a: i64, %b: i64, %acc: vector<4xf32>) -> vector<4xf32> {
  // expected-error @+1 {{'nvwgmma.mma_async' op accumulator must be an !llvm.struct of 4 members (n/2 for n = 8, f32 accumulator), but got vector<4xf32> (mma_async_c9)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, vector<4xf32> -> vector<4xf32>
  return %r : vector<4xf32>
}

// -----

!i32x4 = !llvm.struct<(i32, i32, i32, i32)>
func.func @mma_async_c10_f32_members(%a: i64, %b: i64, %acc: !i32x4) -> !i32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op accumulator members must be f32 for a f32 accumulator, but got i32 at member 0 (mma_async_c10)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !i32x4 -> !i32x4
  return %r : !i32x4
}

// -----

!mixed = !llvm.struct<(i32, f32)>
func.func @mma_async_c10_f16_members(%a: i64, %b: i64, %acc: !mixed) -> !mixed {
  // expected-error @+1 {{'nvwgmma.mma_async' op accumulator members must be i32 for a f16 accumulator (two packed f16 each), but got f32 at member 1 (mma_async_c10)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f16, one], A [f16, one, row], B [f16, one, col] : i64, !mixed -> !mixed
  return %r : !mixed
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
!i32x4 = !llvm.struct<(i32, i32, i32, i32)>
func.func @mma_async_c11_result(%a: i64, %b: i64, %acc: !f32x4) -> !i32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op result type must equal the accumulator type !llvm.struct<(f32, f32, f32, f32)>, but got !llvm.struct<(i32, i32, i32, i32)> (mma_async_c11)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !f32x4 -> !i32x4
  return %r : !i32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c12_tf32_trans_a(%a: i64, %b: i64, %acc: !f32x4) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op layout of A must be row (no transpose) for tf32 inputs, but got col (mma_async_c12)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 8>,
         D [f32, one], A [tf32, one, col], B [tf32, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c12_fp8_trans_b(%a: i64, %b: i64, %acc: !f32x4) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op layout of B must be col (no transpose) for e4m3/e5m2 inputs, but got row (mma_async_c12)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [f32, one], A [e4m3, one, row], B [e4m3, one, row] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
!i32x4 = !llvm.struct<(i32, i32, i32, i32)>
func.func @mma_async_c13_trans_a_registers(%a: !i32x4, %b: i64, %acc: !f32x4) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op layout of A must be row when A comes from registers (imm-trans-a needs a descriptor), but got col (mma_async_c13)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, col], B [f16, one, col] : !i32x4, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!i32x4 = !llvm.struct<(i32, i32, i32, i32)>
func.func @mma_async_c14_int8_negate(%a: i64, %b: i64, %acc: !i32x4) -> !i32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op scale of A must be one (no negation) for s8/u8 inputs, but got neg (mma_async_c14)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [s32, one], A [s8, neg, row], B [s8, one, col] : i64, !i32x4 -> !i32x4
  return %r : !i32x4
}

// -----

!i32x4 = !llvm.struct<(i32, i32, i32, i32)>
func.func @mma_async_c14_b1_negate_b(%a: i64, %b: i64, %acc: !i32x4) -> !i32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op scale of B must be one (no negation) for b1 inputs, but got neg (mma_async_c14)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 256>,
         D [s32, one], A [b1, one, row], B [b1, neg, col] : i64, !i32x4 -> !i32x4
  return %r : !i32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c15_satfinite_f16(%a: i64, %b: i64, %acc: !f32x4) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op inputs must be s8/u8 for satfinite, but got f16 (mma_async_c15)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one, satfinite], A [f16, one, row], B [f16, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!i32x4 = !llvm.struct<(i32, i32, i32, i32)>
func.func @mma_async_c15_satfinite_b1(%a: i64, %b: i64, %acc: !i32x4) -> !i32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op inputs must be s8/u8 for satfinite, but got b1 (mma_async_c15)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 256>,
         D [s32, one, satfinite], A [b1, one, row], B [b1, one, col] : i64, !i32x4 -> !i32x4
  return %r : !i32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c16_both(%a: i64, %b: i64, %acc: !f32x4, %p: i1) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op scale-d must be given exactly once, as zero/one or as an i1 value, but got both (mma_async_c16)}}
  %r = "nvwgmma.mma_async"(%a, %b, %acc, %p) <{layoutA = #nvwgmma<layout row>, layoutB = #nvwgmma<layout col>, scaleA = #nvwgmma<scale_in one>, scaleB = #nvwgmma<scale_in one>, scaleD = #nvwgmma<scale_d one>, shape = #nvwgmma.shape<m = 64, n = 8, k = 16>, typeA = #nvwgmma<type f16>, typeB = #nvwgmma<type f16>, typeD = #nvwgmma<type f32>}> : (i64, i64, !f32x4, i1) -> !f32x4
  return %r : !f32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c16_neither(%a: i64, %b: i64, %acc: !f32x4) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op scale-d must be given exactly once, as zero/one or as an i1 value, but got neither (mma_async_c16)}}
  %r = "nvwgmma.mma_async"(%a, %b, %acc) <{layoutA = #nvwgmma<layout row>, layoutB = #nvwgmma<layout col>, scaleA = #nvwgmma<scale_in one>, scaleB = #nvwgmma<scale_in one>, shape = #nvwgmma.shape<m = 64, n = 8, k = 16>, typeA = #nvwgmma<type f16>, typeB = #nvwgmma<type f16>, typeD = #nvwgmma<type f32>}> : (i64, i64, !f32x4) -> !f32x4
  return %r : !f32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c16_bad_keyword(%a: i64, %b: i64, %acc: !f32x4) -> !f32x4 {
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         // expected-error @+1 {{scale-d must be zero, one or an i1 value, but got 'two' (mma_async_c16)}}
         D [f32, two], A [f16, one, row], B [f16, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c16_not_i1(%a: i64, %b: i64, %acc: !f32x4, %p: i32) -> !f32x4 {
  // expected-note @-1 {{prior use here}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         // expected-error @+1 {{use of value '%p' expects different type than prior uses: 'i1' vs 'i32'}}
         D [f32, %p], A [f16, one, row], B [f16, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c17_b_descriptor(%a: i64, %b: i32, %acc: !f32x4) -> !f32x4 {
  // expected-note @-1 {{prior use here}}
  // expected-error @+1 {{use of value '%b' expects different type than prior uses: 'i64' vs 'i32'}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c17_b_descriptor_generic(%a: i64, %b: i32, %acc: !f32x4) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async' op operand #1 must be i64 shared-memory descriptor (mma_async_c17), but got 'i32'}}
  %r = "nvwgmma.mma_async"(%a, %b, %acc) <{layoutA = #nvwgmma<layout row>, layoutB = #nvwgmma<layout col>, scaleA = #nvwgmma<scale_in one>, scaleB = #nvwgmma<scale_in one>, scaleD = #nvwgmma<scale_d one>, shape = #nvwgmma.shape<m = 64, n = 8, k = 16>, typeA = #nvwgmma<type f16>, typeB = #nvwgmma<type f16>, typeD = #nvwgmma<type f32>}> : (i64, i32, !f32x4) -> !f32x4
  return %r : !f32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c18_bad_type_keyword(%a: i64, %b: i64, %acc: !f32x4) -> !f32x4 {
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         // expected-error @+1 {{type must be one of f16, bf16, tf32, e4m3, e5m2, s8, u8, b1, f32, s32, but got 's4' (mma_async_c18)}}
         D [f32, one], A [s4, one, row], B [f16, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_c18_bad_layout_keyword(%a: i64, %b: i64, %acc: !f32x4) -> !f32x4 {
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         // expected-error @+1 {{layout must be one of row, col, but got 'trans' (mma_async_c18)}}
         D [f32, one], A [f16, one, trans], B [f16, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

func.func @wait_group_c1_negative() {
  // expected-error @+1 {{'nvwgmma.wait_group' op group must be a non-negative 64-bit integer, but got -1 (wait_group_c1)}}
  nvwgmma.wait_group -1
  return
}

// -----

func.func @wait_group_c1_overflow() {
  // expected-error @+1 {{integer constant out of range for attribute}}
  nvwgmma.wait_group 18446744073709551616
  return
}

// -----

func.func @wait_group_c2_f64(%x: f64) -> f64 {
  // expected-error @+1 {{'nvwgmma.wait_group' op value 0 must be an accumulator or A fragment: a struct of 32-bit registers (f32, i32, vector<2xf16>, ...) or one, but got f64 (wait_group_c2)}}
  %y = nvwgmma.wait_group 0 (%x : f64)
  return %y : f64
}

// -----

func.func @wait_group_c2_struct_member(%d: !llvm.struct<(f32, i64)>) {
  // expected-error @+1 {{'nvwgmma.wait_group' op value 0 must be an accumulator or A fragment: a struct of 32-bit registers (f32, i32, vector<2xf16>, ...) or one, but got !llvm.struct<(f32, i64)> (wait_group_c2)}}
  %e = nvwgmma.wait_group 0 (%d : !llvm.struct<(f32, i64)>)
  return
}

// -----

func.func @wait_group_c2_empty_struct(%d: !llvm.struct<()>) {
  // expected-error @+1 {{'nvwgmma.wait_group' op value 0 must be an accumulator or A fragment: a struct of 32-bit registers (f32, i32, vector<2xf16>, ...) or one, but got !llvm.struct<()> (wait_group_c2)}}
  %e = nvwgmma.wait_group 0 (%d : !llvm.struct<()>)
  return
}

// -----

!i32x4 = !llvm.struct<(i32, i32, i32, i32)>
func.func @mma_async_sp_c1_b1(%a: i64, %b: i64, %acc: !i32x4, %m: i32) -> !i32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async.sp' op inputs of a sparse op must not be b1 (b1 has no sparse form), but got b1 (mma_async_sp_c1)}}
  %r = nvwgmma.mma_async.sp %a, %b, %acc, sparsity [%m, 0], #nvwgmma.shape<m = 64, n = 8, k = 512>,
         D [s32, one], A [b1, one, row], B [b1, one, col] : i64, !i32x4 -> !i32x4
  return %r : !i32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_sp_c2_dense_k(%a: i64, %b: i64, %acc: !f32x4, %m: i32) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async.sp' op k must be 32 for sparse f16 inputs, but got 16 (mma_async_sp_c2)}}
  %r = nvwgmma.mma_async.sp %a, %b, %acc, sparsity [%m, 0], #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_sp_c3_selector_2(%a: i64, %b: i64, %acc: !f32x4, %m: i32) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async.sp' op sparsity selector must be 0 or 1 for tf32 inputs, but got 2 (mma_async_sp_c3)}}
  %r = nvwgmma.mma_async.sp %a, %b, %acc, sparsity [%m, 2], #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [tf32, one, row], B [tf32, one, col] : i64, !f32x4 -> !f32x4
  return %r : !f32x4
}

// -----

!i32x2 = !llvm.struct<(i32, i32)>
func.func @mma_async_sp_c3_fp8_selector_1(%a: i64, %b: i64, %acc: !i32x2, %m: i32) -> !i32x2 {
  // expected-error @+1 {{'nvwgmma.mma_async.sp' op sparsity selector must be 0 for e4m3/e5m2 inputs, but got 1 (mma_async_sp_c3)}}
  %r = nvwgmma.mma_async.sp %a, %b, %acc, sparsity [%m, 1], #nvwgmma.shape<m = 64, n = 8, k = 64>,
         D [f16, one], A [e4m3, one, row], B [e4m3, one, col] : i64, !i32x2 -> !i32x2
  return %r : !i32x2
}

// -----

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_async_sp_c4_metadata_i64(%a: i64, %b: i64, %acc: !f32x4, %m: i64) -> !f32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async.sp' op operand #3 must be i32 sparsity metadata (mma_async_sp_c4), but got 'i64'}}
  %r = "nvwgmma.mma_async.sp"(%a, %b, %acc, %m) <{layoutA = #nvwgmma<layout row>, layoutB = #nvwgmma<layout col>, scaleA = #nvwgmma<scale_in one>, scaleB = #nvwgmma<scale_in one>, scaleD = #nvwgmma<scale_d one>, shape = #nvwgmma.shape<m = 64, n = 8, k = 32>, spSelector = 0 : i64, typeA = #nvwgmma<type f16>, typeB = #nvwgmma<type f16>, typeD = #nvwgmma<type f32>}> : (i64, i64, !f32x4, i64) -> !f32x4
  return %r : !f32x4
}

// -----

!i32x4 = !llvm.struct<(i32, i32, i32, i32)>
func.func @mma_async_sp_shares_dense_rules(%a: i64, %b: i64, %acc: !i32x4, %m: i32) -> !i32x4 {
  // expected-error @+1 {{'nvwgmma.mma_async.sp' op n must be 8, 16, 24, 32 or a multiple of 16 in [48, 256] for s8/u8 inputs, but got 40 (mma_async_c6)}}
  %r = nvwgmma.mma_async.sp %a, %b, %acc, sparsity [%m, 0], #nvwgmma.shape<m = 64, n = 40, k = 64>,
         D [s32, one], A [s8, one, row], B [s8, one, col] : i64, !i32x4 -> !i32x4
  return %r : !i32x4
}

// -----

// expected-error @+1 {{'nvwgmma.wait_group' op nvwgmma ops must be inside a function body, but got this one in 'builtin.module' (placement_c1)}}
nvwgmma.wait_group 0
func.func @placement_c1_module_level() {
  return
}
