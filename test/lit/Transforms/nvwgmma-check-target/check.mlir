// RUN: nvwgmma-opt %s --nvwgmma-check-target | FileCheck %s
// RUN: nvwgmma-opt %s --nvwgmma-check-target="chip=sm_90a ptx-version=84" | FileCheck %s
//
// A correct target and a sufficient version pass and leave the IR unchanged.

!i32x4 = !llvm.struct<(i32, i32, i32, i32)>
// CHECK-LABEL: func.func @mixed_int8
// CHECK: nvwgmma.mma_async
func.func @mixed_int8(%a: i64, %b: i64, %acc: !i32x4) -> !i32x4 {
  nvwgmma.fence
  %r = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [s32, one], A [s8, one, row], B [u8, one, col] : i64, !i32x4 -> !i32x4
  return %r : !i32x4
}
