//===- TensorMaps.h - what a TMA tensor map says about its box -*- C++ -*-===//
//
// A TMA tensor load's byte count is in its tensor map, usually built on the
// host where the IR cannot see it. Where the IR does build it, this reads
// the box dimensions and element type: in the kernel (Triton's device-side
// descriptors: `tensormap.replace.tile.*` into a shared scratch, then
// `tensormap.cp_fenceproxy` to global memory), or on the host in the same
// function as the launch (upstream's lowering of nvgpu.tma.create.descriptor:
// a call of the CUDA runtime wrapper `mgpuTensorMapEncodeTiledMemref` with
// the box in a stack array).
// Private to lib/Analysis.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_LIB_ANALYSIS_TENSORMAPS_H
#define NVWGMMA_LIB_ANALYSIS_TENSORMAPS_H

#include "AddressModel.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include <optional>

namespace mlir {
namespace nvwgmma {

class TensorMaps {
public:
  TensorMaps(FunctionOpInterface fn, AddressModel &addresses);
  /// The bytes one load through `map` brings: the product of the box's
  /// dimensions and the element size, when the kernel builds the map.
  std::optional<int64_t> boxBytes(Value map);

private:
  AddressModel &addresses;
  /// Per global map address (its linear form's key): the bytes of its box.
  llvm::SmallVector<std::pair<Linear, int64_t>, 4> built;
  /// Maps the host code of this function encodes: the bytes of their box.
  llvm::DenseMap<Value, int64_t> encoded;
  void learnHostMaps(FunctionOpInterface fn);
};

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_LIB_ANALYSIS_TENSORMAPS_H
