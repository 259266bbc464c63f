//===- NVWGMMAOps.h - nvwgmma operations ------------------------*- C++ -*-===//
//
// The generated op classes and the one way to ask any op for its mma_async
// configuration, dense or sparse.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_IR_NVWGMMAOPS_H
#define NVWGMMA_IR_NVWGMMAOPS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"

#include "nvwgmma/IR/Constraints.h"
#include "nvwgmma/IR/NVWGMMADialect.h"

#define GET_OP_CLASSES
#include "nvwgmma/IR/NVWGMMAOps.h.inc"

namespace mlir {
namespace nvwgmma {
/// The configuration of an mma_async or mma_async.sp; nullopt for other ops.
std::optional<MmaAsyncConfig> getMmaAsyncConfig(Operation *op);
} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_IR_NVWGMMAOPS_H
