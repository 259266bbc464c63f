// A generic store at a base plus bits of the thread index (the swizzled
// scratch of Triton's layout conversions) is a range: outside every ring
// the mma_async reads it needs no fence.proxy.async; reaching into one, it
// does (protocol_c5), and a barrier across the writing threads (protocol_c6).
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=unchecked=false -verify-diagnostics

!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @swizzled_store_beyond_the_ring(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>, %wg: i32) {
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
    llvm.inline_asm has_side_effects asm_dialect = att "{\0A\09.reg .pred P1;\0A\09LAB_WAIT:\0A\09mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1;\0A\09@P1 bra DONE;\0A\09bra LAB_WAIT;\0A\09DONE:\0A\09}", "r,r" %bar, %phase32 : (!llvm.ptr<3>, i32) -> ()
    %off = llvm.mul %s, %c16384 : i64
    %buf = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    %addr = llvm.ptrtoint %buf : !llvm.ptr<3> to i64
    %masked = llvm.and %addr, %mask : i64
    %field = llvm.lshr %masked, %c4 : i64
    %desc = llvm.or %field, %layout : i64
    // A generic store outside the ring, no fence.proxy.async before the read.
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %c127 = llvm.mlir.constant(127 : i32) : i32
    %c4_i32 = llvm.mlir.constant(4 : i32) : i32
    %lane = llvm.and %tid, %c127 : i32
    %swz = llvm.shl %lane, %c4_i32 : i32
    %row = llvm.xor %swz, %c4_i32 : i32
    %scratch = llvm.getelementptr %smem[32768] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
    %flag = llvm.getelementptr inbounds %scratch[%row] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
    llvm.store %i0, %flag : i32, !llvm.ptr<3>
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
llvm.func @swizzled_store_reaching_into_the_ring(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>, %wg: i32) {
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
    llvm.inline_asm has_side_effects asm_dialect = att "{\0A\09.reg .pred P1;\0A\09LAB_WAIT:\0A\09mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1;\0A\09@P1 bra DONE;\0A\09bra LAB_WAIT;\0A\09DONE:\0A\09}", "r,r" %bar, %phase32 : (!llvm.ptr<3>, i32) -> ()
    %off = llvm.mul %s, %c16384 : i64
    %buf = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    %addr = llvm.ptrtoint %buf : !llvm.ptr<3> to i64
    %masked = llvm.and %addr, %mask : i64
    %field = llvm.lshr %masked, %c4 : i64
    %desc = llvm.or %field, %layout : i64
    // A generic store outside the ring, no fence.proxy.async before the read.
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %c127 = llvm.mlir.constant(127 : i32) : i32
    %c4_i32 = llvm.mlir.constant(4 : i32) : i32
    %lane = llvm.and %tid, %c127 : i32
    %swz = llvm.shl %lane, %c4_i32 : i32
    %row = llvm.xor %swz, %c4_i32 : i32
    %scratch = llvm.getelementptr %smem[30000] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
    %flag = llvm.getelementptr inbounds %scratch[%row] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
    // expected-note @below {{shared memory written here}}
    llvm.store %i0, %flag : i32, !llvm.ptr<3>
    nvvm.wgmma.fence.aligned
    %a0 = llvm.extractvalue %acc[0] : !acc
    %a1 = llvm.extractvalue %acc[1] : !acc
    %a2 = llvm.extractvalue %acc[2] : !acc
    %a3 = llvm.extractvalue %acc[3] : !acc
    // expected-error @below {{a fence.proxy.async must separate a generic-proxy write to shared memory from this mma_async, but got none (protocol_c5)}}
    // expected-error @below {{a barrier across the writing threads must separate a generic store to the shared memory an mma_async reads from it, but got none (protocol_c6)}}
    %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0,$1,$2,$3}, $8, $9, 1, 1, 1, 0, 0;", "=f,=f,=f,=f,0,1,2,3,l,l" %a0, %a1, %a2, %a3, %desc, %desc : (f32, f32, f32, f32, i64, i64) -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    scf.yield %d : !acc
  }
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}

