// Upstream's mlir-opt (the MLIR wheel's) with libNVWGMMAPlugin.so loaded:
// it parses nvwgmma ops and runs nvwgmma's passes in one pipeline with
// upstream's, here the checker, our lowering and upstream's whole
// gpu-lower-to-nvvm-pipeline down to PTX.
// RUN: mlir-opt %{load_plugin} %s --pass-pipeline='builtin.module(nvwgmma-check-protocol, convert-nvwgmma-to-nvvm, gpu-lower-to-nvvm-pipeline{cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa})' | FileCheck %s
// RUN: mlir-opt %{load_plugin} %s | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: mlir-opt %{load_plugin} %s --pass-pipeline='builtin.module(convert-nvwgmma-to-llvm)' | FileCheck %s --check-prefix=LLVM

// CHECK: gpu.binary @kernels
// CHECK-SAME: .target sm_90a
// CHECK-SAME: wgmma.fence.sync.aligned;
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%r1, %r2, %r3, %r4}, %rd1, %rd2, p, 1,  1, 0,  0;
// CHECK-SAME: wgmma.commit_group.sync.aligned;
// CHECK-SAME: wgmma.wait_group.sync.aligned \090;

// ROUNDTRIP: nvwgmma.fence
// ROUNDTRIP-NEXT: nvwgmma.mma_async %arg0, %arg1, %{{.*}}, #nvwgmma.shape<m = 64, n = 8, k = 16>, D [f32, zero], A [bf16, one, row], B [bf16, one, col] : i64, !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>

// LLVM: llvm.call_intrinsic "llvm.nvvm.wgmma.fence.sync.aligned"() : () -> ()
// LLVM: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $10, 0;\0Awgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {$0, $1, $2, $3}, $8, $9, p, $11,  $12, $13,  $14;\0A}\0A", "=f,=f,=f,=f,0,1,2,3,l,l,n,n,n,n,n"
// LLVM: llvm.call_intrinsic "llvm.nvvm.wgmma.wait_group.sync.aligned"(%{{.*}}) : (i64) -> ()
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: i64, %b: i64, %out: !llvm.ptr) kernel {
      %acc = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32)>
      nvwgmma.fence
      %d = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, zero], A [bf16, one, row], B [bf16, one, col]
             : i64, !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
      nvwgmma.commit_group
      nvwgmma.wait_group 0
      %x = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
      llvm.store %x, %out : f32, !llvm.ptr
      gpu.return
    }
  }
}
