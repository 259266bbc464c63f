//===- Pipelines.h - nvwgmma pass pipelines ---------------------*- C++ -*-===//
//
// Named pipelines that take a kernel holding nvwgmma and upstream ops down
// to LLVM dialect, for nvwgmma-opt and for Python's compile_to_ptx alike.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_PIPELINES_PIPELINES_H
#define NVWGMMA_PIPELINES_PIPELINES_H

namespace mlir {
namespace nvwgmma {

/// Registers `--nvwgmma-to-llvm-pipeline`: nvwgmma plus the upstream dialects
/// a kernel uses (func, arith, scf, cf, memref, gpu, nvvm) down to LLVM.
void registerNVWGMMAPipelines();

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_PIPELINES_PIPELINES_H
