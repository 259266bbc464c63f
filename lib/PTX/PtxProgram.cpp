//===- PtxProgram.cpp - a PTX function's registers and CFG ----------------===//

#include "nvwgmma/PTX/PtxProgram.h"

#include "llvm/ADT/StringExtras.h"
#include <algorithm>
#include <set>

using namespace mlir::nvwgmma::ptx;
using llvm::StringRef;

llvm::SmallVector<StringRef, 4>
mlir::nvwgmma::ptx::operandIdentifiers(StringRef op) {
  llvm::SmallVector<StringRef, 4> out;
  auto head = [](char c) {
    return llvm::isAlpha(c) || c == '_' || c == '$' || c == '%';
  };
  auto tail = [](char c) { return llvm::isAlnum(c) || c == '_' || c == '$'; };
  for (size_t i = 0; i < op.size();) {
    if (!head(op[i])) {
      // a number (0f3F800000, 0x80) or a `.x` component: read past it whole
      if (llvm::isAlnum(op[i]) || op[i] == '.')
        for (++i; i < op.size() && (tail(op[i]) || op[i] == '.'); ++i)
          ;
      else
        ++i;
      continue;
    }
    size_t start = i;
    for (++i; i < op.size() && tail(op[i]); ++i)
      ;
    out.push_back(op.slice(start, i));
  }
  return out;
}

namespace {

bool startsWithAny(StringRef s, std::initializer_list<StringRef> prefixes) {
  return llvm::any_of(prefixes, [&](StringRef p) { return s.starts_with(p); });
}

/// Instructions whose first operand is read, not written (beyond those
/// whose first operand is an address).
bool firstOperandRead(StringRef m) {
  return startsWithAny(m, {"bra",
                           "brx",
                           "call",
                           "ret",
                           "exit",
                           "trap",
                           "bar.",
                           "barrier",
                           "wgmma.",
                           "fence",
                           "membar",
                           "st.",
                           "red.",
                           "cp.",
                           "stmatrix",
                           "prefetch",
                           "setmaxnreg",
                           "griddepcontrol",
                           "nanosleep",
                           "pmevent",
                           "tensormap.",
                           "mbarrier.init",
                           "mbarrier.inval",
                           "mbarrier.expect_tx",
                           "mbarrier.complete_tx",
                           "multimem.st",
                           "multimem.red",
                           "discard",
                           "applypriority"});
}

bool isReturn(StringRef m) {
  return m == "ret" || m.starts_with("ret.") || m == "exit" ||
         m.starts_with("exit.") || m == "trap" || m.starts_with("trap.");
}

} // namespace

Program::Program(const Function &fn) : fn(fn) {
  regs.resize(fn.body.size());
  guards.resize(fn.body.size());
  for (unsigned i = 0; i < fn.body.size(); ++i) {
    const Instruction &in = fn.body[i];
    if (!in.guard.empty())
      guards[i] = resolve(in.guard, in.scope);
    // Labels, callees, parameters and globals resolve to no register.
    for (StringRef op : in.operands) {
      auto &out = regs[i].emplace_back();
      for (StringRef id : operandIdentifiers(op))
        if (std::optional<Reg> r = resolve(id, in.scope))
          out.push_back(*r);
    }
  }
  for (unsigned i = 0; i < fn.body.size(); ++i)
    if (writesFirstOperand(i))
      for (Reg r : regs[i][0])
        writerList[r].push_back(i);
  buildBlocks();
}

bool Program::writesFirstOperand(unsigned i) const {
  const Instruction &in = fn.body[i];
  if (in.operands.empty() || in.operands[0].starts_with("["))
    return false;
  return !firstOperandRead(in.mnemonic);
}

std::optional<Reg> Program::resolve(StringRef token, unsigned scope) {
  if (token == "_")
    return std::nullopt;
  std::string key;
  for (int s = scope; s >= 0; s = fn.scopes[s].parent) {
    if (!fn.scopes[s].declares(token))
      continue;
    key = s == 0 ? token.str() : (token + "#" + llvm::Twine(s)).str();
    break;
  }
  if (key.empty()) {
    // Undeclared: special registers (%tid) are registers nobody writes;
    // other names are labels, parameters, globals and functions.
    if (!token.starts_with("%"))
      return std::nullopt;
    key = token.str();
  }
  auto [it, inserted] = ids.try_emplace(key, names.size());
  if (inserted)
    names.push_back(key);
  return it->second;
}

std::optional<unsigned> Program::label(unsigned i, StringRef name) const {
  for (int s = fn.body[i].scope; s >= 0; s = fn.scopes[s].parent)
    if (auto it = fn.scopes[s].labels.find(name);
        it != fn.scopes[s].labels.end())
      return it->second;
  return std::nullopt;
}

void Program::buildBlocks() {
  unsigned n = fn.body.size();
  std::set<unsigned> leaders{0};
  std::vector<llvm::SmallVector<unsigned, 2>> targets(n);
  std::vector<bool> fallsThrough(n, true);
  for (unsigned i = 0; i < n; ++i) {
    const Instruction &in = fn.body[i];
    StringRef m = in.mnemonic;
    bool guarded = !in.guard.empty();
    if (m.starts_with("bra") && !in.operands.empty()) {
      if (std::optional<unsigned> t = label(i, in.operands[0]))
        targets[i].push_back(*t);
      fallsThrough[i] = guarded;
    } else if (m.starts_with("brx")) {
      // an indirect branch: any label of the function
      for (const Scope &s : fn.scopes)
        for (const auto &l : s.labels)
          targets[i].push_back(l.second);
      fallsThrough[i] = guarded;
    } else if (isReturn(m)) {
      fallsThrough[i] = guarded;
    } else {
      continue;
    }
    leaders.insert(i + 1);
    for (unsigned t : targets[i])
      leaders.insert(t);
  }
  for (const Scope &s : fn.scopes)
    for (const auto &l : s.labels)
      leaders.insert(l.second);
  std::vector<unsigned> starts;
  for (unsigned l : leaders)
    if (l < n || n == 0)
      starts.push_back(l);
  std::vector<unsigned> blockAt(n + 1, ~0u);
  blockIndex.resize(n);
  for (unsigned b = 0; b < starts.size(); ++b) {
    Block blk;
    blk.begin = starts[b];
    blk.end = b + 1 < starts.size() ? starts[b + 1] : n;
    blockAt[blk.begin] = b;
    std::fill(blockIndex.begin() + blk.begin, blockIndex.begin() + blk.end, b);
    blockList.push_back(blk);
  }
  for (Block &blk : blockList) {
    if (blk.end == blk.begin)
      continue;
    unsigned last = blk.end - 1;
    llvm::SmallVector<unsigned, 2> succ(targets[last]);
    if (fallsThrough[last])
      succ.push_back(blk.end);
    for (unsigned t : succ)
      if (t < n && blockAt[t] != ~0u &&
          !llvm::is_contained(blk.succs, blockAt[t]))
        blk.succs.push_back(blockAt[t]);
  }
}
