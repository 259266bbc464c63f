//===- PtxFirstRound.cpp - register values in every loop's first round ----===//

#include "nvwgmma/PTX/PtxFirstRound.h"

#include "nvwgmma/PTX/ParsePtx.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir::nvwgmma::ptx;
using llvm::StringRef;
using mlir::nvwgmma::PtxAsmOperands;

namespace {

bool isSymbol(StringRef s) {
  return !s.empty() && (llvm::isAlpha(s[0]) || s[0] == '_' || s[0] == '$') &&
         llvm::all_of(s, [](char c) {
           return llvm::isAlnum(c) || c == '_' || c == '$';
         });
}

std::optional<int64_t> compare(StringRef cmp, int64_t a, int64_t b) {
  uint64_t ua = a, ub = b;
  if (cmp == "eq")
    return a == b;
  if (cmp == "ne")
    return a != b;
  if (cmp == "lt")
    return a < b;
  if (cmp == "le")
    return a <= b;
  if (cmp == "gt")
    return a > b;
  if (cmp == "ge")
    return a >= b;
  if (cmp == "lo")
    return ua < ub;
  if (cmp == "ls")
    return ua <= ub;
  if (cmp == "hi")
    return ua > ub;
  if (cmp == "hs")
    return ua >= ub;
  return std::nullopt;
}

} // namespace

std::optional<SymValue> FirstRound::value(unsigned i, unsigned k,
                                          const Env &env) const {
  const Instruction &in = p.at(i);
  if (k >= in.operands.size())
    return std::nullopt;
  StringRef op = in.operands[k];
  int64_t offset = 0;
  if (op.consume_front("[")) { // [base], [base+8], [base + -8]
    op = op.drop_back(op.ends_with("]") ? 1 : 0).trim();
    auto [base, rest] = op.split('+');
    op = base.trim();
    if (!rest.empty()) {
      std::optional<int64_t> off = PtxAsmOperands::literal(rest);
      if (!off)
        return std::nullopt;
      offset = *off;
    }
  }
  if (std::optional<int64_t> v = PtxAsmOperands::literal(op))
    return SymValue{"", *v + offset};
  llvm::ArrayRef<Reg> regs = p.registers(i, k);
  if (regs.size() == 1 && !op.contains('.') &&
      llvm::none_of(op, [](char c) { return c == '+' || c == ' '; })) {
    auto it = env.find(regs[0]);
    if (it == env.end())
      return std::nullopt;
    return SymValue{it->second.base, it->second.offset + offset};
  }
  if (regs.empty() && isSymbol(op))
    return SymValue{op, offset};
  return std::nullopt;
}

