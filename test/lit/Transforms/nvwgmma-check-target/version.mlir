// RUN: nvwgmma-opt %s --nvwgmma-check-target="ptx-version=83" -verify-diagnostics

!i32x4 = !llvm.struct<(i32, i32, i32, i32)>
func.func @target_c2_mixed_int8_needs_84(%a: i64, %b: i64, %acc: !i32x4) -> !i32x4 {
  nvwgmma.fence
  // expected-error @+1 {{PTX ISA version must be 8.4 or later for 'nvwgmma.mma_async', but got 8.3 (target_c2)}}
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [s32, one], A [u8, one, row], B [s8, one, col] : i64, !i32x4 -> !i32x4
  return %r : !i32x4
}
