// RUN: nvwgmma-opt %s --nvwgmma-print-ptx -o /dev/null | FileCheck %s
// RUN: nvwgmma-opt %s --nvwgmma-print-ptx=inline-asm -o /dev/null | FileCheck %s --check-prefix=ASM

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>

// CHECK: // nvwgmma.fence at {{.*}}print.mlir":24
// CHECK-NEXT: wgmma.fence.sync.aligned;
// CHECK-NEXT: // nvwgmma.mma_async at
// CHECK-NEXT: {
// CHECK-NEXT: .reg .pred p;
// CHECK-NEXT: setp.ne.b32 p, %scaleD, 0;
// CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d0, %d1, %d2, %d3}, %descA, %descB, p, -1,  1, 0,  1;
// CHECK-NEXT: }
// CHECK-NEXT: // nvwgmma.commit_group at
// CHECK-NEXT: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: // nvwgmma.wait_group at
// CHECK-NEXT: wgmma.wait_group.sync.aligned 1;

// ASM: asm "wgmma.fence.sync.aligned;", ""
// ASM: asm "{\0A.reg .pred p;\0Asetp.ne.b32 p, $10, 0;\0Awgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {$0, $1, $2, $3}, $8, $9, p, $11,  $12, $13,  $14;\0A}\0A", "=f,=f,=f,=f,0,1,2,3,l,l,r,n,n,n,n"
// ASM: asm "wgmma.commit_group.sync.aligned;", ""
// ASM: asm "wgmma.wait_group.sync.aligned 1;", ""
func.func @kernel(%a: i64, %b: i64, %acc: !f32x4, %p: i1) -> !f32x4 {
  nvwgmma.fence
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, %p], A [bf16, neg, row], B [bf16, one, row] : i64, !f32x4 -> !f32x4
  nvwgmma.commit_group
  nvwgmma.wait_group 1
  return %r : !f32x4
}
