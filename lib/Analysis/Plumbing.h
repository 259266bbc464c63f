//===- Plumbing.h - how fragments move without being computed --*- C++ -*-===//
//
// Front ends move accumulator and A-fragment values around in many ways
// before and after a wgmma: struct bundles (llvm.insertvalue/extractvalue),
// vector repacking (bitcast, extractelement/insertelement, shufflevector,
// the vector dialect's extract/insert/bitcast), and local arrays that LLVM
// promotes to registers (CuTe keeps its accumulator in an llvm.alloca and
// loads and stores it around every wgmma). None of these computes a value:
// the op that computes or finally reads the registers is the access. This
// layer says which ops only move data and where the data comes from, so the
// protocol rules never depend on how a front end spells the moves. Private
// to lib/Analysis.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_LIB_ANALYSIS_PLUMBING_H
#define NVWGMMA_LIB_ANALYSIS_PLUMBING_H

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace nvwgmma {

class Plumbing {
public:
  explicit Plumbing(FunctionOpInterface fn);

  /// Whether `op` only moves data: its results (or, for a store into a
  /// fragment array, the array) hold registers of its data operands.
  bool moves(Operation *op) const;
  /// For an op that moves data: each (destination, source) pair — a result
  /// or a fragment array, and the operand or array it takes registers from.
  void forEachMove(Operation *op,
                   llvm::function_ref<void(Value to, Value from)> f) const;
  /// The values a moved value takes its registers from: data operands of
  /// its defining op, or every value stored into the fragment array a load
  /// reads. Empty for a value nothing moved.
  llvm::SmallVector<Value, 4> sourcesOf(Value v) const;
  /// The value a moving op puts into an existing bundle or array (the
  /// inserted element, the stored value), or null for a pure extraction.
  Value insertedValue(Operation *op) const;
  /// The fragment array an address points into (the llvm.alloca), or null.
  Value arrayOf(Value address) const;
  /// Whether `op` computes an address into a fragment array (a GEP, an
  /// integer round trip): addresses are not the registers they name.
  bool addresses(Operation *op) const;

private:
  /// Per fragment array: the values stored into it.
  llvm::DenseMap<Value, llvm::SmallVector<Value, 8>> stored;
  /// Per address into a fragment array: the array.
  llvm::DenseMap<Value, Value> arrays;
};

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_LIB_ANALYSIS_PLUMBING_H
