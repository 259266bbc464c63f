//===- PtxFirstRound.h - register values in every loop's first round -*- C++
//-*-===//
//
// Constant propagation over a PTX function's CFG without its back edges:
// the values registers hold on paths that enter each loop and have not yet
// gone round it. Ring counters start at known values there (stage 0,
// phase 0), so the first wait on each barrier can be judged: a freshly
// initialised mbarrier passes a wait for parity 1 at once (protocol_c9).
// Values are integers or a shared symbol plus an offset (`mov.u32 %r,
// smem` and additions), which is how compilers address barriers.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_PTX_PTXFIRSTROUND_H
#define NVWGMMA_PTX_PTXFIRSTROUND_H

#include "nvwgmma/PTX/PtxProgram.h"

#include "llvm/ADT/BitVector.h"
#include <map>
#include <optional>
#include <vector>

namespace mlir {
namespace nvwgmma {
namespace ptx {

/// An integer (empty base) or a symbol's address plus an offset.
struct SymValue {
  llvm::StringRef base;
  int64_t offset = 0;
  bool operator==(const SymValue &o) const {
    return base == o.base && offset == o.offset;
  }
  bool operator<(const SymValue &o) const {
    return base != o.base ? base < o.base : offset < o.offset;
  }
};

/// A wait on an mbarrier in some loop's first round (or outside loops).
struct FirstWait {
  unsigned instruction;
  SymValue barrier;
  std::optional<int64_t> parity;
  bool first; // no wait on the same barrier earlier on every path here
};

class FirstRound {
public:
  /// `loops`: natural loop bodies by header (their back edges are cut).
  FirstRound(const Program &p,
             const std::map<unsigned, llvm::BitVector> &loops);

  /// Barrier addresses TMA loads complete on and expect_tx arrives name.
  const std::vector<SymValue> &filledBarriers() const { return filled; }
  const std::vector<FirstWait> &waits() const { return waitList; }

private:
  using Env = std::map<Reg, SymValue>;
  std::optional<SymValue> value(unsigned i, unsigned k, const Env &env) const;
  void step(unsigned i, Env &env, std::vector<SymValue> &waited);

  const Program &p;
  std::vector<SymValue> filled;
  std::vector<FirstWait> waitList;
};

} // namespace ptx
} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_PTX_PTXFIRSTROUND_H
