// RUN: nvwgmma-opt %s -split-input-file --nvwgmma-check-protocol=unchecked=false -verify-diagnostics
// RUN: nvwgmma-opt %s -split-input-file --convert-nvgpu-to-nvvm --canonicalize --nvwgmma-check-protocol=unchecked=false -verify-diagnostics
// RUN: nvwgmma-opt %s -split-input-file --convert-nvgpu-to-nvvm --canonicalize --convert-scf-to-cf --nvwgmma-check-protocol=unchecked=false -verify-diagnostics
// RUN: nvwgmma-opt %s -split-input-file --convert-nvgpu-to-nvvm --canonicalize --convert-scf-to-cf --convert-nvvm-to-llvm --nvwgmma-check-protocol=unchecked=false -verify-diagnostics
//
// The shape of upstream MLIR's sm90 GEMM tests after convert-linalg-to-loops
// and gpu-kernel-outlining: both stages of the ring are filled before the
// loop, each on its own mbarrier, at slots the kernel gets as parameters
// (outlining passes the launch body's constants in; the one gpu.launch_func
// passes 0 and 1); the loop runs once per stage with parity 0; the loads
// name dynamic shared memory through gpu.dynamic_shared_memory and the reads
// through a zero-sized workgroup global. Clean; the missing full-barrier
// wait and the flipped parity are each one error, at every depth.
//

