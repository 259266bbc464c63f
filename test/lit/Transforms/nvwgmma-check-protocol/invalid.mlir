// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol -verify-diagnostics
//
// One minimal violation per rule of docs/Protocol.md, plus the loop cases.

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c1_no_fence_before_first_mma(%da: i64, %db: i64, %acc: !acc) -> !acc {
  // expected-error @+1 {{an nvwgmma.fence must separate the last non-wgmma access to the accumulator or A-fragment registers from this mma_async, but got none (protocol_c1)}}
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  return %d : !acc
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c1_accumulator_written_after_fence(%da: i64, %db: i64, %x: f32) -> !acc {
  nvwgmma.fence
  %zero = llvm.mlir.zero : !acc
  // expected-note @+1 {{registers last accessed here}}
  %acc = llvm.insertvalue %x, %zero[0] : !acc
  // expected-error @+1 {{(protocol_c1)}}
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  return %d : !acc
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
// Chaining is fence-free only between mma_async ops of the same shape.
func.func @protocol_c1_chain_changes_shape(%da: i64, %db: i64, %acc: !acc) -> !acc {
  nvwgmma.fence
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  // expected-error @+1 {{(protocol_c1)}}
  %e = nvwgmma.mma_async %da, %db, %d, #nvwgmma.shape<m = 64, n = 8, k = 8>,
         D [f32, one], A [tf32, one, row], B [tf32, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  return %e : !acc
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c2_never_committed(%da: i64, %db: i64, %acc: !acc) {
  nvwgmma.fence
  // expected-note @+1 {{uncommitted mma_async issued here}}
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.wait_group 0
  // expected-error @+1 {{every mma_async must be committed before the function returns, but got one that is not (protocol_c2)}}
  return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c3_never_waited(%da: i64, %db: i64, %acc: !acc) {
  nvwgmma.fence
  // expected-note @+1 {{mma_async of the pending group issued here}}
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  nvwgmma.wait_group 1
  // expected-error @+1 {{every committed group must be completed by a wait_group before the function returns, but got a group that is not waited on (protocol_c3)}}
  return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c4_read_before_wait(%da: i64, %db: i64, %acc: !acc, %out: !llvm.ptr<1>) {
  nvwgmma.fence
  // expected-note @+1 {{mma_async issued here}}
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  // Taking the register out of the bundle reads nothing; the store does.
  %v = llvm.extractvalue %d[0] : !acc
  // expected-error @+1 {{the mma_async group must be completed by a wait_group 0 before this use of its result, but got its group still pending (protocol_c4)}}
  llvm.store %v, %out : f32, !llvm.ptr<1>
  nvwgmma.wait_group 0
  return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
// A wait that carries the value returns it still pending when its depth
// leaves the group in flight: a use of the result is early too.
func.func @protocol_c4_value_wait_too_shallow(%da: i64, %db: i64, %acc: !acc, %out: !llvm.ptr<1>) {
  nvwgmma.fence
  // expected-note @+1 {{mma_async issued here}}
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  %dw = nvwgmma.wait_group 1 (%d : !acc)
  %v = llvm.extractvalue %dw[0] : !acc
  // expected-error @+1 {{the mma_async group must be completed by a wait_group 0 before this use of its result, but got its group still pending (protocol_c4)}}
  llvm.store %v, %out : f32, !llvm.ptr<1>
  nvwgmma.wait_group 0
  return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c4_wait_one_is_not_enough(%da: i64, %db: i64, %acc: !acc, %out: !llvm.ptr<1>) {
  nvwgmma.fence
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  // expected-note @+1 {{mma_async issued here}}
  %e = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  nvwgmma.wait_group 1
  // The first group is complete; the second is not.
  %v = llvm.extractvalue %d[0] : !acc
  %w = llvm.extractvalue %e[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  // expected-error @+1 {{the mma_async group must be completed by a wait_group 0 before this use of its result, but got its group still pending (protocol_c4)}}
  llvm.store %w, %out : f32, !llvm.ptr<1>
  nvwgmma.wait_group 0
  return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
// The pipelined loop of valid.mlir, reading the accumulator inside the loop
// before the wait.
func.func @protocol_c4_loop_reads_accumulator_before_wait(%da: i64, %db: i64, %n: index, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = llvm.mlir.zero : !acc
  nvwgmma.fence
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> !acc {
    // The read also touches registers the next iteration's mma_async uses,
    // so that one needs a fence too.
    // expected-note @+2 {{mma_async issued here}}
    // expected-error @+1 {{(protocol_c1)}}
    %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
    nvwgmma.commit_group
    %v = llvm.extractvalue %d[0] : !acc
    // expected-error @+2 {{(protocol_c4)}}
    // expected-note @+1 {{registers last accessed here}}
    llvm.store %v, %out : f32, !llvm.ptr<1>
    nvwgmma.wait_group 1
    scf.yield %d : !acc
  }
  nvwgmma.wait_group 0
  return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
// No commit inside the loop: after it, wait_group 0 completes nothing.
func.func @protocol_c2_missing_commit_before_loop_exit(%da: i64, %db: i64, %n: index, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = llvm.mlir.zero : !acc
  nvwgmma.fence
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> !acc {
    // expected-note @+2 {{uncommitted mma_async issued here}}
    // expected-note @+1 {{mma_async issued here}}
    %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
    scf.yield %d : !acc
  }
  nvwgmma.wait_group 0
  %v = llvm.extractvalue %r[0] : !acc
  // expected-error @+1 {{the mma_async group must be completed by a wait_group 0 before this use of its result, but got the mma_async not even committed (protocol_c4)}}
  llvm.store %v, %out : f32, !llvm.ptr<1>
  // expected-error @+1 {{(protocol_c2)}}
  return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c5_shared_store_without_proxy_fence(%da: i64, %db: i64, %acc: !acc, %smem: !llvm.ptr<3>, %x: i32) -> !acc {
  // expected-note @+1 {{shared memory written here}}
  llvm.store %x, %smem : i32, !llvm.ptr<3>
  nvwgmma.fence
  // expected-error @+1 {{a fence.proxy.async must separate a generic-proxy write to shared memory from this mma_async, but got none (protocol_c5)}}
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  return %d : !acc
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c5_memref_store_to_workgroup_memory(%da: i64, %db: i64, %acc: !acc, %smem: memref<64xf16, #gpu.address_space<workgroup>>, %x: f16) -> !acc {
  %c0 = arith.constant 0 : index
  // expected-note @+1 {{shared memory written here}}
  memref.store %x, %smem[%c0] : memref<64xf16, #gpu.address_space<workgroup>>
  nvwgmma.fence
  // expected-error @+1 {{(protocol_c5)}}
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  return %d : !acc
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
// Upstream nvvm.wgmma ops follow the same rules: the last group is left
// pending by wait.group 1, and returned before it completes.
func.func @protocol_c4_upstream_nvvm_group_returned_pending(%da: i64, %db: i64, %acc: !acc) -> !acc {
  nvvm.wgmma.fence.aligned
  // expected-note @+1 {{mma_async issued here}}
  %d = nvvm.wgmma.mma_async %da, %db, %acc, <m = 64, n = 8, k = 16>, D[<f32>, <one>],
         A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !acc -> !acc
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 1
  // One cause (the missing wait), one error: returning the pending group is
  // a note on the early use.
  // expected-error @+2 {{(protocol_c4)}}
  // expected-note @+1 {{and the function returns with the group pending}}
  return %d : !acc
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c1_upstream_nvvm_no_fence(%da: i64, %db: i64, %acc: !acc) -> !acc {
  // expected-error @+1 {{(protocol_c1)}}
  %d = nvvm.wgmma.mma_async %da, %db, %acc, <m = 64, n = 8, k = 16>, D[<f32>, <one>],
         A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !acc -> !acc
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  return %d : !acc
}

// -----

// A kernel's gpu.return leaves the function like func.return (it is not
// ReturnLike upstream, and was not seen as a return).
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @protocol_c3_gpu_return_with_group_pending(%a: i64, %b: i64) kernel {
      %acc = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32)>
      nvwgmma.fence
      // expected-note @+1 {{mma_async of the pending group issued here}}
      %d = nvwgmma.mma_async %a, %b, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
             D [f32, zero], A [bf16, one, row], B [bf16, one, col]
             : i64, !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
      nvwgmma.commit_group
      // expected-error @+1 {{every committed group must be completed by a wait_group before the function returns, but got a group that is not waited on (protocol_c3)}}
      gpu.return
    }
  }
}
