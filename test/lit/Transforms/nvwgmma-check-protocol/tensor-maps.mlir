// TMA byte counts where the kernel builds its own tensor map (Triton's
// tensormap.replace of the box and element type, then cp_fenceproxy to the
// global map a load names), and the warning where nothing states them.
// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol -verify-diagnostics

llvm.mlir.global internal @map_scratch() {addr_space = 3 : i32} : !llvm.array<128 x i8>
!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @map_built_in_kernel(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %gmap: !llvm.ptr<1>, %n: i64, %out: !llvm.ptr<1>, %wg: i32) {
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
  // The kernel builds its tensor map (Triton's device-side descriptors):
  // a box of 64 x 128 f16 elements, 16384 bytes a load.
  %scratch = llvm.mlir.addressof @map_scratch : !llvm.ptr<3>
  %b0 = llvm.mlir.constant(64 : i32) : i32
  %b1 = llvm.mlir.constant(128 : i32) : i32
  llvm.inline_asm has_side_effects asm_dialect = att "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [ $0 + 0 ], 0x0, $1;", "l,r" %scratch, %b0 : (!llvm.ptr<3>, i32) -> ()
  llvm.inline_asm has_side_effects asm_dialect = att "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [ $0 + 0 ], 0x1, $1;", "l,r" %scratch, %b1 : (!llvm.ptr<3>, i32) -> ()
  llvm.inline_asm has_side_effects asm_dialect = att "tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [ $0 + 0 ], 0x6;", "l" %scratch : (!llvm.ptr<3>) -> ()
  llvm.inline_asm has_side_effects asm_dialect = att "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [ $0 + 0 ], [ $1 + 0 ], 0x80;", "l,l" %gmap, %scratch : (!llvm.ptr<1>, !llvm.ptr<3>) -> ()
  %tmap = llvm.addrspacecast %gmap : !llvm.ptr<1> to !llvm.ptr
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

llvm.mlir.global internal @map_scratch() {addr_space = 3 : i32} : !llvm.array<128 x i8>
!acc = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @expect_tx_half_the_box(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %gmap: !llvm.ptr<1>, %n: i64, %out: !llvm.ptr<1>, %wg: i32) {
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
  // The kernel builds its tensor map (Triton's device-side descriptors):
  // a box of 64 x 128 f16 elements, 16384 bytes a load.
  %scratch = llvm.mlir.addressof @map_scratch : !llvm.ptr<3>
  %b0 = llvm.mlir.constant(64 : i32) : i32
  %b1 = llvm.mlir.constant(128 : i32) : i32
  llvm.inline_asm has_side_effects asm_dialect = att "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [ $0 + 0 ], 0x0, $1;", "l,r" %scratch, %b0 : (!llvm.ptr<3>, i32) -> ()
  llvm.inline_asm has_side_effects asm_dialect = att "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [ $0 + 0 ], 0x1, $1;", "l,r" %scratch, %b1 : (!llvm.ptr<3>, i32) -> ()
  llvm.inline_asm has_side_effects asm_dialect = att "tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [ $0 + 0 ], 0x6;", "l" %scratch : (!llvm.ptr<3>) -> ()
  llvm.inline_asm has_side_effects asm_dialect = att "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [ $0 + 0 ], [ $1 + 0 ], 0x80;", "l,l" %gmap, %scratch : (!llvm.ptr<1>, !llvm.ptr<3>) -> ()
  %tmap = llvm.addrspacecast %gmap : !llvm.ptr<1> to !llvm.ptr
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) : i64 {
    %k1 = llvm.add %k, %c1 : i64
    %ns = llvm.urem %k1, %c2 : i64
    %noff = llvm.mul %ns, %c16384 : i64
    %nbuf = llvm.getelementptr %smem[%noff] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    %nbar = llvm.getelementptr %bars[%ns] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
    // expected-note@+3 {{TMA load of 16384 bytes completing on the barrier}}
    // expected-error@+1 {{'llvm.inline_asm' the expect_tx byte count must equal the bytes the TMA loads completing on this barrier bring, 16384, but got 8192 (protocol_c8)}}
    llvm.inline_asm has_side_effects asm_dialect = att "mbarrier.arrive.expect_tx.shared.b64 _, [$0], 8192;", "r" %nbar : (!llvm.ptr<3>) -> ()
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
// A map built on the host: the IR does not say its box, so the expect_tx
// count goes unchecked, and normal mode says so once for the function.
// expected-warning@+1 {{'llvm.func' every pipeline rule must be checked in this function, but got places the checker cannot relate (1 x protocol_c8); strict mode (--nvwgmma-check-protocol=strict=true) names each (protocol_unchecked)}}
llvm.func @map_from_the_host(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>, %wg: i32) {
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
// A map built on the host, and an expect_tx below what the mma_async read
// from the stage (two k-slices of 64 rows x 32 bytes: 4096 bytes): the
// phase would complete before the data, whatever the box.
llvm.func @expect_tx_below_the_reads(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>, %wg: i32) {
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
    // expected-error@+1 {{'llvm.inline_asm' the expect_tx byte count must cover the bytes the mma_async read from the stages the TMA loads on this barrier fill, at least 4096, but got 2048 (protocol_c8)}}
    llvm.inline_asm has_side_effects asm_dialect = att "mbarrier.arrive.expect_tx.shared.b64 _, [$0], 2048;", "r" %nbar : (!llvm.ptr<3>) -> ()
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
    %c2i = llvm.mlir.constant(2 : i64) : i64
    %desc2 = llvm.add %desc, %c2i : i64
    nvvm.wgmma.fence.aligned
    %a0 = llvm.extractvalue %acc[0] : !acc
    %a1 = llvm.extractvalue %acc[1] : !acc
    %a2 = llvm.extractvalue %acc[2] : !acc
    %a3 = llvm.extractvalue %acc[3] : !acc
    %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0,$1,$2,$3}, $8, $9, 1, 1, 1, 0, 0;", "=f,=f,=f,=f,0,1,2,3,l,l" %a0, %a1, %a2, %a3, %desc, %desc : (f32, f32, f32, f32, i64, i64) -> !acc
    %d0 = llvm.extractvalue %d[0] : !acc
    %d1 = llvm.extractvalue %d[1] : !acc
    %d2 = llvm.extractvalue %d[2] : !acc
    %d3 = llvm.extractvalue %d[3] : !acc
    %e = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0,$1,$2,$3}, $8, $9, 1, 1, 1, 0, 0;", "=f,=f,=f,=f,0,1,2,3,l,l" %d0, %d1, %d2, %d3, %desc2, %desc2 : (f32, f32, f32, f32, i64, i64) -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    scf.yield %e : !acc
  }
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
// A map built on the host, and an expect_tx below what the mma_async read
// from the stage (two k-slices of 64 rows x 32 bytes: 4096 bytes): the
// phase would complete before the data, whatever the box.
llvm.func @expect_tx_in_its_own_block_below_the_reads(%smem: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %tmap: !llvm.ptr, %n: i64, %out: !llvm.ptr<1>, %wg: i32, %leader: i1) {
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
    scf.if %leader {
      // expected-error@+1 {{'llvm.inline_asm' the expect_tx byte count must cover the bytes the mma_async read from the stages the TMA loads on this barrier fill, at least 4096, but got 2048 (protocol_c8)}}
      llvm.inline_asm has_side_effects asm_dialect = att "mbarrier.arrive.expect_tx.shared.b64 _, [$0], 2048;", "r" %nbar : (!llvm.ptr<3>) -> ()
    }
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
    %c2i = llvm.mlir.constant(2 : i64) : i64
    %desc2 = llvm.add %desc, %c2i : i64
    nvvm.wgmma.fence.aligned
    %a0 = llvm.extractvalue %acc[0] : !acc
    %a1 = llvm.extractvalue %acc[1] : !acc
    %a2 = llvm.extractvalue %acc[2] : !acc
    %a3 = llvm.extractvalue %acc[3] : !acc
    %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0,$1,$2,$3}, $8, $9, 1, 1, 1, 0, 0;", "=f,=f,=f,=f,0,1,2,3,l,l" %a0, %a1, %a2, %a3, %desc, %desc : (f32, f32, f32, f32, i64, i64) -> !acc
    %d0 = llvm.extractvalue %d[0] : !acc
    %d1 = llvm.extractvalue %d[1] : !acc
    %d2 = llvm.extractvalue %d[2] : !acc
    %d3 = llvm.extractvalue %d[3] : !acc
    %e = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0,$1,$2,$3}, $8, $9, 1, 1, 1, 0, 0;", "=f,=f,=f,=f,0,1,2,3,l,l" %d0, %d1, %d2, %d3, %desc2, %desc2 : (f32, f32, f32, f32, i64, i64) -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    scf.yield %e : !acc
  }
  %v = llvm.extractvalue %r[0] : !acc
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}
