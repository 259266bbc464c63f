// Read and release indices of one ring that enter their loop from earlier
// loops (CUTLASS's and CuTe DSL's persistent GEMMs: a tile loop hands the
// pipeline state to a prologue of min(k_tiles, 1) reads, then to the main
// loop that releases one stage behind the one it reads). Their lag is
// inductive over the tile loop, and the prologue's trip count is 1 wherever
// the main loop runs; the release is then related to the pending reads.
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=strict=true -verify-diagnostics

!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @release_one_behind_after_a_prologue(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: i32, %tiles: i32, %producer: i1, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %last = arith.constant 2 : i32
  %stage_bytes = arith.constant 8192 : i32
  %stage_units = arith.constant 512 : i32
  %full = llvm.getelementptr %smem[24576] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %empty = llvm.getelementptr %full[3] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %desc0 = llvm.or %field, %layout : i64
  %zero = llvm.mlir.zero : !acc
  %total = arith.muli %k_tiles, %tiles : i32
  cf.cond_br %producer, ^produce(%c0 : i32), ^consume
^produce(%k: i32):
  %more = arith.cmpi slt, %k, %total : i32
  cf.cond_br %more, ^fill, ^exit
^fill:
  %s = arith.remui %k, %c3 : i32
  %round = arith.divui %k, %c3 : i32
  %par = arith.andi %round, %c1 : i32
  %epar = arith.xori %par, %c1 : i32
  %eb = llvm.getelementptr %empty[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
  nvvm.mbarrier.try_wait.parity %eb, %epar, %c0 : !llvm.ptr<3>, i32, i32
  %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
  %tx = arith.constant 8192 : i32
  %t = nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32 -> i64
  %off = arith.muli %s, %stage_bytes : i32
  %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %fb, box[%c0, %k] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
  %k1 = arith.addi %k, %c1 : i32
  cf.br ^produce(%k1 : i32)
^consume:
  // CUTLASS-style: min(k_tiles, 1) stages read before the main loop, which
  // then releases one stage behind the one it reads.
  %few = arith.cmpi slt, %k_tiles, %c1 : i32
  %pro = arith.select %few, %k_tiles, %c1 : i32
  cf.br ^tile(%c0, %c0, %c0, %c0 : i32, i32, i32, i32)
^tile(%tt: i32, %r: i32, %p: i32, %q: i32):
  %go = arith.cmpi slt, %tt, %tiles : i32
  cf.cond_br %go, ^prologue(%c0, %r, %p, %zero : i32, i32, i32, !acc), ^exit
^prologue(%i: i32, %r1: i32, %p1: i32, %acc1: !acc):
  %inpro = arith.cmpi slt, %i, %pro : i32
  cf.cond_br %inpro, ^prologue_body, ^main(%pro, %q, %r1, %p1, %acc1 : i32, i32, i32, i32, !acc)
^prologue_body:
  %fb1 = llvm.getelementptr %full[%r1] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
  nvvm.mbarrier.try_wait.parity %fb1, %p1, %c0 : !llvm.ptr<3>, i32, i32
  %u1 = arith.muli %r1, %stage_units : i32
  %u1w = arith.extui %u1 : i32 to i64
  %d1 = llvm.add %desc0, %u1w : i64
  nvwgmma.fence
  %acc1n = nvwgmma.mma_async %d1, %d1, %acc1, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  %r1p = arith.addi %r1, %c1 : i32
  %w1 = arith.cmpi eq, %r1p, %c3 : i32
  %r1n = arith.select %w1, %c0, %r1p : i32
  %p1f = arith.xori %p1, %c1 : i32
  %p1n = arith.select %w1, %p1f, %p1 : i32
  %in = arith.addi %i, %c1 : i32
  cf.br ^prologue(%in, %r1n, %p1n, %acc1n : i32, i32, i32, !acc)
^main(%j: i32, %q2: i32, %r2: i32, %p2: i32, %acc2: !acc):
  %inmain = arith.cmpi slt, %j, %k_tiles : i32
  cf.cond_br %inmain, ^main_body, ^drain
^main_body:
  %fb2 = llvm.getelementptr %full[%r2] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
  nvvm.mbarrier.try_wait.parity %fb2, %p2, %c0 : !llvm.ptr<3>, i32, i32
  %u2 = arith.muli %r2, %stage_units : i32
  %u2w = arith.extui %u2 : i32 to i64
  %d2 = llvm.add %desc0, %u2w : i64
  nvwgmma.fence
  %acc2n = nvwgmma.mma_async %d2, %d2, %acc2, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  nvwgmma.wait_group 1
  %eb2 = llvm.getelementptr %empty[%q2] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
  %a2 = nvvm.mbarrier.arrive %eb2 : !llvm.ptr<3> -> i64
  %q2p = arith.addi %q2, %c1 : i32
  %wq = arith.cmpi eq, %q2p, %c3 : i32
  %q2n = arith.select %wq, %c0, %q2p : i32
  %r2p = arith.addi %r2, %c1 : i32
  %w2 = arith.cmpi eq, %r2p, %c3 : i32
  %r2n = arith.select %w2, %c0, %r2p : i32
  %p2f = arith.xori %p2, %c1 : i32
  %p2n = arith.select %w2, %p2f, %p2 : i32
  %jn = arith.addi %j, %c1 : i32
  cf.br ^main(%jn, %q2n, %r2n, %p2n, %acc2n : i32, i32, i32, i32, !acc)
^drain:
  nvwgmma.wait_group 0
  %v = llvm.extractvalue %acc2[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  cf.br ^release(%c0, %q2 : i32, i32)
^release(%m: i32, %q3: i32):
  %inrel = arith.cmpi slt, %m, %pro : i32
  cf.cond_br %inrel, ^release_body, ^tile_end
^release_body:
  %eb3 = llvm.getelementptr %empty[%q3] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
  %a3 = nvvm.mbarrier.arrive %eb3 : !llvm.ptr<3> -> i64
  %q3p = arith.addi %q3, %c1 : i32
  %wq3 = arith.cmpi eq, %q3p, %c3 : i32
  %q3n = arith.select %wq3, %c0, %q3p : i32
  %mn = arith.addi %m, %c1 : i32
  cf.br ^release(%mn, %q3n : i32, i32)
^tile_end:
  %ttn = arith.addi %tt, %c1 : i32
  cf.br ^tile(%ttn, %r2, %p2, %q3 : i32, i32, i32, i32)
^exit:
  return
}

// -----

// The same with wait_group 2 in the main loop: the released stage's group may be pending.
!acc = !llvm.struct<(f32, f32, f32, f32)>
func.func @release_one_behind_wait_group_2(%smem: !llvm.ptr<3>, %tmA: !llvm.ptr, %k_tiles: i32, %tiles: i32, %producer: i1, %out: !llvm.ptr<1>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %last = arith.constant 2 : i32
  %stage_bytes = arith.constant 8192 : i32
  %stage_units = arith.constant 512 : i32
  %full = llvm.getelementptr %smem[24576] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %empty = llvm.getelementptr %full[3] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %addr = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %c4_i64 = llvm.mlir.constant(4 : i64) : i64
  %field = llvm.lshr %addr, %c4_i64 : i64
  %layout = llvm.mlir.constant(4611686293305360384 : i64) : i64
  %desc0 = llvm.or %field, %layout : i64
  %zero = llvm.mlir.zero : !acc
  %total = arith.muli %k_tiles, %tiles : i32
  cf.cond_br %producer, ^produce(%c0 : i32), ^consume
^produce(%k: i32):
  %more = arith.cmpi slt, %k, %total : i32
  cf.cond_br %more, ^fill, ^exit
^fill:
  %s = arith.remui %k, %c3 : i32
  %round = arith.divui %k, %c3 : i32
  %par = arith.andi %round, %c1 : i32
  %epar = arith.xori %par, %c1 : i32
  %eb = llvm.getelementptr %empty[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
  nvvm.mbarrier.try_wait.parity %eb, %epar, %c0 : !llvm.ptr<3>, i32, i32
  %fb = llvm.getelementptr %full[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
  %tx = arith.constant 8192 : i32
  %t = nvvm.mbarrier.arrive.expect_tx %fb, %tx : !llvm.ptr<3>, i32 -> i64
  %off = arith.muli %s, %stage_bytes : i32
  %dst = llvm.getelementptr %smem[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmA, %fb, box[%c0, %k] {isCTAOnly = true, nvwgmma.tx_bytes = 8192 : i64} : !llvm.ptr<3>, !llvm.ptr
  %k1 = arith.addi %k, %c1 : i32
  cf.br ^produce(%k1 : i32)
^consume:
  // CUTLASS-style: min(k_tiles, 1) stages read before the main loop, which
  // then releases one stage behind the one it reads.
  %few = arith.cmpi slt, %k_tiles, %c1 : i32
  %pro = arith.select %few, %k_tiles, %c1 : i32
  cf.br ^tile(%c0, %c0, %c0, %c0 : i32, i32, i32, i32)
^tile(%tt: i32, %r: i32, %p: i32, %q: i32):
  %go = arith.cmpi slt, %tt, %tiles : i32
  cf.cond_br %go, ^prologue(%c0, %r, %p, %zero : i32, i32, i32, !acc), ^exit
^prologue(%i: i32, %r1: i32, %p1: i32, %acc1: !acc):
  %inpro = arith.cmpi slt, %i, %pro : i32
  cf.cond_br %inpro, ^prologue_body, ^main(%pro, %q, %r1, %p1, %acc1 : i32, i32, i32, i32, !acc)
^prologue_body:
  %fb1 = llvm.getelementptr %full[%r1] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
  nvvm.mbarrier.try_wait.parity %fb1, %p1, %c0 : !llvm.ptr<3>, i32, i32
  %u1 = arith.muli %r1, %stage_units : i32
  %u1w = arith.extui %u1 : i32 to i64
  %d1 = llvm.add %desc0, %u1w : i64
  nvwgmma.fence
  %acc1n = nvwgmma.mma_async %d1, %d1, %acc1, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  %r1p = arith.addi %r1, %c1 : i32
  %w1 = arith.cmpi eq, %r1p, %c3 : i32
  %r1n = arith.select %w1, %c0, %r1p : i32
  %p1f = arith.xori %p1, %c1 : i32
  %p1n = arith.select %w1, %p1f, %p1 : i32
  %in = arith.addi %i, %c1 : i32
  cf.br ^prologue(%in, %r1n, %p1n, %acc1n : i32, i32, i32, !acc)
^main(%j: i32, %q2: i32, %r2: i32, %p2: i32, %acc2: !acc):
  %inmain = arith.cmpi slt, %j, %k_tiles : i32
  cf.cond_br %inmain, ^main_body, ^drain
^main_body:
  %fb2 = llvm.getelementptr %full[%r2] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
  nvvm.mbarrier.try_wait.parity %fb2, %p2, %c0 : !llvm.ptr<3>, i32, i32
  %u2 = arith.muli %r2, %stage_units : i32
  %u2w = arith.extui %u2 : i32 to i64
  %d2 = llvm.add %desc0, %u2w : i64
  nvwgmma.fence
  // expected-note @+1 {{mma_async reading the stage issued here}}
  %acc2n = nvwgmma.mma_async %d2, %d2, %acc2, #nvwgmma.shape<m = 64, n = 8, k = 16>,
         D [f32, one], A [f16, one, row], B [f16, one, col] : i64, !acc -> !acc
  nvwgmma.commit_group
  // expected-note @+1 {{the last wait_group executed before it}}
  nvwgmma.wait_group 2
  %eb2 = llvm.getelementptr %empty[%q2] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
  // expected-error @+1 {{a stage must be released only after the wgmma groups reading it completed (wait_group 1 or lower first), but got stage k mod 3 released while that group may be pending (protocol_c7)}}
  %a2 = nvvm.mbarrier.arrive %eb2 : !llvm.ptr<3> -> i64
  %q2p = arith.addi %q2, %c1 : i32
  %wq = arith.cmpi eq, %q2p, %c3 : i32
  %q2n = arith.select %wq, %c0, %q2p : i32
  %r2p = arith.addi %r2, %c1 : i32
  %w2 = arith.cmpi eq, %r2p, %c3 : i32
  %r2n = arith.select %w2, %c0, %r2p : i32
  %p2f = arith.xori %p2, %c1 : i32
  %p2n = arith.select %w2, %p2f, %p2 : i32
  %jn = arith.addi %j, %c1 : i32
  cf.br ^main(%jn, %q2n, %r2n, %p2n, %acc2n : i32, i32, i32, i32, !acc)
^drain:
  nvwgmma.wait_group 0
  %v = llvm.extractvalue %acc2[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  cf.br ^release(%c0, %q2 : i32, i32)
^release(%m: i32, %q3: i32):
  %inrel = arith.cmpi slt, %m, %pro : i32
  cf.cond_br %inrel, ^release_body, ^tile_end
^release_body:
  %eb3 = llvm.getelementptr %empty[%q3] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
  %a3 = nvvm.mbarrier.arrive %eb3 : !llvm.ptr<3> -> i64
  %q3p = arith.addi %q3, %c1 : i32
  %wq3 = arith.cmpi eq, %q3p, %c3 : i32
  %q3n = arith.select %wq3, %c0, %q3p : i32
  %mn = arith.addi %m, %c1 : i32
  cf.br ^release(%mn, %q3n : i32, i32)
^tile_end:
  %ttn = arith.addi %tt, %c1 : i32
  cf.br ^tile(%ttn, %r2, %p2, %q3 : i32, i32, i32, i32)
^exit:
  return
}
