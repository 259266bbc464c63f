// A two-stage TMA ring GEMM main loop (128 x 128 tile, K step 64, f16 ->
// f32) in upstream's nvgpu dialect: the producer thread fills stage
// (k + 1) mod 2 while the warpgroup waits on stage k mod 2's full barrier
// with parity (k / 2) mod 2 and multiplies it with an m128 warpgroup.mma
// (two m64n128k16 x 4 wgmma); wait_group 0 ends each iteration, so the next
// fill may overwrite the stage just read. Written for nvwgmma's checker
// corpus (Apache-2.0 WITH LLVM-exception, as the project); it follows the
// structure of upstream MLIR's NVGPU examples, not their text.
!barriers = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
!mapA = !nvgpu.tensormap.descriptor<tensor = memref<128x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!mapB = !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<128x128xf32>>
!smem = memref<?xi8, #gpu.address_space<workgroup>>
!tileA = memref<128x64xf16, #gpu.address_space<workgroup>>
!tileB = memref<64x128xf16, #gpu.address_space<workgroup>>
!halfB = memref<64x64xf16, #gpu.address_space<workgroup>>

func.func @pipelined(%mapA: !mapA, %mapB: !mapB, %kTiles: index, %out: memref<128x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c8192 = arith.constant 8192 : index
  %c16384 = arith.constant 16384 : index
  %c24576 = arith.constant 24576 : index
  %c32768 = arith.constant 32768 : index
  %ticks = arith.constant 10000000 : index
  %tid = gpu.thread_id x
  %producer = arith.cmpi eq, %tid, %c0 : index
  %smem = gpu.dynamic_shared_memory : !smem
  %bars = nvgpu.mbarrier.create -> !barriers
  nvgpu.mbarrier.init %bars[%c0], %c1 : !barriers
  nvgpu.mbarrier.init %bars[%c1], %c1 : !barriers
  scf.if %producer {
    %a = memref.view %smem[%c0][] : !smem to !tileA
    %b0 = memref.view %smem[%c16384][] : !smem to !halfB
    %b1 = memref.view %smem[%c24576][] : !smem to !halfB
    nvgpu.mbarrier.arrive.expect_tx %bars[%c0], %c32768 : !barriers
    nvgpu.tma.async.load %mapA[%c0, %c0], %bars[%c0] to %a : !mapA, !barriers -> !tileA
    nvgpu.tma.async.load %mapB[%c0, %c0], %bars[%c0] to %b0 : !mapB, !barriers -> !halfB
    nvgpu.tma.async.load %mapB[%c64, %c0], %bars[%c0] to %b1 : !mapB, !barriers -> !halfB
  }
  %init = nvgpu.warpgroup.mma.init.accumulator -> !acc
  %res = scf.for %k = %c0 to %kTiles step %c1 iter_args(%acc = %init) -> (!acc) {
    %s = arith.remui %k, %c2 : index
    %next = arith.addi %k, %c1 : index
    %ns = arith.remui %next, %c2 : index
    %more = arith.cmpi ult, %next, %kTiles : index
    %fill = arith.andi %more, %producer : i1
    scf.if %fill {
      %off = arith.muli %ns, %c32768 : index
      %offB = arith.addi %off, %c16384 : index
      %offB1 = arith.addi %off, %c24576 : index
      %a = memref.view %smem[%off][] : !smem to !tileA
      %b0 = memref.view %smem[%offB][] : !smem to !halfB
      %b1 = memref.view %smem[%offB1][] : !smem to !halfB
      %kk = arith.muli %next, %c64 : index
      nvgpu.mbarrier.arrive.expect_tx %bars[%ns], %c32768 : !barriers
      nvgpu.tma.async.load %mapA[%kk, %c0], %bars[%ns] to %a : !mapA, !barriers -> !tileA
      nvgpu.tma.async.load %mapB[%kk, %c0], %bars[%ns] to %b0 : !mapB, !barriers -> !halfB
      nvgpu.tma.async.load %mapB[%kk, %c64], %bars[%ns] to %b1 : !mapB, !barriers -> !halfB
    }
    %round = arith.divui %k, %c2 : index
    %bit = arith.remui %round, %c2 : index
    %parity = arith.index_cast %bit : index to i1
    nvgpu.mbarrier.try_wait.parity %bars[%s], %parity, %ticks : !barriers
    %off = arith.muli %s, %c32768 : index
    %offB = arith.addi %off, %c16384 : index
    %a = memref.view %smem[%off][] : !smem to !tileA
    %b = memref.view %smem[%offB][] : !smem to !tileB
    %dA = nvgpu.warpgroup.generate.descriptor %a, %mapA : !tileA, !mapA -> !nvgpu.warpgroup.descriptor<tensor = memref<128x64xf16, 3>>
    %dB = nvgpu.warpgroup.generate.descriptor %b, %mapB : !tileB, !mapB -> !nvgpu.warpgroup.descriptor<tensor = memref<64x128xf16, 3>>
    %d = nvgpu.warpgroup.mma %dA, %dB, %acc {transposeB} : <tensor = memref<128x64xf16, 3>>, <tensor = memref<64x128xf16, 3>>, !acc -> !acc
    nvvm.wgmma.wait.group.sync.aligned 0
    scf.yield %d : !acc
  }
  nvgpu.warpgroup.mma.store %res, %out : !acc to memref<128x128xf32>
  return
}
