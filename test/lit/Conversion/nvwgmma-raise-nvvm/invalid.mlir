// Upstream nvvm.wgmma.mma_async ops that upstream's verifier accepts but
// whose PTX ptxas rejects: raising reports nvwgmma's labelled rule, names the
// upstream op, leaves the op in place and fails the pass.
// RUN: nvwgmma-opt %s --nvwgmma-raise-nvvm --split-input-file -verify-diagnostics

// Upstream emits b1 without `.and.popc`; ptxas requires it.
func.func @raise_c1_b1_without_popc(%a: i64, %b: i64, %acc: !llvm.struct<(i32, i32, i32, i32)>) {
  // expected-error @+1 {{'nvvm.wgmma.mma_async' b1 multiply must name its operation (.and.popc, the only one ptxas accepts), but got upstream's b1 op, which has none and emits PTX that ptxas rejects (raise_c1)}}
  %0 = nvvm.wgmma.mma_async %a, %b, %acc, <m = 64, n = 8, k = 256>, D[<s32>, <one>], A[<b1>, <one>, <row>], B[<b1>, <one>, <col>] : !llvm.struct<(i32, i32, i32, i32)> -> !llvm.struct<(i32, i32, i32, i32)>
  return
}

// -----

// Upstream never checks the accumulator's member type against D.
func.func @raise_mma_async_c10_f32_d_in_i32_registers(%a: i64, %b: i64, %acc: !llvm.struct<(i32, i32, i32, i32)>) {
  // expected-error @+1 {{'nvvm.wgmma.mma_async' cannot be raised: accumulator members must be f32 for a f32 accumulator, but got i32 at member 0 (mma_async_c10)}}
  %0 = nvvm.wgmma.mma_async %a, %b, %acc, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(i32, i32, i32, i32)> -> !llvm.struct<(i32, i32, i32, i32)>
  return
}

// -----

func.func @raise_mma_async_c10_s32_d_in_f32_registers(%a: i64, %b: i64, %acc: !llvm.struct<(f32, f32, f32, f32)>) {
  // expected-error @+1 {{'nvvm.wgmma.mma_async' cannot be raised: accumulator members must be i32 for a s32 accumulator, but got f32 at member 0 (mma_async_c10)}}
  %0 = nvvm.wgmma.mma_async %a, %b, %acc, <m = 64, n = 8, k = 32>, D[<s32>, <one>], A[<s8>, <one>, <row>], B[<s8>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
  return
}