!barriers = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
!mapA = !nvgpu.tensormap.descriptor<tensor = memref<128x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!mapB = !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<128x128xf32>>
!smemA = memref<128x64xf16, #gpu.address_space<workgroup>>
!smemB = memref<64x64xf16, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @gemm(%mapA: !mapA, %mapB: !mapB, %s0: index, %s1: index, %leader: i1, %out: memref<128x128xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c64 = arith.constant 64 : index
      %ticks = arith.constant 10000000 : index
      %bytes = arith.constant 32768 : index
      %a1 = arith.constant 16384 : index
      %b0 = arith.constant 32768 : index
      %b0h = arith.constant 40960 : index
      %b1 = arith.constant 49152 : index
      %b1h = arith.constant 57344 : index
      %dyn = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %bars = nvgpu.mbarrier.create -> !barriers
      nvgpu.mbarrier.init %bars[%s0], %c1 : !barriers
      nvgpu.mbarrier.init %bars[%s1], %c1 : !barriers
      scf.if %leader {
        %sA = memref.view %dyn[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemA
        %sB = memref.view %dyn[%b0][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemB
        %sBh = memref.view %dyn[%b0h][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemB
        nvgpu.mbarrier.arrive.expect_tx %bars[%s0], %bytes : !barriers
        nvgpu.tma.async.load %mapA[%c0, %c0], %bars[%s0] to %sA : !mapA, !barriers -> !smemA
        nvgpu.tma.async.load %mapB[%c0, %c0], %bars[%s0] to %sB : !mapB, !barriers -> !smemB
        nvgpu.tma.async.load %mapB[%c64, %c0], %bars[%s0] to %sBh : !mapB, !barriers -> !smemB
        %tA = memref.view %dyn[%a1][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemA
        %tB = memref.view %dyn[%b1][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemB
        %tBh = memref.view %dyn[%b1h][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemB
        nvgpu.mbarrier.arrive.expect_tx %bars[%s1], %bytes : !barriers
        nvgpu.tma.async.load %mapA[%c64, %c0], %bars[%s1] to %tA : !mapA, !barriers -> !smemA
        nvgpu.tma.async.load %mapB[%c0, %c64], %bars[%s1] to %tB : !mapB, !barriers -> !smemB
        nvgpu.tma.async.load %mapB[%c64, %c64], %bars[%s1] to %tBh : !mapB, !barriers -> !smemB
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
      gpu.return
    }
    memref.global "private" @shared : memref<0xf16, 3> {alignment = 16 : i64}
  }
  func.func @host(%mapA: !mapA, %mapB: !mapB, %leader: i1, %out: memref<128x128xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @kernels::@gemm blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%mapA : !mapA, %mapB : !mapB, %c0 : index, %c1 : index, %leader : i1, %out : memref<128x128xf32>)
    return
  }
}

// -----

!barriers = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
!mapA = !nvgpu.tensormap.descriptor<tensor = memref<128x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!mapB = !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<128x128xf32>>
!smemA = memref<128x64xf16, #gpu.address_space<workgroup>>
!smemB = memref<64x64xf16, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @gemm(%mapA: !mapA, %mapB: !mapB, %s0: index, %s1: index, %leader: i1, %out: memref<128x128xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c64 = arith.constant 64 : index
      %ticks = arith.constant 10000000 : index
      %bytes = arith.constant 32768 : index
      %a1 = arith.constant 16384 : index
      %b0 = arith.constant 32768 : index
      %b0h = arith.constant 40960 : index
      %b1 = arith.constant 49152 : index
      %b1h = arith.constant 57344 : index
      %dyn = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %bars = nvgpu.mbarrier.create -> !barriers
      nvgpu.mbarrier.init %bars[%s0], %c1 : !barriers
      nvgpu.mbarrier.init %bars[%s1], %c1 : !barriers
      scf.if %leader {
        %sA = memref.view %dyn[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemA
        %sB = memref.view %dyn[%b0][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemB
        %sBh = memref.view %dyn[%b0h][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemB
        nvgpu.mbarrier.arrive.expect_tx %bars[%s0], %bytes : !barriers
        // expected-note @+1 {{the stage is filled by this TMA load, which completes on the full barrier}}
        nvgpu.tma.async.load %mapA[%c0, %c0], %bars[%s0] to %sA : !mapA, !barriers -> !smemA
        nvgpu.tma.async.load %mapB[%c0, %c0], %bars[%s0] to %sB : !mapB, !barriers -> !smemB
        nvgpu.tma.async.load %mapB[%c64, %c0], %bars[%s0] to %sBh : !mapB, !barriers -> !smemB
        %tA = memref.view %dyn[%a1][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemA
        %tB = memref.view %dyn[%b1][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemB
        %tBh = memref.view %dyn[%b1h][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemB
        nvgpu.mbarrier.arrive.expect_tx %bars[%s1], %bytes : !barriers
        nvgpu.tma.async.load %mapA[%c64, %c0], %bars[%s1] to %tA : !mapA, !barriers -> !smemA
        nvgpu.tma.async.load %mapB[%c0, %c64], %bars[%s1] to %tB : !mapB, !barriers -> !smemB
        nvgpu.tma.async.load %mapB[%c64, %c64], %bars[%s1] to %tBh : !mapB, !barriers -> !smemB
      }
      %shared = memref.get_global @shared : memref<0xf16, 3>
      %tilesA = memref.reinterpret_cast %shared to offset: [0], sizes: [2, 128, 64], strides: [8192, 64, 1] : memref<0xf16, 3> to memref<2x128x64xf16, 3>
      %tilesB = memref.reinterpret_cast %shared to offset: [16384], sizes: [2, 64, 128], strides: [8192, 128, 1] : memref<0xf16, 3> to memref<2x64x128xf16, strided<[8192, 128, 1], offset: 16384>, 3>
      %init = nvgpu.warpgroup.mma.init.accumulator -> !acc
      %res = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %init) -> (!acc) {
        %parity = arith.constant false
        %a = memref.subview %tilesA[%k, 0, 0][1, 128, 64][1, 1, 1] : memref<2x128x64xf16, 3> to memref<128x64xf16, strided<[64, 1], offset: ?>, 3>
        %b = memref.subview %tilesB[%k, 0, 0][1, 64, 128][1, 1, 1] : memref<2x64x128xf16, strided<[8192, 128, 1], offset: 16384>, 3> to memref<64x128xf16, strided<[128, 1], offset: ?>, 3>
        %dA = nvgpu.warpgroup.generate.descriptor %a, %mapA : memref<128x64xf16, strided<[64, 1], offset: ?>, 3>, !mapA -> !nvgpu.warpgroup.descriptor<tensor = memref<128x64xf16, 3>>
        %dB = nvgpu.warpgroup.generate.descriptor %b, %mapB : memref<64x128xf16, strided<[128, 1], offset: ?>, 3>, !mapB -> !nvgpu.warpgroup.descriptor<tensor = memref<64x128xf16, 3>>
        // expected-error @+1 {{an mma_async must read stage k mod 2 only after a wait on that stage's full barrier in the same round, but got no such wait (protocol_c6)}}
        %d = nvgpu.warpgroup.mma %dA, %dB, %acc {transposeB} : <tensor = memref<128x64xf16, 3>>, <tensor = memref<64x128xf16, 3>>, !acc -> !acc
        scf.yield %d : !acc
      }
      nvvm.wgmma.wait.group.sync.aligned 0
      nvgpu.warpgroup.mma.store %res, %out : !acc to memref<128x128xf32>
      gpu.return
    }
    memref.global "private" @shared : memref<0xf16, 3> {alignment = 16 : i64}
  }
  func.func @host(%mapA: !mapA, %mapB: !mapB, %leader: i1, %out: memref<128x128xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @kernels::@gemm blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%mapA : !mapA, %mapB : !mapB, %c0 : index, %c1 : index, %leader : i1, %out : memref<128x128xf32>)
    return
  }
}

// -----

!barriers = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
!mapA = !nvgpu.tensormap.descriptor<tensor = memref<128x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!mapB = !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<128x128xf32>>
!smemA = memref<128x64xf16, #gpu.address_space<workgroup>>
!smemB = memref<64x64xf16, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @gemm(%mapA: !mapA, %mapB: !mapB, %s0: index, %s1: index, %leader: i1, %out: memref<128x128xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c64 = arith.constant 64 : index
      %ticks = arith.constant 10000000 : index
      %bytes = arith.constant 32768 : index
      %a1 = arith.constant 16384 : index
      %b0 = arith.constant 32768 : index
      %b0h = arith.constant 40960 : index
      %b1 = arith.constant 49152 : index
      %b1h = arith.constant 57344 : index
      %dyn = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %bars = nvgpu.mbarrier.create -> !barriers
      nvgpu.mbarrier.init %bars[%s0], %c1 : !barriers
      nvgpu.mbarrier.init %bars[%s1], %c1 : !barriers
      scf.if %leader {
        %sA = memref.view %dyn[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemA
        %sB = memref.view %dyn[%b0][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemB
        %sBh = memref.view %dyn[%b0h][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemB
        nvgpu.mbarrier.arrive.expect_tx %bars[%s0], %bytes : !barriers
        nvgpu.tma.async.load %mapA[%c0, %c0], %bars[%s0] to %sA : !mapA, !barriers -> !smemA
        nvgpu.tma.async.load %mapB[%c0, %c0], %bars[%s0] to %sB : !mapB, !barriers -> !smemB
        nvgpu.tma.async.load %mapB[%c64, %c0], %bars[%s0] to %sBh : !mapB, !barriers -> !smemB
        %tA = memref.view %dyn[%a1][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemA
        %tB = memref.view %dyn[%b1][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemB
        %tBh = memref.view %dyn[%b1h][] : memref<?xi8, #gpu.address_space<workgroup>> to !smemB
        nvgpu.mbarrier.arrive.expect_tx %bars[%s1], %bytes : !barriers
        nvgpu.tma.async.load %mapA[%c64, %c0], %bars[%s1] to %tA : !mapA, !barriers -> !smemA
        nvgpu.tma.async.load %mapB[%c0, %c64], %bars[%s1] to %tB : !mapB, !barriers -> !smemB
        nvgpu.tma.async.load %mapB[%c64, %c64], %bars[%s1] to %tBh : !mapB, !barriers -> !smemB
      }
      %shared = memref.get_global @shared : memref<0xf16, 3>
      %tilesA = memref.reinterpret_cast %shared to offset: [0], sizes: [2, 128, 64], strides: [8192, 64, 1] : memref<0xf16, 3> to memref<2x128x64xf16, 3>
      %tilesB = memref.reinterpret_cast %shared to offset: [16384], sizes: [2, 64, 128], strides: [8192, 128, 1] : memref<0xf16, 3> to memref<2x64x128xf16, strided<[8192, 128, 1], offset: 16384>, 3>
      %init = nvgpu.warpgroup.mma.init.accumulator -> !acc
      %res = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %init) -> (!acc) {
        %parity = arith.constant true
        // expected-error @+1 {{the parity waited on must be 0: the loop runs 2 times over 2 stages, so every wait is in round 0, but got 1 (protocol_c9)}}
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
      gpu.return
    }
    memref.global "private" @shared : memref<0xf16, 3> {alignment = 16 : i64}
  }
  func.func @host(%mapA: !mapA, %mapB: !mapB, %leader: i1, %out: memref<128x128xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @kernels::@gemm blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%mapA : !mapA, %mapB : !mapB, %c0 : index, %c1 : index, %leader : i1, %out : memref<128x128xf32>)
    return
  }
}
