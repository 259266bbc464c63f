// The checker on inline PTX, as upstream's convert-nvvm-to-llvm and Triton
// emit it: mbarrier.arrive.expect_tx with a literal count, a
// cp.async.bulk.tensor into the ring, mbarrier.try_wait.parity in a retry
// loop, wgmma.mma_async with tied accumulator registers, and Triton's
// wait_group that hands the accumulator registers back. A correct two-stage
// ring, then one seeded bug per case.
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=unchecked=false -verify-diagnostics

!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @asm_valid(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c2 = llvm.mlir.constant(2 : i64) : i64
  %c4 = llvm.mlir.constant(4 : i64) : i64
  %c16384 = llvm.mlir.constant(16384 : i64) : i64
  %mask = llvm.mlir.constant(262143 : i64) : i64
  %layout = llvm.mlir.constant(4611686293305294848 : i64) : i64
  %zero = llvm.mlir.zero : !acc
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) : i64 {
    // producer: fill stage (k + 1) mod 2 for the next iteration
    %k1 = llvm.add %k, %c1 : i64
    %ns = llvm.urem %k1, %c2 : i64
    %noff = llvm.mul %ns, %c16384 : i64
    %nbuf = llvm.getelementptr %smem[%noff] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    %nbar = llvm.getelementptr %bars[%ns] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
    llvm.inline_asm has_side_effects asm_dialect = att "mbarrier.arrive.expect_tx.shared.b64 _, [$0], 16384;", "r" %nbar : (!llvm.ptr<3>) -> ()
    llvm.inline_asm has_side_effects asm_dialect = att "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];", "r,l,r,r,r" %nbuf, %tmap, %c0, %c0, %nbar : (!llvm.ptr<3>, !llvm.ptr, i64, i64, !llvm.ptr<3>) -> ()
    // consumer: wait for stage k mod 2, then read it
    %s = llvm.urem %k, %c2 : i64
    %bar = llvm.getelementptr %bars[%s] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
    %round = llvm.udiv %k, %c2 : i64
    %phase = llvm.and %round, %c1 : i64
    %phase32 = llvm.trunc %phase : i64 to i32
    llvm.inline_asm has_side_effects asm_dialect = att "{\0A\09.reg .pred P1;\0A\09LAB_WAIT:\0A\09mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1;\0A\09@P1 bra DONE;\0A\09bra LAB_WAIT;\0A\09DONE:\0A\09}", "r,r" %bar, %phase32 : (!llvm.ptr<3>, i32) -> ()
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
    %d0 = llvm.extractvalue %d[0] : !acc
    %d1 = llvm.extractvalue %d[1] : !acc
    %d2 = llvm.extractvalue %d[2] : !acc
    %d3 = llvm.extractvalue %d[3] : !acc
    %w = llvm.inline_asm has_side_effects asm_dialect = att "// wait for regs: $0,$1,$2,$3\0A\09wgmma.wait_group.sync.aligned 0;", "=f,=f,=f,=f,0,1,2,3" %d0, %d1, %d2, %d3 : (f32, f32, f32, f32) -> !acc
    scf.yield %w : !acc
  }
  nvvm.wgmma.wait.group.sync.aligned 0
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @asm_no_full_wait(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c2 = llvm.mlir.constant(2 : i64) : i64
  %c4 = llvm.mlir.constant(4 : i64) : i64
  %c16384 = llvm.mlir.constant(16384 : i64) : i64
  %mask = llvm.mlir.constant(262143 : i64) : i64
  %layout = llvm.mlir.constant(4611686293305294848 : i64) : i64
  %zero = llvm.mlir.zero : !acc
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) : i64 {
    // producer: fill stage (k + 1) mod 2 for the next iteration
    %k1 = llvm.add %k, %c1 : i64
    %ns = llvm.urem %k1, %c2 : i64
    %noff = llvm.mul %ns, %c16384 : i64
    %nbuf = llvm.getelementptr %smem[%noff] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    %nbar = llvm.getelementptr %bars[%ns] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
    llvm.inline_asm has_side_effects asm_dialect = att "mbarrier.arrive.expect_tx.shared.b64 _, [$0], 16384;", "r" %nbar : (!llvm.ptr<3>) -> ()
    // expected-note @+1 {{the stage is filled by this TMA load, which completes on the full barrier}}
    llvm.inline_asm has_side_effects asm_dialect = att "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];", "r,l,r,r,r" %nbuf, %tmap, %c0, %c0, %nbar : (!llvm.ptr<3>, !llvm.ptr, i64, i64, !llvm.ptr<3>) -> ()
    // consumer: wait for stage k mod 2, then read it
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
    // expected-error @+1 {{an mma_async must read stage k mod 2 only after a wait on that stage's full barrier in the same round, but got no such wait (protocol_c6)}}
    %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0,$1,$2,$3}, $8, $9, 1, 1, 1, 0, 0;", "=f,=f,=f,=f,0,1,2,3,l,l" %a0, %a1, %a2, %a3, %desc, %desc : (f32, f32, f32, f32, i64, i64) -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    %d0 = llvm.extractvalue %d[0] : !acc
    %d1 = llvm.extractvalue %d[1] : !acc
    %d2 = llvm.extractvalue %d[2] : !acc
    %d3 = llvm.extractvalue %d[3] : !acc
    %w = llvm.inline_asm has_side_effects asm_dialect = att "// wait for regs: $0,$1,$2,$3\0A\09wgmma.wait_group.sync.aligned 0;", "=f,=f,=f,=f,0,1,2,3" %d0, %d1, %d2, %d3 : (f32, f32, f32, f32) -> !acc
    scf.yield %w : !acc
  }
  nvvm.wgmma.wait.group.sync.aligned 0
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @asm_wait_group_1(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c2 = llvm.mlir.constant(2 : i64) : i64
  %c4 = llvm.mlir.constant(4 : i64) : i64
  %c16384 = llvm.mlir.constant(16384 : i64) : i64
  %mask = llvm.mlir.constant(262143 : i64) : i64
  %layout = llvm.mlir.constant(4611686293305294848 : i64) : i64
  %zero = llvm.mlir.zero : !acc
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) : i64 {
    // producer: fill stage (k + 1) mod 2 for the next iteration
    %k1 = llvm.add %k, %c1 : i64
    %ns = llvm.urem %k1, %c2 : i64
    %noff = llvm.mul %ns, %c16384 : i64
    %nbuf = llvm.getelementptr %smem[%noff] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    %nbar = llvm.getelementptr %bars[%ns] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
    llvm.inline_asm has_side_effects asm_dialect = att "mbarrier.arrive.expect_tx.shared.b64 _, [$0], 16384;", "r" %nbar : (!llvm.ptr<3>) -> ()
    // expected-error @+1 {{a stage must be overwritten only after the wgmma groups reading it completed (wait_group 0 or lower first), but got stage (k + 1) mod 2 overwritten while that group may be pending (protocol_c7)}}
    llvm.inline_asm has_side_effects asm_dialect = att "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];", "r,l,r,r,r" %nbuf, %tmap, %c0, %c0, %nbar : (!llvm.ptr<3>, !llvm.ptr, i64, i64, !llvm.ptr<3>) -> ()
    // consumer: wait for stage k mod 2, then read it
    %s = llvm.urem %k, %c2 : i64
    %bar = llvm.getelementptr %bars[%s] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
    %round = llvm.udiv %k, %c2 : i64
    %phase = llvm.and %round, %c1 : i64
    %phase32 = llvm.trunc %phase : i64 to i32
    llvm.inline_asm has_side_effects asm_dialect = att "{\0A\09.reg .pred P1;\0A\09LAB_WAIT:\0A\09mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1;\0A\09@P1 bra DONE;\0A\09bra LAB_WAIT;\0A\09DONE:\0A\09}", "r,r" %bar, %phase32 : (!llvm.ptr<3>, i32) -> ()
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
    // expected-note @+1 {{mma_async reading the stage issued here}}
    %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0,$1,$2,$3}, $8, $9, 1, 1, 1, 0, 0;", "=f,=f,=f,=f,0,1,2,3,l,l" %a0, %a1, %a2, %a3, %desc, %desc : (f32, f32, f32, f32, i64, i64) -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    %d0 = llvm.extractvalue %d[0] : !acc
    %d1 = llvm.extractvalue %d[1] : !acc
    %d2 = llvm.extractvalue %d[2] : !acc
    %d3 = llvm.extractvalue %d[3] : !acc
    // expected-note @+1 {{the last wait_group executed before it}}
    %w = llvm.inline_asm has_side_effects asm_dialect = att "// wait for regs: $0,$1,$2,$3\0A\09wgmma.wait_group.sync.aligned 1;", "=f,=f,=f,=f,0,1,2,3" %d0, %d1, %d2, %d3 : (f32, f32, f32, f32) -> !acc
    scf.yield %w : !acc
  }
  nvvm.wgmma.wait.group.sync.aligned 0
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @asm_flipped_parity(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c2 = llvm.mlir.constant(2 : i64) : i64
  %c4 = llvm.mlir.constant(4 : i64) : i64
  %c16384 = llvm.mlir.constant(16384 : i64) : i64
  %mask = llvm.mlir.constant(262143 : i64) : i64
  %layout = llvm.mlir.constant(4611686293305294848 : i64) : i64
  %zero = llvm.mlir.zero : !acc
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) : i64 {
    // producer: fill stage (k + 1) mod 2 for the next iteration
    %k1 = llvm.add %k, %c1 : i64
    %ns = llvm.urem %k1, %c2 : i64
    %noff = llvm.mul %ns, %c16384 : i64
    %nbuf = llvm.getelementptr %smem[%noff] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    %nbar = llvm.getelementptr %bars[%ns] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
    llvm.inline_asm has_side_effects asm_dialect = att "mbarrier.arrive.expect_tx.shared.b64 _, [$0], 16384;", "r" %nbar : (!llvm.ptr<3>) -> ()
    llvm.inline_asm has_side_effects asm_dialect = att "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];", "r,l,r,r,r" %nbuf, %tmap, %c0, %c0, %nbar : (!llvm.ptr<3>, !llvm.ptr, i64, i64, !llvm.ptr<3>) -> ()
    // consumer: wait for stage k mod 2, then read it
    %s = llvm.urem %k, %c2 : i64
    %bar = llvm.getelementptr %bars[%s] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
    %round = llvm.udiv %k, %c2 : i64
    %phase = llvm.and %round, %c1 : i64
    %phase32 = llvm.trunc %phase : i64 to i32
    %one32 = llvm.mlir.constant(1 : i32) : i32
    %flip32 = llvm.xor %phase32, %one32 : i32
    // expected-error @+1 {{a wait for a filled stage must use the round's parity (k / 2) & 1, but got its complement, which passes in the first round before the stage is filled (protocol_c9)}}
    llvm.inline_asm has_side_effects asm_dialect = att "{\0A\09.reg .pred P1;\0A\09LAB_WAIT:\0A\09mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1;\0A\09@P1 bra DONE;\0A\09bra LAB_WAIT;\0A\09DONE:\0A\09}", "r,r" %bar, %flip32 : (!llvm.ptr<3>, i32) -> ()
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
    %d0 = llvm.extractvalue %d[0] : !acc
    %d1 = llvm.extractvalue %d[1] : !acc
    %d2 = llvm.extractvalue %d[2] : !acc
    %d3 = llvm.extractvalue %d[3] : !acc
    %w = llvm.inline_asm has_side_effects asm_dialect = att "// wait for regs: $0,$1,$2,$3\0A\09wgmma.wait_group.sync.aligned 0;", "=f,=f,=f,=f,0,1,2,3" %d0, %d1, %d2, %d3 : (f32, f32, f32, f32) -> !acc
    scf.yield %w : !acc
  }
  nvvm.wgmma.wait.group.sync.aligned 0
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}

// -----

// Strict mode names every protocol instruction in inline asm the checker
// does not read, once, with the reason.
// RUN: not nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=strict=true 2>&1 | FileCheck %s --check-prefix=STRICT
// STRICT: error: 'llvm.inline_asm' every wgmma, mbarrier and TMA instruction must be one the checker reads, but got inline asm 'mbarrier.pending_count.b64' it does not, so the rules cannot see it (protocol_strict)
llvm.func @asm_unrecognised(%bar: !llvm.ptr<3>) {
  %n = llvm.inline_asm has_side_effects asm_dialect = att "mbarrier.pending_count.b64 $0, $1;", "=r,l" %bar : (!llvm.ptr<3>) -> i32
  llvm.return
}
