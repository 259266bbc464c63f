//===- PtxProtocol.h - the wgmma protocol checked on PTX --------*- C++ -*-===//
//
// The protocol rules of --nvwgmma-check-protocol (docs/Protocol.md), judged
// on registers instead of SSA values: PTX is what every compiler emits, so
// this reaches Triton's, nvcc's and our own kernels after LLVM scheduled
// them. Same labels as on MLIR (protocol_c1 ... protocol_c6).
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_PTX_PTXPROTOCOL_H
#define NVWGMMA_PTX_PTXPROTOCOL_H

#include "llvm/ADT/StringRef.h"
#include <string>
#include <vector>

namespace mlir {
namespace nvwgmma {
namespace ptx {

struct Finding {
  enum Severity { Error, Warning, Note };
  Severity severity = Error;
  std::string function;
  unsigned line = 0;
  std::string label; // protocol_c4, protocol_unchecked, ...
  std::string message;
  /// Places the finding refers to: (line, what is there).
  std::vector<std::pair<unsigned, std::string>> notes;
};

struct CheckOptions {
  /// Also report, as warnings, what the checker could not relate.
  bool strict = false;
};

/// Every finding in the PTX module `text`, in function and line order.
std::vector<Finding> checkPtx(llvm::StringRef text,
                              const CheckOptions &options = {});

/// "error", "warning" or "note".
const char *severityName(Finding::Severity severity);

/// "file:line: error: message" lines, notes after their finding.
std::string formatFindings(const std::vector<Finding> &findings,
                           llvm::StringRef file);

} // namespace ptx
} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_PTX_PTXPROTOCOL_H