void FirstRound::step(unsigned i, Env &env, std::vector<SymValue> &waited) {
  const Instruction &in = p.at(i);
  StringRef m = in.mnemonic;
  auto address = [&]() -> std::optional<SymValue> {
    for (unsigned k = 0; k < in.operands.size(); ++k)
      if (in.operands[k].starts_with("["))
        return value(i, k, env);
    return std::nullopt;
  };
  if (m.starts_with("cp.async.bulk.tensor") && m.contains("mbarrier")) {
    if (std::optional<SymValue> bar = value(i, in.operands.size() - 1, env))
      filled.push_back(*bar);
  } else if (m.starts_with("mbarrier.arrive.expect_tx") ||
             m.starts_with("mbarrier.expect_tx")) {
    if (std::optional<SymValue> bar = address())
      filled.push_back(*bar);
  } else if ((m.starts_with("mbarrier.try_wait.parity") ||
              m.starts_with("mbarrier.test_wait.parity")) &&
             in.operands.size() >= 3) {
    if (std::optional<SymValue> bar = value(i, 1, env)) {
      std::optional<SymValue> parity = value(i, 2, env);
      FirstWait w{i, *bar, std::nullopt, !llvm::is_contained(waited, *bar)};
      if (parity && parity->base.empty())
        w.parity = parity->offset;
      waitList.push_back(w);
      waited.push_back(*bar);
    }
  }
  if (!p.writesFirstOperand(i))
    return;
  llvm::ArrayRef<Reg> out = p.registers(i, 0);
  auto forget = [&] {
    for (Reg r : out)
      env.erase(r);
  };
  if (out.size() != 1 || p.guard(i) || in.operands[0].contains('|'))
    return forget();
  std::optional<SymValue> a = value(i, 1, env), b = value(i, 2, env);
  llvm::SmallVector<StringRef> parts;
  m.split(parts, '.');
  StringRef op = parts.front();
  std::optional<SymValue> result;
  bool plain = a && a->base.empty() && (!b || b->base.empty());
  if ((op == "mov" || op == "cvt" || op == "cvta") && in.operands.size() == 2 &&
      !m.contains(".f"))
    result = a;
  else if (op == "add" && a && b && (a->base.empty() || b->base.empty()))
    result =
        SymValue{a->base.empty() ? b->base : a->base, a->offset + b->offset};
  else if (op == "sub" && a && b && b->base.empty())
    result = SymValue{a->base, a->offset - b->offset};
  else if (plain && b && op == "mul" && m.contains(".lo"))
    result = SymValue{"", a->offset * b->offset};
  else if (plain && b && op == "shl" && b->offset >= 0 && b->offset < 63)
    result = SymValue{"", a->offset << b->offset};
  else if (plain && b && op == "shr" && a->offset >= 0 && b->offset >= 0 &&
           b->offset < 63)
    result = SymValue{"", a->offset >> b->offset};
  else if (plain && b && op == "and")
    result = SymValue{"", a->offset & b->offset};
  else if (plain && b && op == "or")
    result = SymValue{"", a->offset | b->offset};
  else if (plain && b && op == "xor")
    result = SymValue{"", a->offset ^ b->offset};
  else if (op == "not" && plain && parts.size() > 1)
    result = SymValue{"", parts[1] == "pred" ? !a->offset : ~a->offset};
  else if (op == "selp" && in.operands.size() == 4) {
    std::optional<SymValue> c = value(i, 3, env);
    if (c && c->base.empty())
      result = c->offset ? a : b;
  } else if (op == "setp" && plain && b && parts.size() >= 2) {
    if (std::optional<int64_t> r = compare(parts[1], a->offset, b->offset))
      result = SymValue{"", *r};
  }
  if (!result)
    return forget();
  env[out[0]] = *result;
}

FirstRound::FirstRound(const Program &p,
                       const std::map<unsigned, llvm::BitVector> &loops)
    : p(p) {
  size_t n = p.blocks().size();
  auto back = [&](unsigned from, unsigned to) {
    auto it = loops.find(to);
    return it != loops.end() && it->second.test(from);
  };
  std::vector<unsigned> pending(n, 0); // forward predecessors not yet done
  for (unsigned b = 0; b < n; ++b)
    for (unsigned s : p.blocks()[b].succs)
      if (!back(b, s))
        ++pending[s];
  std::vector<std::optional<Env>> in(n);
  std::vector<std::vector<SymValue>> waitedIn(n);
  if (n)
    in[0] = Env();
  std::vector<unsigned> ready;
  for (unsigned b = 0; b < n; ++b)
    if (!pending[b])
      ready.push_back(b);
  while (!ready.empty()) {
    unsigned b = ready.back();
    ready.pop_back();
    std::optional<Env> env = in[b];
    std::vector<SymValue> waited = waitedIn[b];
    if (env)
      for (unsigned i = p.blocks()[b].begin; i < p.blocks()[b].end; ++i)
        step(i, *env, waited);
    for (unsigned s : p.blocks()[b].succs) {
      if (back(b, s))
        continue;
      if (env) {
        if (!in[s]) {
          in[s] = *env;
        } else { // values both paths agree on
          for (auto it = in[s]->begin(); it != in[s]->end();) {
            auto other = env->find(it->first);
            it = other != env->end() && other->second == it->second
                     ? std::next(it)
                     : in[s]->erase(it);
          }
        }
        for (const SymValue &w : waited) // waited on some path: not first
          if (!llvm::is_contained(waitedIn[s], w))
            waitedIn[s].push_back(w);
      }
      if (--pending[s] == 0)
        ready.push_back(s);
    }
  }
}
