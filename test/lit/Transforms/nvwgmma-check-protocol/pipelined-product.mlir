// A product carried to the next iteration and used there after that
// iteration's own mma_async is committed: wait_group 1 completes the
// earlier instance (the newest group is this iteration's), so the use is
// in order; wait_group 2 leaves it pending. (A software-pipelined
// promotion: the tensor cores work through the previous product's use.)
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=unchecked=false -verify-diagnostics
// RUN: nvwgmma-opt %s -split-input-file --convert-scf-to-cf --nvwgmma-check-protocol=unchecked=false -verify-diagnostics

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @previous_product_used_after_wait_group_1(%desc: i64, %n: index, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = llvm.mlir.zero : !acc
  %zf = arith.constant 0.0 : f32
  %r:2 = scf.for %k = %c0 to %n step %c1 iter_args(%sum = %zf, %prev = %zero) -> (f32, !acc) {
    nvwgmma.fence
    %d = nvwgmma.mma_async %desc, %desc, %prev, #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, zero], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
    nvwgmma.commit_group
    %done = nvwgmma.wait_group 1 (%prev : !acc)
    %x = llvm.extractvalue %done[0] : !acc
    %s = arith.addf %sum, %x : f32
    scf.yield %s, %d : f32, !acc
  }
  %last = nvwgmma.wait_group 0 (%r#1 : !acc)
  %y = llvm.extractvalue %last[0] : !acc
  %t = arith.addf %r#0, %y : f32
  llvm.store %t, %out : f32, !llvm.ptr<1>
  return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c4_previous_product_with_wait_group_2(%desc: i64, %n: index, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = llvm.mlir.zero : !acc
  %zf = arith.constant 0.0 : f32
  %r:2 = scf.for %k = %c0 to %n step %c1 iter_args(%sum = %zf, %prev = %zero) -> (f32, !acc) {
    nvwgmma.fence
    // expected-note @+1 {{mma_async issued here}}
    %d = nvwgmma.mma_async %desc, %desc, %prev, #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, zero], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
    nvwgmma.commit_group
    %done = nvwgmma.wait_group 2 (%prev : !acc)
    %x = llvm.extractvalue %done[0] : !acc
    // expected-error @+1 {{the mma_async group must be completed by a wait_group 0 before this use of its result, but got its group still pending (protocol_c4)}}
    %s = arith.addf %sum, %x : f32
    scf.yield %s, %d : f32, !acc
  }
  %last = nvwgmma.wait_group 0 (%r#1 : !acc)
  %y = llvm.extractvalue %last[0] : !acc
  %t = arith.addf %r#0, %y : f32
  llvm.store %t, %out : f32, !llvm.ptr<1>
  return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @protocol_c4_previous_product_before_its_wait(%desc: i64, %n: index, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = llvm.mlir.zero : !acc
  %zf = arith.constant 0.0 : f32
  %r:2 = scf.for %k = %c0 to %n step %c1 iter_args(%sum = %zf, %prev = %zero) -> (f32, !acc) {
    %early = llvm.extractvalue %prev[1] : !acc
    // expected-error @+1 {{the mma_async group must be completed by a wait_group 0 before this use of its result, but got its group still pending (protocol_c4)}}
    %e = arith.addf %sum, %early : f32
    nvwgmma.fence
    // expected-note @+1 {{mma_async issued here}}
    %d = nvwgmma.mma_async %desc, %desc, %prev, #nvwgmma.shape<m = 64, n = 8, k = 16>,
           D [f32, zero], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
    nvwgmma.commit_group
    %done = nvwgmma.wait_group 1 (%prev : !acc)
    %x = llvm.extractvalue %done[0] : !acc
    %s = arith.addf %sum, %x : f32
    scf.yield %s, %d : f32, !acc
  }
  %last = nvwgmma.wait_group 0 (%r#1 : !acc)
  %y = llvm.extractvalue %last[0] : !acc
  %t = arith.addf %r#0, %y : f32
  llvm.store %t, %out : f32, !llvm.ptr<1>
  return
}
