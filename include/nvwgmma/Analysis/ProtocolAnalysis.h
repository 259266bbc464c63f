//===- ProtocolAnalysis.h - wgmma protocol dataflow ------------*- C++ -*-===//
//
// What the wgmma protocol checker finds, as data: shared by
// --nvwgmma-check-protocol (reports) and --nvwgmma-insert-synchronization
// (repairs), so a repair is always exactly what the check asked for.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_ANALYSIS_PROTOCOLANALYSIS_H
#define NVWGMMA_ANALYSIS_PROTOCOLANALYSIS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"
#include <string>

namespace mlir {
namespace nvwgmma {

struct ProtocolViolation {
  enum Kind {
    MissingFence,
    NotCommitted,
    NotWaited,
    EarlyUse,
    MissingProxyFence
  };
  Kind kind;
  /// Where the diagnostic points and where a repair goes (before it).
  Operation *at;
  /// The mma_async involved (or the shared store for MissingProxyFence).
  Operation *related;
  /// For EarlyUse / NotWaited: whether the mma is still uncommitted, and the
  /// largest N of a `wait_group N` that completes its group.
  bool uncommitted = false;
  int64_t waitDepth = 0;

  const char *label() const;
  std::string message() const;
  const char *note() const;
};

/// Analyses every function under `root` and returns the violations, each
/// reported once, in program order.
llvm::SmallVector<ProtocolViolation> analyzeProtocol(Operation *root);

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_ANALYSIS_PROTOCOLANALYSIS_H
