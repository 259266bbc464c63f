//===- NVWGMMA.td - nvwgmma dialect umbrella ---------------*- tablegen -*-===//
//
// Umbrella file: everything the dialect declares, in the order TableGen needs.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_TD
#define NVWGMMA_TD

include "nvwgmma/IR/NVWGMMADialect.td"
include "nvwgmma/IR/NVWGMMAEnums.td"
include "nvwgmma/IR/NVWGMMAAttrs.td"
include "nvwgmma/IR/NVWGMMAOps.td"

#endif // NVWGMMA_TD
