// RUN: nvwgmma-opt %s --convert-nvwgmma-to-nvvm | FileCheck %s

// CHECK-LABEL: func.func @sync
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 9223372036854775807
// CHECK-NEXT: return
func.func @sync() {
  nvwgmma.fence
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  nvwgmma.wait_group 9223372036854775807
  return
}
