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
#include "mlir/Interfaces/InferTypeOpInterface.h"

#include "nvwgmma/IR/Constraints.h"
#include "nvwgmma/IR/NVWGMMADialect.h"

namespace mlir {
namespace nvwgmma {
/// The InsideFunction trait of every nvwgmma op: rule placement_c1.
template <typename ConcreteType>
class InsideFunction : public OpTrait::TraitBase<ConcreteType, InsideFunction> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    if (std::optional<RuleViolation> v = checkPlacement(op))
      return op->emitOpError() << v->message;
    return success();
  }
};
} // namespace nvwgmma
} // namespace mlir

#define GET_OP_CLASSES
#include "nvwgmma/IR/NVWGMMAOps.h.inc"

namespace mlir {
namespace nvwgmma {
/// The configuration of an mma_async or mma_async.sp; nullopt for other ops.
std::optional<MmaAsyncConfig> getMmaAsyncConfig(Operation *op);
} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_IR_NVWGMMAOPS_H
