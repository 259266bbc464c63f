//===- NVWGMMAOps.h - nvwgmma operations ------------------------*- C++ -*-===//

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

#endif // NVWGMMA_IR_NVWGMMAOPS_H
