// A two-stage GEMM whose ring is filled only before its loop: the producer
// thread issues both stages' TMA loads (A 128 x 64, B as two 64 x 64 halves,
// 32 KiB per stage) up front, each stage on its own mbarrier; the loop runs
// once per stage, waiting for stage k with parity 0 (it is filled once) and
// reading it with an m128 warpgroup.mma. The loads address dynamic shared
// memory through gpu.dynamic_shared_memory, the reads through a zero-sized
// workgroup global, as upstream MLIR's sm90 GEMM tests do. Written for
// nvwgmma's checker corpus (Apache-2.0 WITH LLVM-exception, as the
// project); it follows the structure of upstream's tests, not their text.
!barriers = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
!mapA = !nvgpu.tensormap.descriptor<tensor = memref<128x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!mapB = !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<128x128xf32>>
!smemA = memref<128x64xf16, #gpu.address_space<workgroup>>
!smemHalf = memref<64x64xf16, #gpu.address_space<workgroup>>

memref.global "private" @shared : memref<0xf16, 3> {alignment = 16 : i64}

func.func @gemm(%mapA: !mapA, %mapB: !mapB, %leader: i1, %out: memref<128x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %ticks = arith.constant 10000000 : index
  %stageBytes = arith.constant 32768 : index
  %a1 = arith.constant 16384 : index
  %b0 = arith.constant 32768 : index
  %b0h = arith.constant 40960 : index
  %b1 = arith.constant 49152 : index
  %b1h = arith.constant 57344 : index
  %dyn = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
  %bars = nvgpu.mbarrier.create -> !barriers
  nvgpu.mbarrier.init %bars[%c0], %c1 : !barriers
  nvgpu.mbarrier.init %bars[%c1], %c1 : !barriers
  scf.if %leader {
    %sA = memref.view %dyn[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemA
    %sB = memref.view %dyn[%b0][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemHalf
    %sBh = memref.view %dyn[%b0h][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemHalf
    nvgpu.mbarrier.arrive.expect_tx %bars[%c0], %stageBytes : !barriers
    nvgpu.tma.async.load %mapA[%c0, %c0], %bars[%c0] to %sA : !mapA, !barriers -> !smemA
    nvgpu.tma.async.load %mapB[%c0, %c0], %bars[%c0] to %sB : !mapB, !barriers -> !smemHalf
    nvgpu.tma.async.load %mapB[%c64, %c0], %bars[%c0] to %sBh : !mapB, !barriers -> !smemHalf
  }
  scf.if %leader {
    %sA = memref.view %dyn[%a1][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemA
    %sB = memref.view %dyn[%b1][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemHalf
    %sBh = memref.view %dyn[%b1h][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemHalf
    nvgpu.mbarrier.arrive.expect_tx %bars[%c1], %stageBytes : !barriers
    nvgpu.tma.async.load %mapA[%c64, %c0], %bars[%c1] to %sA : !mapA, !barriers -> !smemA
    nvgpu.tma.async.load %mapB[%c0, %c64], %bars[%c1] to %sB : !mapB, !barriers -> !smemHalf
    nvgpu.tma.async.load %mapB[%c64, %c64], %bars[%c1] to %sBh : !mapB, !barriers -> !smemHalf
  }
  %shared = memref.get_global @shared : memref<0xf16, 3>
  %tilesA = memref.reinterpret_cast %shared to offset: [0], sizes: [2, 128, 64], strides: [8192, 64, 1] : memref<0xf16, 3> to memref<2x128x64xf16, 3>
  %tilesB = memref.reinterpret_cast %shared to offset: [16384], sizes: [2, 64, 128], strides: [8192, 128, 1] : memref<0xf16, 3> to memref<2x64x128xf16, strided<[8192, 128, 1], offset: 16384>, 3>
  %init = nvgpu.warpgroup.mma.init.accumulator -> !acc
  %res = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %init) -> (!acc) {
    %parity = arith.constant false
    nvgpu.mbarrier.try_wait.parity %bars[%k], %parity, %ticks : !barriers
    %a = memref.subview %tilesA[%k, 0, 0][1, 128, 64][1, 1, 1] : memref<2x128x64xf16, 3> to memref<128x64xf16, strided<[64, 1], offset: ?>, 3>
    %b = memref.subview %tilesB[%k, 0, 0][1, 64, 128][1, 1, 1] : memref<2x64x128xf16, strided<[8192, 128, 1], offset: 16384>, 3> to memref<64x128xf16, strided<[128, 1], offset: ?>, 3>
    %dA = nvgpu.warpgroup.generate.descriptor %a, %mapA : memref<128x64xf16, strided<[64, 1], offset: ?>, 3>, !mapA -> !nvgpu.warpgroup.descriptor<tensor = memref<128x64xf16, 3>>
    %dB = nvgpu.warpgroup.generate.descriptor %b, %mapB : memref<64x128xf16, strided<[128, 1], offset: ?>, 3>, !mapB -> !nvgpu.warpgroup.descriptor<tensor = memref<64x128xf16, 3>>
    %d = nvgpu.warpgroup.mma %dA, %dB, %acc {transposeB} : <tensor = memref<128x64xf16, 3>>, <tensor = memref<64x128xf16, 3>>, !acc -> !acc
    scf.yield %d : !acc
  }
  nvvm.wgmma.wait.group.sync.aligned 0
  nvgpu.warpgroup.mma.store %res, %out : !acc to memref<128x128xf32>
  return
}
