//===- Passes.h - nvwgmma conversions ---------------------------*- C++ -*-===//
//
// Declarations and registration of --convert-nvwgmma-to-nvvm and
// --convert-nvwgmma-to-llvm.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_CONVERSION_PASSES_H
#define NVWGMMA_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Pass/Pass.h"

#include "nvwgmma/Conversion/NVWGMMAToLLVM.h"
#include "nvwgmma/Conversion/NVWGMMAToNVVM.h"
#include "nvwgmma/IR/NVWGMMADialect.h"

namespace mlir {
namespace nvwgmma {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "nvwgmma/Conversion/Passes.h.inc"

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_CONVERSION_PASSES_H
