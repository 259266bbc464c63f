//===- PtxValues.h - integer ranges of PTX registers along paths -*- C++
//-*-===//
//
// Just enough value analysis to tell paths that exist only in the CFG from
// those a thread can take: ranges of registers with a single definition
// (%tid.x bounded by .maxntid/.reqntid, shifts, masks, constant offsets),
// narrowed on branch edges by the `setp` against a constant that decides
// them. Two branches on the warpgroup index that each skip the other
// warpgroup's fence cannot both be taken.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_PTX_PTXVALUES_H
#define NVWGMMA_PTX_PTXVALUES_H

#include "nvwgmma/PTX/PtxProgram.h"

#include <cstdint>
#include <limits>
#include <map>

namespace mlir {
namespace nvwgmma {
namespace ptx {

struct Interval {
  int64_t lo = std::numeric_limits<int64_t>::min();
  int64_t hi = std::numeric_limits<int64_t>::max();
  bool empty() const { return lo > hi; }
  bool operator==(const Interval &o) const { return lo == o.lo && hi == o.hi; }
};

/// What a path has learned: ranges of single-definition registers.
using Facts = std::map<Reg, Interval>;

/// Facts known on both of two paths (their hull).
Facts joinFacts(const Facts &a, const Facts &b);

class Values {
public:
  explicit Values(const Program &p) : p(p) {}

  /// The range of `r` under `facts`.
  Interval range(Reg r, const Facts &facts) const;
  /// The facts on the edge from block `from` to block `to`, given those at
  /// the end of `from`; nullopt where no thread can take the edge.
  std::optional<Facts> along(unsigned from, unsigned to,
                             const Facts &facts) const;

private:
  Interval range(Reg r, const Facts &facts, int depth) const;
  Interval operand(unsigned i, unsigned k, const Facts &facts, int depth) const;
  Interval definition(unsigned i, const Facts &facts, int depth) const;

  /// The one instruction writing `r`; none where several do.
  std::optional<unsigned> soleWriter(Reg r) const {
    llvm::ArrayRef<unsigned> w = p.writers(r);
    return w.size() == 1 ? std::optional<unsigned>(w.front()) : std::nullopt;
  }

  const Program &p;
};

} // namespace ptx
} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_PTX_PTXVALUES_H
