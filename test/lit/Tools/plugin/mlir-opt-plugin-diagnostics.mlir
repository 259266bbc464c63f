// nvwgmma's verifier and checker report through upstream's mlir-opt with
// the plugin exactly as through nvwgmma-opt.
// RUN: mlir-opt %{load_plugin} %s --split-input-file --pass-pipeline='builtin.module(nvwgmma-check-protocol)' -verify-diagnostics

func.func @bad_n(%a: i64, %b: i64, %acc: !llvm.struct<(f32, f32, f32, f32)>) {
  // expected-error @+1 {{'nvwgmma.mma_async' op n must be a multiple of 8 in [8, 256] for f16 inputs, but got 12 (mma_async_c5)}}
  %d = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 12, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col]
         : i64, !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
  return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @never_waited(%da: i64, %db: i64, %acc: !acc) {
  nvwgmma.fence
  // expected-note @+1 {{mma_async of the pending group issued here}}
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  nvwgmma.wait_group 1
  // expected-error @+1 {{every committed group must be completed by a wait_group before the function returns, but got a group that is not waited on (protocol_c3)}}
  return
}
