// The checker on upstream's own lowering: an m128 GEMM main loop in the
// nvgpu dialect (two m64 wgmma halves taken out of the carried accumulator
// with llvm.extractvalue after the fence, index counters behind
// unrealized_conversion_cast), lowered by upstream's --convert-nvgpu-to-nvvm,
// at the scf level and after convert-scf-to-cf. The correct kernel is clean,
// also in strict mode; the one whose epilogue waits with wait_group 1 gets one
// error for its one cause, at the first real use of the accumulator (not at
// the plumbing), counting the other 127 uses, with the return as a note.
// RUN: nvwgmma-opt %s --convert-nvgpu-to-nvvm --canonicalize -o %t.scf.mlir
// RUN: nvwgmma-opt %t.scf.mlir --convert-scf-to-cf -o %t.cf.mlir
// RUN: not nvwgmma-opt %t.scf.mlir --nvwgmma-check-protocol -o /dev/null 2>&1 | FileCheck %s
// RUN: not nvwgmma-opt %t.scf.mlir --nvwgmma-check-protocol=strict=true -o /dev/null 2>&1 | FileCheck %s
// RUN: not nvwgmma-opt %t.cf.mlir --nvwgmma-check-protocol -o /dev/null 2>&1 | FileCheck %s
// RUN: not nvwgmma-opt %t.scf.mlir --nvwgmma-raise-nvvm --nvwgmma-check-protocol -o /dev/null 2>&1 | FileCheck %s

// CHECK-NOT: error:
// CHECK: error: 'memref.store' the mma_async group must be completed by a wait_group 0 before this use of its result, but got its group still pending, here and at 127 more uses (protocol_c4)
// CHECK: note: mma_async issued here
// CHECK: note: and the function returns with the group pending
// CHECK-NOT: error:

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

func.func @gemm_missing_wait(%mapA: !mapA, %mapB: !mapB, %kTiles: index, %out: memref<128x128xf32>) {
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
  nvvm.wgmma.wait.group.sync.aligned 1
  nvgpu.warpgroup.mma.store %res, %out : !acc to memref<128x128xf32>
  return
}
