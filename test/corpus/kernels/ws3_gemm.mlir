// A warp-specialised three-stage TMA ring GEMM main loop in upstream's
// nvgpu dialect: warpgroup 0's first thread produces (waits on the empty
// barrier of stage k mod 3 with the complemented round parity, so round 0
// passes, sets expect_tx and issues the TMA loads); warpgroup 1 consumes
// (waits on the full barrier with the round parity, runs the m128
// warpgroup.mma, keeps one group in flight (its waitGroup, 1 by default, and wait_group 1) and releases
// the previous stage, select(s == 0, 2, s - 1), on its empty barrier).
// Written for nvwgmma's checker corpus (Apache-2.0 WITH LLVM-exception, as
// the project).
!full = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
!mapA = !nvgpu.tensormap.descriptor<tensor = memref<128x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!mapB = !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<128x128xf32>>
!smem = memref<?xi8, #gpu.address_space<workgroup>>
!tileA = memref<128x64xf16, #gpu.address_space<workgroup>>
!tileB = memref<64x128xf16, #gpu.address_space<workgroup>>
!halfB = memref<64x64xf16, #gpu.address_space<workgroup>>

func.func @ws3(%mapA: !mapA, %mapB: !mapB, %kTiles: index, %out: memref<128x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c16384 = arith.constant 16384 : index
  %c24576 = arith.constant 24576 : index
  %c32768 = arith.constant 32768 : index
  %ticks = arith.constant 10000000 : index
  %true = arith.constant true
  %tid = gpu.thread_id x
  %wg = arith.divui %tid, %c128 : index
  %producer = arith.cmpi eq, %wg, %c0 : index
  %smem = gpu.dynamic_shared_memory : !smem
  %full = nvgpu.mbarrier.create -> !full
  %empty = nvgpu.mbarrier.create -> !full
  scf.if %producer {
    %lane = arith.remui %tid, %c128 : index
    %leader = arith.cmpi eq, %lane, %c0 : index
    scf.if %leader {
      scf.for %k = %c0 to %kTiles step %c1 {
        %s = arith.remui %k, %c3 : index
        %round = arith.divui %k, %c3 : index
        %bit = arith.remui %round, %c2 : index
        %p = arith.index_cast %bit : index to i1
        %eparity = arith.xori %p, %true : i1
        nvgpu.mbarrier.try_wait.parity %empty[%s], %eparity, %ticks : !full
        %off = arith.muli %s, %c32768 : index
        %offB = arith.addi %off, %c16384 : index
        %offB1 = arith.addi %off, %c24576 : index
        %a = memref.view %smem[%off][] : !smem to !tileA
        %b0 = memref.view %smem[%offB][] : !smem to !halfB
        %b1 = memref.view %smem[%offB1][] : !smem to !halfB
        %kk = arith.muli %k, %c64 : index
        nvgpu.mbarrier.arrive.expect_tx %full[%s], %c32768 : !full
        nvgpu.tma.async.load %mapA[%kk, %c0], %full[%s] to %a : !mapA, !full -> !tileA
        nvgpu.tma.async.load %mapB[%kk, %c0], %full[%s] to %b0 : !mapB, !full -> !halfB
        nvgpu.tma.async.load %mapB[%kk, %c64], %full[%s] to %b1 : !mapB, !full -> !halfB
      }
    }
  } else {
    %init = nvgpu.warpgroup.mma.init.accumulator -> !acc
    %res = scf.for %k = %c0 to %kTiles step %c1 iter_args(%acc = %init) -> (!acc) {
      %s = arith.remui %k, %c3 : index
      %round = arith.divui %k, %c3 : index
      %bit = arith.remui %round, %c2 : index
      %parity = arith.index_cast %bit : index to i1
      nvgpu.mbarrier.try_wait.parity %full[%s], %parity, %ticks : !full
      %off = arith.muli %s, %c32768 : index
      %offB = arith.addi %off, %c16384 : index
      %a = memref.view %smem[%off][] : !smem to !tileA
      %b = memref.view %smem[%offB][] : !smem to !tileB
      %dA = nvgpu.warpgroup.generate.descriptor %a, %mapA : !tileA, !mapA -> !nvgpu.warpgroup.descriptor<tensor = memref<128x64xf16, 3>>
      %dB = nvgpu.warpgroup.generate.descriptor %b, %mapB : !tileB, !mapB -> !nvgpu.warpgroup.descriptor<tensor = memref<64x128xf16, 3>>
      %d = nvgpu.warpgroup.mma %dA, %dB, %acc {transposeB} : <tensor = memref<128x64xf16, 3>>, <tensor = memref<64x128xf16, 3>>, !acc -> !acc
      nvvm.wgmma.wait.group.sync.aligned 1
      %notFirst = arith.cmpi ne, %k, %c0 : index
      scf.if %notFirst {
        %atZero = arith.cmpi eq, %s, %c0 : index
        %sMinus1 = arith.subi %s, %c1 : index
        %prev = arith.select %atZero, %c2, %sMinus1 : index
        %t = nvgpu.mbarrier.arrive %empty[%prev] : !full -> !nvgpu.mbarrier.token
      }
      scf.yield %d : !acc
    }
    nvvm.wgmma.wait.group.sync.aligned 0
    nvgpu.warpgroup.mma.store %res, %out : !acc to memref<128x128xf32>
  }
  return
}
