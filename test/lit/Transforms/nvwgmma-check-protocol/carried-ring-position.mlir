// A ring position carried from a tile loop into its k loop and back, taken
// mod S signed (Gluon's and Triton's persistent kernels: `it % S`): never
// negative, so it names the stage, and a read of it needs its full wait.
// RUN: nvwgmma-opt %s --nvwgmma-check-protocol=unchecked=false -verify-diagnostics

!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @carried_ring_position_read_unwaited(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %tiles: i32, %k_tiles: i32, %out: !llvm.ptr<1>) {
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %c1 = llvm.mlir.constant(1 : i32) : i32
  %c2 = llvm.mlir.constant(2 : i32) : i32
  %c4 = llvm.mlir.constant(4 : i64) : i64
  %c16384 = llvm.mlir.constant(16384 : i32) : i32
  %mask = llvm.mlir.constant(262143 : i64) : i64
  %layout = llvm.mlir.constant(4611686293305294848 : i64) : i64
  %zero = llvm.mlir.zero : !acc
  llvm.br ^tile(%c0, %c0 : i32, i32)
^tile(%t: i32, %it: i32):
  %more = llvm.icmp "slt" %t, %tiles : i32
  llvm.cond_br %more, ^k_start, ^done
^k_start:
  llvm.br ^k(%c0, %it : i32, i32)
^k(%k: i32, %pos: i32):
  %k_more = llvm.icmp "slt" %k, %k_tiles : i32
  llvm.cond_br %k_more, ^body, ^tile_end
^body:
  %s = llvm.srem %pos, %c2 : i32
  %bar = llvm.getelementptr %bars[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
  %off = llvm.mul %s, %c16384 : i32
  %buf = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
  llvm.inline_asm has_side_effects asm_dialect = att "mbarrier.arrive.expect_tx.shared.b64 _, [$0], 16384;", "r" %bar : (!llvm.ptr<3>) -> ()
  llvm.inline_asm has_side_effects asm_dialect = att "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];", "r,l,r,r,r" %buf, %tmap, %c0, %k, %bar : (!llvm.ptr<3>, !llvm.ptr, i32, i32, !llvm.ptr<3>) -> ()
  %addr = llvm.ptrtoint %buf : !llvm.ptr<3> to i64
  %masked = llvm.and %addr, %mask : i64
  %field = llvm.lshr %masked, %c4 : i64
  %desc = llvm.or %field, %layout : i64
  nvvm.wgmma.fence.aligned
  %a0 = llvm.extractvalue %zero[0] : !acc
  %a1 = llvm.extractvalue %zero[1] : !acc
  %a2 = llvm.extractvalue %zero[2] : !acc
  %a3 = llvm.extractvalue %zero[3] : !acc
  // expected-error @below {{an mma_async must read stage k mod 2 only after a wait on that stage's full barrier in the same round, but got no such wait (protocol_c6)}}
  // expected-note @-11 {{the stage is filled by this TMA load, which completes on the full barrier}}
  %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0,$1,$2,$3}, $8, $9, 1, 1, 1, 0, 0;", "=f,=f,=f,=f,0,1,2,3,l,l" %a0, %a1, %a2, %a3, %desc, %desc : (f32, f32, f32, f32, i64, i64) -> !acc
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  %v = llvm.extractvalue %d[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  %k1 = llvm.add %k, %c1 : i32
  %pos1 = llvm.add %pos, %c1 : i32
  llvm.br ^k(%k1, %pos1 : i32, i32)
^tile_end:
  %t1 = llvm.add %t, %c1 : i32
  llvm.br ^tile(%t1, %pos : i32, i32)
^done:
  llvm.return
}
