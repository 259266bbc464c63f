// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-insert-synchronization | FileCheck %s
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-insert-synchronization --nvwgmma-check-protocol
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-insert-synchronization --nvwgmma-insert-synchronization | FileCheck %s
//
// Each function breaks the protocol; the pass repairs it (checked exactly),
// the result passes the checker, and running the pass twice changes nothing.

!acc = !llvm.struct<(f32, f32, f32, f32)>
// CHECK-LABEL: func.func @bare_mma
// CHECK-NEXT:    nvwgmma.fence
// CHECK-NEXT:    %[[D:.+]] = nvwgmma.mma_async
// CHECK-NEXT:    nvwgmma.commit_group
// CHECK-NEXT:    nvwgmma.wait_group 0
// CHECK-NEXT:    return %[[D]]
func.func @bare_mma(%da: i64, %db: i64, %acc: !acc) -> !acc {
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  return %d : !acc
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
// The weakest wait that completes the group read: wait_group 1 keeps the
// newer group in flight. It goes before the op that reads the register
// (the return), not before the extractvalue, which moves no data.
// CHECK-LABEL: func.func @weakest_wait
// CHECK:         nvwgmma.commit_group
// CHECK:         nvwgmma.commit_group
// CHECK-NEXT:    llvm.extractvalue %[[D:.+]][0]
// CHECK-NEXT:    nvwgmma.wait_group 1
// CHECK-NEXT:    nvwgmma.wait_group 0
// CHECK-NEXT:    return
func.func @weakest_wait(%da: i64, %db: i64, %acc: !acc, %out: !llvm.ptr<1>) -> f32 {
  nvwgmma.fence
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  %e = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  %v = llvm.extractvalue %d[0] : !acc
  return %v : f32
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
// CHECK-LABEL: func.func @shared_store
// CHECK:         llvm.store
// CHECK-NEXT:    nvwgmma.fence
// CHECK-NEXT:    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:    nvwgmma.mma_async
func.func @shared_store(%da: i64, %db: i64, %acc: !acc, %smem: !llvm.ptr<3>, %x: i32) -> !acc {
  llvm.store %x, %smem : i32, !llvm.ptr<3>
  nvwgmma.fence
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  return %d : !acc
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
// A K loop missing its commit: one commit inside the loop after the mma,
// one wait after it.
// CHECK-LABEL: func.func @loop_missing_commit
// CHECK:         scf.for
// CHECK-NEXT:      nvwgmma.mma_async
// CHECK-NEXT:      scf.yield
// CHECK:         llvm.extractvalue
// CHECK-NEXT:    nvwgmma.commit_group
// CHECK-NEXT:    nvwgmma.wait_group 0
// CHECK-NEXT:    return
func.func @loop_missing_commit(%da: i64, %db: i64, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = llvm.mlir.zero : !acc
  nvwgmma.fence
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> !acc {
    %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
    scf.yield %d : !acc
  }
  %v = llvm.extractvalue %r[0] : !acc
  return %v : f32
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
// Correct input is left unchanged.
// CHECK-LABEL: func.func @already_correct
// CHECK-NEXT:    nvwgmma.fence
// CHECK-NEXT:    nvwgmma.mma_async
// CHECK-NEXT:    nvwgmma.commit_group
// CHECK-NEXT:    nvwgmma.wait_group 0
// CHECK-NEXT:    return
func.func @already_correct(%da: i64, %db: i64, %acc: !acc) -> !acc {
  nvwgmma.fence
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  return %d : !acc
}

// -----

// IR that speaks only upstream's NVVM (another front end's) is repaired in
// NVVM ops: no nvwgmma op appears in it.
!acc = !llvm.struct<(f32, f32, f32, f32)>
// CHECK-LABEL: llvm.func @nvvm_only
// CHECK-NEXT:    nvvm.wgmma.fence.aligned
// CHECK-NEXT:    %[[D:.+]] = nvvm.wgmma.mma_async
// CHECK-NEXT:    nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:    nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT:    llvm.return %[[D]]
llvm.func @nvvm_only(%a: i64, %b: i64, %acc: !acc) -> !acc {
  %d = nvvm.wgmma.mma_async %a, %b, %acc, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !acc -> !acc
  llvm.return %d : !acc
}
