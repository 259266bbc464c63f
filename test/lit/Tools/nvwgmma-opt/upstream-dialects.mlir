// nvwgmma-opt registers every upstream dialect, extension and pass, as
// mlir-opt does: vector, affine and nvgpu IR parses, and upstream's own
// pipelines run on it beside nvwgmma's.
// RUN: nvwgmma-opt %s | FileCheck %s --check-prefix=PARSE
// RUN: nvwgmma-opt %s --lower-affine --convert-vector-to-scf --canonicalize | FileCheck %s --check-prefix=LOWER
// RUN: nvwgmma-opt %s --convert-nvgpu-to-nvvm --convert-nvwgmma-to-nvvm | FileCheck %s --check-prefix=NVVM

// PARSE-LABEL: func.func @mixed
// PARSE: affine.for
// PARSE: vector.transfer_read
// PARSE: nvgpu.mbarrier.create
// PARSE: nvwgmma.fence
// LOWER-LABEL: func.func @mixed
// LOWER-NOT: affine.for
// LOWER: scf.for
// NVVM-LABEL: func.func @mixed
// NVVM: nvvm.mbarrier.init %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
// NVVM: nvvm.wgmma.fence.aligned
// NVVM-NOT: nvgpu.
// NVVM-NOT: nvwgmma.
!barriers = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
func.func @mixed(%m: memref<16xf32>) -> vector<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f0 = arith.constant 0.0 : f32
  affine.for %i = 0 to 4 {
    memref.store %f0, %m[%i] : memref<16xf32>
  }
  %v = vector.transfer_read %m[%c0], %f0 : memref<16xf32>, vector<4xf32>
  %bar = nvgpu.mbarrier.create -> !barriers
  nvgpu.mbarrier.init %bar[%c0], %c1 : !barriers
  nvwgmma.fence
  return %v : vector<4xf32>
}
