// RUN: nvwgmma-opt %s --nvwgmma-to-llvm-pipeline | mlir-translate --mlir-to-llvmir | opt -O3 -S | llc -march=nvptx64 -mcpu=sm_90a -mattr=+ptx80 -o %t.ptx
// RUN: FileCheck %s --input-file=%t.ptx
// RUN: not nvwgmma-ptx-check %t.ptx 2>&1 | FileCheck %s --check-prefix=PTXCHECK
//
// LLVM moves a use of the accumulator above an operand-less wait_group:
// nothing ties the wait to the accumulator's registers, so at -O3 (the
// pipeline Triton and most users run) loop-invariant code motion hoists
// the arithmetic out of a loop whose body waits, and the accumulator is read
// with its group pending (undefined per the PTX ISA; ptxas then injects a
// wait of its own, C7517, said only under -v). The PTX checker reports it.
// A wait that carries the accumulator returns it: the use takes the result
// and stays below the wait.

!f32x4 = !llvm.struct<(f32, f32, f32, f32)>

// CHECK-LABEL: .visible .entry plain_wait(
// CHECK:      wgmma.commit_group.sync.aligned;
// CHECK-NEXT: add.rn.f32 [[X:%r[0-9]+]], [[D:%r[0-9]+]], [[D]];
// CHECK-NEXT: $L__BB0_1:
// CHECK-NEXT: wgmma.wait_group.sync.aligned 0;
// CHECK-NEXT: st.global.b32 [%rd{{[0-9]+}}], [[X]];
llvm.func @plain_wait(%descA: i64, %descB: i64, %out: !llvm.ptr<1>, %n: i32) attributes {nvvm.kernel} {
  %zero = llvm.mlir.constant(0.0 : f32) : f32
  %two = llvm.mlir.constant(2.0 : f32) : f32
  %u = llvm.mlir.undef : !f32x4
  %acc = llvm.insertvalue %zero, %u[0] : !f32x4
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %c1 = llvm.mlir.constant(1 : i32) : i32
  nvwgmma.fence
  %d = nvwgmma.mma_async %descA, %descB, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
          D [f32, zero], A [f16, one, row], B [f16, one, col] : i64, !f32x4 -> !f32x4
  nvwgmma.commit_group
  llvm.br ^loop(%c0 : i32)
^loop(%i: i32):
  nvwgmma.wait_group 0
  %v = llvm.extractvalue %d[0] : !f32x4
  %x = llvm.fmul %v, %two : f32
  %p = llvm.getelementptr %out[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  llvm.store %x, %p : f32, !llvm.ptr<1>
  %next = llvm.add %i, %c1 : i32
  %more = llvm.icmp "slt" %next, %n : i32
  llvm.cond_br %more, ^loop(%next : i32), ^done
^done:
  llvm.return
}

// CHECK-LABEL: .visible .entry value_wait(
// CHECK:      wgmma.commit_group.sync.aligned;
// CHECK-NEXT: $L__BB1_1:
// CHECK:      wgmma.wait_group.sync.aligned 0;
// CHECK-NEXT: // end inline asm
// CHECK-NEXT: add.rn.f32 [[Y:%r[0-9]+]], [[E:%r[0-9]+]], [[E]];
// CHECK-NEXT: st.global.b32 [%rd{{[0-9]+}}], [[Y]];
llvm.func @value_wait(%descA: i64, %descB: i64, %out: !llvm.ptr<1>, %n: i32) attributes {nvvm.kernel} {
  %zero = llvm.mlir.constant(0.0 : f32) : f32
  %two = llvm.mlir.constant(2.0 : f32) : f32
  %u = llvm.mlir.undef : !f32x4
  %acc = llvm.insertvalue %zero, %u[0] : !f32x4
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %c1 = llvm.mlir.constant(1 : i32) : i32
  nvwgmma.fence
  %d = nvwgmma.mma_async %descA, %descB, %acc, #nvwgmma.shape<m = 64, n = 8, k = 16>,
          D [f32, zero], A [f16, one, row], B [f16, one, col] : i64, !f32x4 -> !f32x4
  nvwgmma.commit_group
  llvm.br ^loop(%c0, %d : i32, !f32x4)
^loop(%i: i32, %cur: !f32x4):
  %dw = nvwgmma.wait_group 0 (%cur : !f32x4)
  %v = llvm.extractvalue %dw[0] : !f32x4
  %x = llvm.fmul %v, %two : f32
  %p = llvm.getelementptr %out[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  llvm.store %x, %p : f32, !llvm.ptr<1>
  %next = llvm.add %i, %c1 : i32
  %more = llvm.icmp "slt" %next, %n : i32
  llvm.cond_br %more, ^loop(%next, %dw : i32, !f32x4), ^done
^done:
  llvm.return
}

// PTXCHECK: error: a wgmma.wait_group must complete the group of the wgmma.mma_async at line {{[0-9]+}} before 'add.rn.f32' reads its accumulator register %r{{[0-9]+}}, but got its group still pending (protocol_c4)
// PTXCHECK-NOT: error
