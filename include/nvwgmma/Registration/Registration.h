//===- Registration.h - what nvwgmma-opt and Python register ----*- C++ -*-===//
//
// What nvwgmma registers. The Python package embeds a small MLIR core and
// registers nvwgmma with the upstream dialects and passes kernels use
// (registerAll*); tools linked to the MLIR wheel's libMLIR.so register all of
// upstream themselves and add nvwgmma's own (registerDialect,
// registerPasses).
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_REGISTRATION_REGISTRATION_H
#define NVWGMMA_REGISTRATION_REGISTRATION_H

namespace mlir {
class DialectRegistry;
namespace nvwgmma {

/// The nvwgmma dialect alone: what a tool that already registers upstream's
/// dialects (mlir-opt with the plugin, nvwgmma-opt, a consumer's own
/// *-opt) adds.
void registerDialect(DialectRegistry &registry);

/// nvwgmma's own passes and pipelines, nothing of upstream's. Idempotent.
void registerPasses();

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
