//===- NVWGMMADialect.cpp - nvwgmma dialect -------------------------------===//
//
// Registers the generated ops and attributes with the dialect.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/IR/NVWGMMADialect.h"
#include "nvwgmma/IR/NVWGMMAOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nvwgmma;

#include "nvwgmma/IR/NVWGMMADialect.cpp.inc"
#include "nvwgmma/IR/NVWGMMAEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "nvwgmma/IR/NVWGMMAAttrs.cpp.inc"

void NVWGMMADialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "nvwgmma/IR/NVWGMMAOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "nvwgmma/IR/NVWGMMAAttrs.cpp.inc"
      >();
}
