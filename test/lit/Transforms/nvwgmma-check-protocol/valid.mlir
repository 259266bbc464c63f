// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol -verify-diagnostics | FileCheck %s
//
// Correct wgmma protocol: no diagnostic, IR unchanged. The first two are the
// examples of the wgmma.fence section of the PTX ISA (9.7.15.7.1).

!acc = !llvm.struct<(i32, i32, i32, i32)>

// CHECK-LABEL: func.func @spec_example_1_first_use
func.func @spec_example_1_first_use(%da: i64, %db: i64, %acc: !acc) -> !acc {
  nvwgmma.fence
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [s32, one], A [u8, one, row], B [u8, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  return %d : !acc
}

// -----

!acc = !llvm.struct<(i32, i32, i32, i32)>
// The accumulator registers of the first mma are rewritten (mov new_val)
// and used as the A fragment of the second, with a fence in between.
// CHECK-LABEL: func.func @spec_example_2_input_updated
func.func @spec_example_2_input_updated(%da: i64, %db: i64, %acc: !acc, %acc2: !acc, %new: i32) -> !acc {
  nvwgmma.fence
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [s32, one], A [u8, one, row], B [u8, one, col] : i64, !acc -> !acc
  %a = llvm.insertvalue %new, %d[0] : !acc
  nvwgmma.fence
  %e = nvwgmma.mma_async %a, %db, %acc2, #nvwgmma.shape<m = 64, n = 8, k = 32>,
         D [s32, one], A [u8, one, row], B [u8, one, col] : !acc, !acc -> !acc
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  return %e : !acc
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
// A software-pipelined K loop: one group in flight across iterations
// (wait_group 1), accumulators chained, wait_group 0 after the loop.
// CHECK-LABEL: func.func @pipelined_k_loop
func.func @pipelined_k_loop(%da: i64, %db: i64, %n: index, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = llvm.mlir.zero : !acc
  nvwgmma.fence
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> !acc {
    %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
    nvwgmma.commit_group
    nvwgmma.wait_group 1
    scf.yield %d : !acc
  }
  nvwgmma.wait_group 0
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
// Shared-memory staging made visible to the async proxy, in a plain CFG.
// CHECK-LABEL: llvm.func @cfg_with_proxy_fence
llvm.func @cfg_with_proxy_fence(%da: i64, %db: i64, %smem: !llvm.ptr<3>, %x: i32, %c: i1) -> !acc {
  llvm.store %x, %smem : i32, !llvm.ptr<3>
  nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
  %zero = llvm.mlir.zero : !acc
  nvwgmma.fence
  %d = nvwgmma.mma_async %da, %db, %zero, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, zero], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  llvm.cond_br %c, ^a, ^b
^a:
  nvwgmma.wait_group 0
  llvm.br ^done(%d : !acc)
^b:
  nvwgmma.wait_group 0
  llvm.br ^done(%d : !acc)
^done(%r: !acc):
  llvm.return %r : !acc
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
// scf.if where both arms leave the same protocol state.
// CHECK-LABEL: func.func @if_both_arms_wait
func.func @if_both_arms_wait(%da: i64, %db: i64, %acc: !acc, %c: i1) -> !acc {
  nvwgmma.fence
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  scf.if %c {
    nvwgmma.wait_group 0
  } else {
    nvwgmma.wait_group 0
  }
  return %d : !acc
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
// Same-shape chaining needs no fence between the mma_async ops.
// CHECK-LABEL: func.func @same_shape_chain
func.func @same_shape_chain(%da: i64, %db: i64, %acc: !acc) -> !acc {
  nvwgmma.fence
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  %e = nvwgmma.mma_async %da, %db, %d, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [bf16, one, row], B [bf16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  nvwgmma.wait_group 0
  return %e : !acc
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
// A wait that carries the accumulator: its result is complete, and the
// value goes round a loop through it (the wait's operands are not uses).
// CHECK-LABEL: llvm.func @value_wait_carried
// CHECK: nvwgmma.wait_group 0 (%{{.+}} : !llvm.struct<(f32, f32, f32, f32)>)
llvm.func @value_wait_carried(%da: i64, %db: i64, %acc: !acc, %out: !llvm.ptr<1>, %n: i32) {
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %c1 = llvm.mlir.constant(1 : i32) : i32
  nvwgmma.fence
  %d = nvwgmma.mma_async %da, %db, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  llvm.br ^loop(%c0, %d : i32, !acc)
^loop(%i: i32, %cur: !acc):
  %dw = nvwgmma.wait_group 0 (%cur : !acc)
  %v = llvm.extractvalue %dw[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  %next = llvm.add %i, %c1 : i32
  %more = llvm.icmp "slt" %next, %n : i32
  llvm.cond_br %more, ^loop(%next, %dw : i32, !acc), ^done
^done:
  llvm.return
}
