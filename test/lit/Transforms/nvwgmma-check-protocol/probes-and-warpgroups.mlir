// Waits as front ends other than ours write them: a probe (a non-blocking
// nvvm.mbarrier.try_wait returning i1) guards a blocking wait (CuTe DSL),
// and one warpgroup waits for a stage that a CTA barrier then hands to the
// others (JAX Mosaic GPU) -- a branch on the thread index, not on a value
// all threads share. A correct form, then the seeded bug, each.
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=unchecked=false -verify-diagnostics

!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @probe_then_wait(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>, %wg: i32) {
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
    // A probe (non-blocking try_wait) and a blocking wait where it failed:
    // on the path that skips the wait, the probe succeeded.
    %ok = nvvm.mbarrier.try_wait %bar, %phase32 : !llvm.ptr<3>, i32 -> i1
    %notok = llvm.xor %ok, %true : i1
    scf.if %notok {
      llvm.inline_asm has_side_effects asm_dialect = att "{\0A\09.reg .pred P1;\0A\09LAB_WAIT:\0A\09mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1;\0A\09@P1 bra DONE;\0A\09bra LAB_WAIT;\0A\09DONE:\0A\09}", "r,r" %bar, %phase32 : (!llvm.ptr<3>, i32) -> ()
    }
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
    scf.yield %d : !acc
  }
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @probe_without_wait(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>, %wg: i32) {
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
    // The probe's result is ignored: nothing waited.
    %ok = nvvm.mbarrier.try_wait %bar, %phase32 : !llvm.ptr<3>, i32 -> i1
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
    scf.yield %d : !acc
  }
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @probe_wrong_branch(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>, %wg: i32) {
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
    // The blocking wait sits where the probe succeeded: the other path reads
    // the stage without a wait.
    %ok = nvvm.mbarrier.try_wait %bar, %phase32 : !llvm.ptr<3>, i32 -> i1
    scf.if %ok {
      llvm.inline_asm has_side_effects asm_dialect = att "{\0A\09.reg .pred P1;\0A\09LAB_WAIT:\0A\09mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1;\0A\09@P1 bra DONE;\0A\09bra LAB_WAIT;\0A\09DONE:\0A\09}", "r,r" %bar, %phase32 : (!llvm.ptr<3>, i32) -> ()
    }
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
    scf.yield %d : !acc
  }
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @one_warpgroup_waits_then_barrier(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>, %wg: i32) {
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
    // Warpgroup 0 waits; a CTA barrier hands what it saw to every thread.
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %c128 = llvm.mlir.constant(128 : i32) : i32
    %wgi = llvm.udiv %tid, %c128 : i32
    %first = llvm.icmp "eq" %wgi, %i0 : i32
    scf.if %first {
      llvm.inline_asm has_side_effects asm_dialect = att "{\0A\09.reg .pred P1;\0A\09LAB_WAIT:\0A\09mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1;\0A\09@P1 bra DONE;\0A\09bra LAB_WAIT;\0A\09DONE:\0A\09}", "r,r" %bar, %phase32 : (!llvm.ptr<3>, i32) -> ()
    }
    nvvm.barrier0
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
    scf.yield %d : !acc
  }
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @path_waits_then_barrier(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>, %wg: i32) {
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
    // A branch on a value every thread shares: a path without the wait, which
    // no barrier makes up for.
    %first = llvm.icmp "eq" %wg, %i0 : i32
    scf.if %first {
      llvm.inline_asm has_side_effects asm_dialect = att "{\0A\09.reg .pred P1;\0A\09LAB_WAIT:\0A\09mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1;\0A\09@P1 bra DONE;\0A\09bra LAB_WAIT;\0A\09DONE:\0A\09}", "r,r" %bar, %phase32 : (!llvm.ptr<3>, i32) -> ()
    }
    nvvm.barrier0
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
    scf.yield %d : !acc
  }
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @one_warpgroup_waits_no_barrier(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>, %wg: i32) {
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
    // Warpgroup 0 waits, the others read the stage without a wait.
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %c128 = llvm.mlir.constant(128 : i32) : i32
    %wgi = llvm.udiv %tid, %c128 : i32
    %first = llvm.icmp "eq" %wgi, %i0 : i32
    scf.if %first {
      llvm.inline_asm has_side_effects asm_dialect = att "{\0A\09.reg .pred P1;\0A\09LAB_WAIT:\0A\09mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1;\0A\09@P1 bra DONE;\0A\09bra LAB_WAIT;\0A\09DONE:\0A\09}", "r,r" %bar, %phase32 : (!llvm.ptr<3>, i32) -> ()
    }
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
    scf.yield %d : !acc
  }
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}

