//===- NVWGMMAOps.td - Python bindings for nvwgmma ---------*- tablegen -*-===//
//
// The TableGen entry point of the Python op bindings: the whole dialect.
//
//===----------------------------------------------------------------------===//

#ifndef PYTHON_BINDINGS_NVWGMMA_OPS
#define PYTHON_BINDINGS_NVWGMMA_OPS

include "nvwgmma/IR/NVWGMMA.td"

#endif
