//===- Registration.h - what nvwgmma-opt and Python register ----*- C++ -*-===//
//
// One list of dialects and passes, shared by nvwgmma-opt and the Python
// package, so both accept the same IR and pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_REGISTRATION_REGISTRATION_H
#define NVWGMMA_REGISTRATION_REGISTRATION_H

namespace mlir {
class DialectRegistry;
namespace nvwgmma {

/// nvwgmma plus the upstream dialects kernels combine it with: builtin, func,
/// arith, llvm, nvvm, gpu, scf, memref, cf, index, math, ub, with
/// their ConvertToLLVM interfaces.
void registerAllDialects(DialectRegistry &registry);

/// nvwgmma's passes and pipelines plus the upstream passes needed to reach
/// LLVM (convert-*-to-llvm, gpu-to-nvvm, canonicalize, cse, ...). Idempotent.
void registerAllPasses();

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_REGISTRATION_REGISTRATION_H
