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
    MissingProxyFence,
    // The pipeline rules: reported, never repaired.
    ReadBeforeFilled,
    ReleasedWhilePending,
    ExpectTxMismatch,
    PhaseMismatch,
    // Strict mode only: a protocol instruction the checker cannot read.
    Unmodelled,
    // Normal mode: a function where some of the above went undecided (a
    // warning; strict mode reports each place instead).
    Unchecked
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
  /// For EarlyUse: further uses with the same cause (the same pending
  /// group), reported on this one.
  unsigned moreUses = 0;
  /// The pipeline rules build their message and further notes where the
  /// facts are known; `unproven` marks what only strict mode reports.
  std::string text;
  llvm::SmallVector<std::pair<Operation *, std::string>> notes;
  bool unproven = false;

  /// Whether --nvwgmma-insert-synchronization may repair it (c1-c5).
  bool repairable() const { return kind <= MissingProxyFence; }
  /// Whether it is a warning (the pass still succeeds).
  bool isWarning() const { return kind == Unchecked; }
  const char *label() const;
  std::string message() const;
  const char *note() const;
};

/// Analyses every function under `root` and returns the violations, each
/// reported once. With `strict`, also what the pipeline rules could not
/// decide (marked `unproven`); without, one `Unchecked` warning per
/// function that has such places.
llvm::SmallVector<ProtocolViolation>
analyzeProtocol(Operation *root, bool strict = false, bool unchecked = true);

/// Emits `v` as an error at its op's location with its notes (no op dump).
void reportProtocolViolation(const ProtocolViolation &v);

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_ANALYSIS_PROTOCOLANALYSIS_H
