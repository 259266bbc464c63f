//===- Passes.h - nvwgmma checks and repairs --------------------*- C++ -*-===//
//
// Declarations and registration of the passes that check or repair IR
// holding nvwgmma ops: target, protocol, synchronization, PTX printing.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_TRANSFORMS_PASSES_H
#define NVWGMMA_TRANSFORMS_PASSES_H

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace nvwgmma {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "nvwgmma/Transforms/Passes.h.inc"

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_TRANSFORMS_PASSES_H
