//===- NVWGMMADialect.h - nvwgmma dialect -----------------------*- C++ -*-===//
//
// The dialect class, its enums and attributes: what every nvwgmma header and
// pass includes first.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_IR_NVWGMMADIALECT_H
#define NVWGMMA_IR_NVWGMMADIALECT_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Dialect.h"

#include "nvwgmma/IR/NVWGMMADialect.h.inc"

#include "nvwgmma/IR/NVWGMMAEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "nvwgmma/IR/NVWGMMAAttrs.h.inc"

#endif // NVWGMMA_IR_NVWGMMADIALECT_H
