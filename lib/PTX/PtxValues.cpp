//===- PtxValues.cpp - integer ranges of PTX registers along paths --------===//

#include "nvwgmma/PTX/PtxValues.h"

#include "nvwgmma/PTX/ParsePtx.h"

#include <algorithm>

using namespace mlir::nvwgmma::ptx;
using llvm::StringRef;
using mlir::nvwgmma::PtxAsmOperands;

namespace {

constexpr int kDepth = 12; // definitions followed back from a comparison
constexpr int64_t kBig = int64_t(1) << 40; // beyond it, a range is unknown

Interval all() { return Interval{}; }

bool known(const Interval &r) { return r.lo > -kBig && r.hi < kBig; }

Interval meet(Interval a, Interval b) {
  return {std::max(a.lo, b.lo), std::min(a.hi, b.hi)};
}

Interval hull(Interval a, Interval b) {
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

/// The range `r cmp c` allows, or its negation's.
Interval narrow(Interval r, StringRef cmp, int64_t c, bool holds) {
  static const std::pair<StringRef, StringRef> negations[] = {
      {"eq", "ne"}, {"ne", "eq"}, {"lt", "ge"}, {"ge", "lt"}, {"le", "gt"},
      {"gt", "le"}, {"lo", "hs"}, {"hs", "lo"}, {"ls", "hi"}, {"hi", "ls"}};
  if (!holds)
    for (auto [a, b] : negations)
      if (cmp == a) {
        cmp = b;
        break;
      }
  // unsigned comparisons read a range only where it cannot be negative
  bool unsignedCmp = cmp == "lo" || cmp == "ls" || cmp == "hi" || cmp == "hs";
  if (unsignedCmp && (r.lo < 0 || c < 0))
    return r;
  if (cmp == "eq")
    return meet(r, {c, c});
  if (cmp == "ne") {
    if (r.lo == c)
      ++r.lo;
    else if (r.hi == c)
      --r.hi;
    return r;
  }
  if (cmp == "lt" || cmp == "lo")
    return meet(r, {all().lo, c - 1});
  if (cmp == "le" || cmp == "ls")
    return meet(r, {all().lo, c});
  if (cmp == "gt" || cmp == "hi")
    return meet(r, {c + 1, all().hi});
  if (cmp == "ge" || cmp == "hs")
    return meet(r, {c, all().hi});
  return r;
}

} // namespace

Facts mlir::nvwgmma::ptx::joinFacts(const Facts &a, const Facts &b) {
  Facts out;
  for (const auto &[r, range] : a)
    if (auto it = b.find(r); it != b.end())
      out.emplace(r, hull(range, it->second));
  return out;
}

Interval Values::range(Reg r, const Facts &facts) const {
  return range(r, facts, 0);
}

Interval Values::range(Reg r, const Facts &facts, int depth) const {
  Interval out = all();
  if (std::optional<unsigned> d = soleWriter(r); d && depth < kDepth)
    out = definition(*d, facts, depth + 1);
  if (auto it = facts.find(r); it != facts.end())
    out = meet(out, it->second);
  // An empty range (a contradiction) stays; a half-unbounded one is unknown.
  return out.empty() || known(out) ? out : all();
}

Interval Values::operand(unsigned i, unsigned k, const Facts &facts,
                         int depth) const {
  const Instruction &in = p.at(i);
  if (k >= in.operands.size())
    return all();
  if (std::optional<int64_t> c = PtxAsmOperands::literal(in.operands[k]))
    return {*c, *c};
  if (in.operands[k] == "%tid.x" && p.function().threadsX > 0)
    return {0, int64_t(p.function().threadsX) - 1};
  llvm::ArrayRef<Reg> regs = p.registers(i, k);
  if (regs.size() != 1 || in.operands[k].contains('.'))
    return all();
  return range(regs[0], facts, depth);
}

Interval Values::definition(unsigned i, const Facts &facts, int depth) const {
  const Instruction &in = p.at(i);
  StringRef m = in.mnemonic;
  if (p.guard(i) || in.operands.size() < 2 || p.registers(i, 0).size() != 1)
    return all();
  Interval a = operand(i, 1, facts, depth);
  if (m.starts_with("mov.") || m.starts_with("cvt.u32.") ||
      m.starts_with("cvt.s32.") || m.starts_with("cvt.u64.") ||
      m.starts_with("cvt.s64."))
    return in.operands.size() == 2 ? a : all();
  if (in.operands.size() != 3 || !known(a))
    return all();
  Interval b = operand(i, 2, facts, depth);
  if (!known(b))
    return all();
  if (m.starts_with("add.s") || m.starts_with("add.u"))
    return {a.lo + b.lo, a.hi + b.hi};
  if (m.starts_with("sub.s") || m.starts_with("sub.u"))
    return {a.lo - b.hi, a.hi - b.lo};
  bool shiftable = a.lo >= 0 && b.lo == b.hi && b.lo >= 0 && b.lo < 32;
  if ((m.starts_with("shr.u") || m.starts_with("shr.b")) && shiftable)
    return {a.lo >> b.lo, a.hi >> b.lo};
  if (m.starts_with("shl.") && shiftable)
    return {a.lo << b.lo, a.hi << b.lo};
  if (m.starts_with("and.b") && b.lo == b.hi && b.lo >= 0)
    return {0, a.lo >= 0 ? std::min(a.hi, b.lo) : b.lo};
  if (m.starts_with("mul.lo.") && b.lo == b.hi && b.lo >= 0)
    return {a.lo * b.lo, a.hi * b.lo};
  return all();
}

std::optional<Facts> Values::along(unsigned from, unsigned to,
                                   const Facts &facts) const {
  const Block &blk = p.blocks()[from];
  if (blk.end == blk.begin)
    return facts;
  unsigned last = blk.end - 1;
  const Instruction &br = p.at(last);
  std::optional<Reg> guard = p.guard(last);
  if (!br.mnemonic.starts_with("bra") || !guard || br.operands.empty())
    return facts;
  std::optional<unsigned> target = p.label(last, br.operands[0]);
  bool toTarget = target && p.blocks()[to].begin == *target;
  bool toNext = p.blocks()[to].begin == blk.end;
  if (toTarget == toNext) // both (a branch to the next block) or neither
    return facts;
  std::optional<unsigned> d = soleWriter(*guard);
  if (!d)
    return facts;
  const Instruction &setp = p.at(*d);
  llvm::SmallVector<StringRef> parts;
  setp.mnemonic.split(parts, '.');
  if (parts.size() != 3 || parts[0] != "setp" || setp.operands.size() != 3 ||
      p.guard(*d) || setp.operands[0].contains('|'))
    return facts;
  std::optional<int64_t> c = PtxAsmOperands::literal(setp.operands[2]);
  llvm::ArrayRef<Reg> compared = p.registers(*d, 1);
  if (!c || compared.size() != 1 || !soleWriter(compared[0]) ||
      setp.operands[1].contains('.'))
    return facts;
  bool holds = toTarget != br.guardNegated;
  Interval now = narrow(range(compared[0], facts), parts[1], *c, holds);
  if (now.empty())
    return std::nullopt;
  Facts out = facts;
  out[compared[0]] = now;
  return out;
}
