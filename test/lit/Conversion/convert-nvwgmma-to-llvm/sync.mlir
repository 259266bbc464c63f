// RUN: nvwgmma-opt %s --convert-nvwgmma-to-llvm | FileCheck %s
// RUN: nvwgmma-opt %s --convert-nvwgmma-to-llvm | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR

// CHECK-LABEL: llvm.func @sync
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.wgmma.fence.sync.aligned"() : () -> ()
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.wgmma.commit_group.sync.aligned"() : () -> ()
// CHECK-NEXT: [[N0:%.+]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.wgmma.wait_group.sync.aligned"([[N0]]) : (i64) -> ()
// CHECK-NEXT: [[NMAX:%.+]] = llvm.mlir.constant(9223372036854775807 : i64) : i64
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.wgmma.wait_group.sync.aligned"([[NMAX]]) : (i64) -> ()
// CHECK-NEXT: llvm.return

// LLVMIR-LABEL: define ptx_kernel void @sync()
// LLVMIR-NEXT: call void @llvm.nvvm.wgmma.fence.sync.aligned()
// LLVMIR-NEXT: call void @llvm.nvvm.wgmma.commit_group.sync.aligned()
// LLVMIR-NEXT: call void @llvm.nvvm.wgmma.wait_group.sync.aligned(i64 0)
// LLVMIR-NEXT: call void @llvm.nvvm.wgmma.wait_group.sync.aligned(i64 9223372036854775807)
llvm.func @sync() attributes {nvvm.kernel} {
  nvwgmma.fence
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  nvwgmma.wait_group 9223372036854775807
  llvm.return
}
