//===- NVWGMMAOps.td - Python bindings for nvwgmma ---------*- tablegen -*-===//

#ifndef PYTHON_BINDINGS_NVWGMMA_OPS
#define PYTHON_BINDINGS_NVWGMMA_OPS

include "nvwgmma/IR/NVWGMMA.td"

#endif
