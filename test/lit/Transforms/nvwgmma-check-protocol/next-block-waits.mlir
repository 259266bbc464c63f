// A consumer that waits for the next block at the end of each iteration,
// where a next block exists (Mosaic GPU's flash attention): the path that
// skips the wait is the last iteration's, which no read follows. A guard
// that skips it earlier leaves a later read unwaited. The first wait, for
// stage 0 before the loop, is for phase 0.
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=unchecked=false -verify-diagnostics

!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @wait_for_the_next_block(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>, %wg: i32) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c2 = llvm.mlir.constant(2 : i64) : i64
  %c4 = llvm.mlir.constant(4 : i64) : i64
  %c16384 = llvm.mlir.constant(16384 : i64) : i64
  %mask = llvm.mlir.constant(262143 : i64) : i64
  %layout = llvm.mlir.constant(4611686293305294848 : i64) : i64
  %true = llvm.mlir.constant(true) : i1
  %i0 = llvm.mlir.constant(0 : i32) : i32
  %zero = llvm.mlir.zero : !acc
  // Stage 0's wait before the loop; each iteration waits for the next
  // stage at its end, where a next block exists.
  %bar0 = llvm.getelementptr %bars[%c0] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
  %p0 = llvm.mlir.constant(0 : i32) : i32
  llvm.inline_asm has_side_effects asm_dialect = att "{\0A\09.reg .pred P1;\0A\09LAB_WAIT:\0A\09mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1;\0A\09@P1 bra DONE;\0A\09bra LAB_WAIT;\0A\09DONE:\0A\09}", "r,r" %bar0, %p0 : (!llvm.ptr<3>, i32) -> ()
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) : i64 {
    %k1 = llvm.add %k, %c1 : i64
    %ns = llvm.urem %k1, %c2 : i64
    %noff = llvm.mul %ns, %c16384 : i64
    %nbuf = llvm.getelementptr %smem[%noff] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    %nbar = llvm.getelementptr %bars[%ns] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
    llvm.inline_asm has_side_effects asm_dialect = att "mbarrier.arrive.expect_tx.shared.b64 _, [$0], 16384;", "r" %nbar : (!llvm.ptr<3>) -> ()
    llvm.inline_asm has_side_effects asm_dialect = att "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];", "r,l,r,r,r" %nbuf, %tmap, %c0, %c0, %nbar : (!llvm.ptr<3>, !llvm.ptr, i64, i64, !llvm.ptr<3>) -> ()
    %s = llvm.urem %k, %c2 : i64
    %bar = llvm.getelementptr %bars[%s] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
    %round = llvm.udiv %k, %c2 : i64
    %phase = llvm.and %round, %c1 : i64
    %phase32 = llvm.trunc %phase : i64 to i32

    %off = llvm.mul %s, %c16384 : i64
    %buf = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    %addr = llvm.ptrtoint %buf : !llvm.ptr<3> to i64
    %masked = llvm.and %addr, %mask : i64
    %field = llvm.lshr %masked, %c4 : i64
    %desc = llvm.or %field, %layout : i64
    nvvm.wgmma.fence.aligned
    %a0 = llvm.extractvalue %acc[0] : !acc
    %a1 = llvm.extractvalue %acc[1] : !acc
    %a2 = llvm.extractvalue %acc[2] : !acc
    %a3 = llvm.extractvalue %acc[3] : !acc
    %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0,$1,$2,$3}, $8, $9, 1, 1, 1, 0, 0;", "=f,=f,=f,=f,0,1,2,3,l,l" %a0, %a1, %a2, %a3, %desc, %desc : (f32, f32, f32, f32, i64, i64) -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    %more = llvm.icmp "slt" %k1, %n : i64
    scf.if %more {
      %nround = llvm.udiv %k1, %c2 : i64
      %nphase = llvm.and %nround, %c1 : i64
      %nphase32 = llvm.trunc %nphase : i64 to i32
      llvm.inline_asm has_side_effects asm_dialect = att "{\0A\09.reg .pred P1;\0A\09LAB_WAIT:\0A\09mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1;\0A\09@P1 bra DONE;\0A\09bra LAB_WAIT;\0A\09DONE:\0A\09}", "r,r" %nbar, %nphase32 : (!llvm.ptr<3>, i32) -> ()
    }
    scf.yield %d : !acc
  }
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @next_block_guard_too_strict(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>, %wg: i32) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c2 = llvm.mlir.constant(2 : i64) : i64
  %c4 = llvm.mlir.constant(4 : i64) : i64
  %c16384 = llvm.mlir.constant(16384 : i64) : i64
  %mask = llvm.mlir.constant(262143 : i64) : i64
  %layout = llvm.mlir.constant(4611686293305294848 : i64) : i64
  %true = llvm.mlir.constant(true) : i1
  %i0 = llvm.mlir.constant(0 : i32) : i32
  %zero = llvm.mlir.zero : !acc
  // Stage 0's wait before the loop; each iteration waits for the next
  // stage at its end, where a next block exists.
  %bar0 = llvm.getelementptr %bars[%c0] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
  %p0 = llvm.mlir.constant(0 : i32) : i32
  llvm.inline_asm has_side_effects asm_dialect = att "{\0A\09.reg .pred P1;\0A\09LAB_WAIT:\0A\09mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1;\0A\09@P1 bra DONE;\0A\09bra LAB_WAIT;\0A\09DONE:\0A\09}", "r,r" %bar0, %p0 : (!llvm.ptr<3>, i32) -> ()
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) : i64 {
    %k1 = llvm.add %k, %c1 : i64
    %ns = llvm.urem %k1, %c2 : i64
    %noff = llvm.mul %ns, %c16384 : i64
    %nbuf = llvm.getelementptr %smem[%noff] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    %nbar = llvm.getelementptr %bars[%ns] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
    llvm.inline_asm has_side_effects asm_dialect = att "mbarrier.arrive.expect_tx.shared.b64 _, [$0], 16384;", "r" %nbar : (!llvm.ptr<3>) -> ()
    // expected-note@+1 {{the stage is filled by this TMA load, which completes on the full barrier}}
    llvm.inline_asm has_side_effects asm_dialect = att "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];", "r,l,r,r,r" %nbuf, %tmap, %c0, %c0, %nbar : (!llvm.ptr<3>, !llvm.ptr, i64, i64, !llvm.ptr<3>) -> ()
    %s = llvm.urem %k, %c2 : i64
    %bar = llvm.getelementptr %bars[%s] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
    %round = llvm.udiv %k, %c2 : i64
    %phase = llvm.and %round, %c1 : i64
    %phase32 = llvm.trunc %phase : i64 to i32

    %off = llvm.mul %s, %c16384 : i64
    %buf = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    %addr = llvm.ptrtoint %buf : !llvm.ptr<3> to i64
    %masked = llvm.and %addr, %mask : i64
    %field = llvm.lshr %masked, %c4 : i64
    %desc = llvm.or %field, %layout : i64
    nvvm.wgmma.fence.aligned
    %a0 = llvm.extractvalue %acc[0] : !acc
    %a1 = llvm.extractvalue %acc[1] : !acc
    %a2 = llvm.extractvalue %acc[2] : !acc
    %a3 = llvm.extractvalue %acc[3] : !acc
    // expected-error@+1 {{'llvm.inline_asm' an mma_async must read stage k mod 2 only after a wait on that stage's full barrier in the same round, but got no such wait (protocol_c6)}}
    %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0,$1,$2,$3}, $8, $9, 1, 1, 1, 0, 0;", "=f,=f,=f,=f,0,1,2,3,l,l" %a0, %a1, %a2, %a3, %desc, %desc : (f32, f32, f32, f32, i64, i64) -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    %more = llvm.icmp "slt" %k1, %c4 : i64
    scf.if %more {
      %nround = llvm.udiv %k1, %c2 : i64
      %nphase = llvm.and %nround, %c1 : i64
      %nphase32 = llvm.trunc %nphase : i64 to i32
      llvm.inline_asm has_side_effects asm_dialect = att "{\0A\09.reg .pred P1;\0A\09LAB_WAIT:\0A\09mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1;\0A\09@P1 bra DONE;\0A\09bra LAB_WAIT;\0A\09DONE:\0A\09}", "r,r" %nbar, %nphase32 : (!llvm.ptr<3>, i32) -> ()
    }
    scf.yield %d : !acc
  }
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @first_wait_with_parity_1(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>, %wg: i32) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c2 = llvm.mlir.constant(2 : i64) : i64
  %c4 = llvm.mlir.constant(4 : i64) : i64
  %c16384 = llvm.mlir.constant(16384 : i64) : i64
  %mask = llvm.mlir.constant(262143 : i64) : i64
  %layout = llvm.mlir.constant(4611686293305294848 : i64) : i64
  %true = llvm.mlir.constant(true) : i1
  %i0 = llvm.mlir.constant(0 : i32) : i32
  %zero = llvm.mlir.zero : !acc
  // Stage 0's wait before the loop; each iteration waits for the next
  // stage at its end, where a next block exists.
  %bar0 = llvm.getelementptr %bars[%c0] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
  %p0 = llvm.mlir.constant(1 : i32) : i32
  // expected-error@+1 {{'llvm.inline_asm' a first wait for stage 0 of 2 must use parity 0, the phase its first fill completes, but got 1, which passes before the stage is filled (protocol_c9)}}
  llvm.inline_asm has_side_effects asm_dialect = att "{\0A\09.reg .pred P1;\0A\09LAB_WAIT:\0A\09mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1;\0A\09@P1 bra DONE;\0A\09bra LAB_WAIT;\0A\09DONE:\0A\09}", "r,r" %bar0, %p0 : (!llvm.ptr<3>, i32) -> ()
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) : i64 {
    %k1 = llvm.add %k, %c1 : i64
    %ns = llvm.urem %k1, %c2 : i64
    %noff = llvm.mul %ns, %c16384 : i64
    %nbuf = llvm.getelementptr %smem[%noff] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    %nbar = llvm.getelementptr %bars[%ns] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
    llvm.inline_asm has_side_effects asm_dialect = att "mbarrier.arrive.expect_tx.shared.b64 _, [$0], 16384;", "r" %nbar : (!llvm.ptr<3>) -> ()
    llvm.inline_asm has_side_effects asm_dialect = att "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];", "r,l,r,r,r" %nbuf, %tmap, %c0, %c0, %nbar : (!llvm.ptr<3>, !llvm.ptr, i64, i64, !llvm.ptr<3>) -> ()
    %s = llvm.urem %k, %c2 : i64
    %bar = llvm.getelementptr %bars[%s] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
    %round = llvm.udiv %k, %c2 : i64
    %phase = llvm.and %round, %c1 : i64
    %phase32 = llvm.trunc %phase : i64 to i32

    %off = llvm.mul %s, %c16384 : i64
    %buf = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    %addr = llvm.ptrtoint %buf : !llvm.ptr<3> to i64
    %masked = llvm.and %addr, %mask : i64
    %field = llvm.lshr %masked, %c4 : i64
    %desc = llvm.or %field, %layout : i64
    nvvm.wgmma.fence.aligned
    %a0 = llvm.extractvalue %acc[0] : !acc
    %a1 = llvm.extractvalue %acc[1] : !acc
    %a2 = llvm.extractvalue %acc[2] : !acc
    %a3 = llvm.extractvalue %acc[3] : !acc
    %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0,$1,$2,$3}, $8, $9, 1, 1, 1, 0, 0;", "=f,=f,=f,=f,0,1,2,3,l,l" %a0, %a1, %a2, %a3, %desc, %desc : (f32, f32, f32, f32, i64, i64) -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    %more = llvm.icmp "slt" %k1, %n : i64
    scf.if %more {
      %nround = llvm.udiv %k1, %c2 : i64
      %nphase = llvm.and %nround, %c1 : i64
      %nphase32 = llvm.trunc %nphase : i64 to i32
      llvm.inline_asm has_side_effects asm_dialect = att "{\0A\09.reg .pred P1;\0A\09LAB_WAIT:\0A\09mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1;\0A\09@P1 bra DONE;\0A\09bra LAB_WAIT;\0A\09DONE:\0A\09}", "r,r" %nbar, %nphase32 : (!llvm.ptr<3>, i32) -> ()
    }
    scf.yield %d : !acc
  }
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}

