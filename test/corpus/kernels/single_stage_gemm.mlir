// An m128 GEMM main loop in upstream's nvgpu dialect with one stage and a
// parity-0 wait per iteration, its accumulator waited for (wait_group 0) and
// stored after the loop: the shape of upstream's first NVGPU tutorial
// kernel. Written for nvwgmma's checker corpus (Apache-2.0 WITH
// LLVM-exception, as the project).
!barriers = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
!mapA = !nvgpu.tensormap.descriptor<tensor = memref<128x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!mapB = !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<128x128xf32>>
!tileA = memref<128x64xf16, #gpu.address_space<workgroup>>
!tileB = memref<64x128xf16, #gpu.address_space<workgroup>>

func.func @gemm(%mapA: !mapA, %mapB: !mapB, %kTiles: index, %out: memref<128x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %ticks = arith.constant 10000000 : index
  %c16384 = arith.constant 16384 : index
  %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
  %bars = nvgpu.mbarrier.create -> !barriers
  nvgpu.mbarrier.init %bars[%c0], %c1 : !barriers
  %init = nvgpu.warpgroup.mma.init.accumulator -> !acc
  %res = scf.for %k = %c0 to %kTiles step %c1 iter_args(%acc = %init) -> (!acc) {
    %parity = arith.constant false
    nvgpu.mbarrier.try_wait.parity %bars[%c0], %parity, %ticks : !barriers
    %a = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to !tileA
    %b = memref.view %smem[%c16384][] : memref<?xi8, #gpu.address_space<workgroup>> to !tileB
    %dA = nvgpu.warpgroup.generate.descriptor %a, %mapA : !tileA, !mapA -> !nvgpu.warpgroup.descriptor<tensor = memref<128x64xf16, 3>>
    %dB = nvgpu.warpgroup.generate.descriptor %b, %mapB : !tileB, !mapB -> !nvgpu.warpgroup.descriptor<tensor = memref<64x128xf16, 3>>
    %d = nvgpu.warpgroup.mma %dA, %dB, %acc {transposeB} : <tensor = memref<128x64xf16, 3>>, <tensor = memref<64x128xf16, 3>>, !acc -> !acc
    scf.yield %d : !acc
  }
  nvvm.wgmma.wait.group.sync.aligned 0
  nvgpu.warpgroup.mma.store %res, %out : !acc to memref<128x128xf32>
  return
}
