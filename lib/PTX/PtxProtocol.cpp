//===- PtxProtocol.cpp - the wgmma protocol checked on PTX ----------------===//
//
// A forward dataflow over each function's CFG. The state at a point: the
// wgmma groups that may be pending there (committed groups newest first,
// and the mma_async ops issued since the last commit), each as the
// registers its mma_async ops read and write; the registers of any
// mma_async that other instructions touched since the last wgmma.fence; an
// unfenced generic write to shared memory; and whether an mbarrier wait ran
// since the last commit. Joins take the union of what may be pending (the
// PTX ISA makes each access undefined if it may be), so a rule holds on
// every path.
//
// PTX ISA 9.7.15.5.1 (wgmma.mma_async): accessing an accumulator or
// A-fragment register before a wait_group completed the group is undefined
// (protocol_c4); wgmma.fence must come before the first mma_async and
// between another instruction's access to its registers and the mma_async
// (protocol_c1), except accumulator chaining between mma_async ops.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/PTX/PtxProtocol.h"
#include "nvwgmma/PTX/ParsePtx.h"
#include "nvwgmma/PTX/PtxFirstRound.h"
#include "nvwgmma/PTX/PtxProgram.h"
#include "nvwgmma/PTX/PtxValues.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <map>
#include <set>

using namespace mlir::nvwgmma::ptx;
using llvm::StringRef;

namespace {

enum class Kind {
  Mma,
  Fence,
  Commit,
  Wait,
  ProxyFence,
  SmemWrite,   // generic proxy
  AsyncRead,   // the async proxy reading shared memory (a TMA store)
  TmaLoad,     // into shared memory, completing on an mbarrier
  BarrierWait, // mbarrier try_wait / test_wait
  Release,     // a plain mbarrier arrive: a consumer frees a stage
  Return,
  Other
};

Kind classify(StringRef m) {
  if (m.starts_with("wgmma.mma_async"))
    return Kind::Mma;
  if (m.starts_with("wgmma.fence"))
    return Kind::Fence;
  if (m.starts_with("wgmma.commit_group"))
    return Kind::Commit;
  if (m.starts_with("wgmma.wait_group"))
    return Kind::Wait;
  if (m.starts_with("fence.proxy.async"))
    return Kind::ProxyFence;
  if (m.starts_with("mbarrier.try_wait") || m.starts_with("mbarrier.test_wait"))
    return Kind::BarrierWait;
  if (m.starts_with("mbarrier.arrive") && !m.contains("expect_tx"))
    return Kind::Release;
  if (m.starts_with("cp.async.bulk") || m.starts_with("cp.reduce.async.bulk")) {
    // cp.async.bulk[.tensor].<dst>.<src>: the source state space second
    bool toShared = m.contains(".shared::cluster.global") ||
                    m.contains(".shared::cta.global");
    if (toShared)
      return m.contains("mbarrier") ? Kind::TmaLoad : Kind::Other;
    if (m.contains(".global.shared") || m.contains(".shared::cluster.shared"))
      return Kind::AsyncRead;
    return Kind::Other;
  }
  // cp.async (not bulk) writes shared memory in the generic proxy
  if (m.starts_with("cp.async.ca.shared") ||
      m.starts_with("cp.async.cg.shared"))
    return Kind::SmemWrite;
  if ((m.starts_with("st.") || m.starts_with("atom.") ||
       m.starts_with("red.")) &&
      m.contains(".shared") && !m.starts_with("st.async") &&
      !m.starts_with("red.async"))
    return Kind::SmemWrite;
  if (m.starts_with("stmatrix"))
    return Kind::SmemWrite;
  if (m == "ret" || m.starts_with("ret.") || m == "exit" ||
      m.starts_with("exit."))
    return Kind::Return;
  return Kind::Other;
}

/// The registers of the mma_async ops that may be pending, with the
/// mma_async each belongs to (the first by line where several do).
using RegMap = std::map<Reg, unsigned>;

void unite(RegMap &into, const RegMap &from) {
  for (auto [r, i] : from) {
    auto [it, inserted] = into.emplace(r, i);
    if (!inserted)
      it->second = std::min(it->second, i);
  }
}

constexpr unsigned kFunction = ~0u; // a finding about the whole function
constexpr unsigned kMaxGroups = 8;  // wait_group's immediate is at most 7

struct State {
  bool reached = false;
  std::vector<RegMap> groups; // committed, newest first
  RegMap open;                // issued since the last commit
  RegMap touched;             // mma_async registers another instruction
                              // accessed since the last fence -> accessor
  std::set<Reg> read;         // those of them read (not only written)
  bool unfenced = true;       // no wgmma.fence yet on some path
  int smemWrite = -1;         // an unfenced generic write to shared memory
  bool waited = false;        // an mbarrier wait in this loop round
  Facts facts;                // register ranges this path has learned
  // Shared memory the mma_async ops read since the last mbarrier wait:
  // each descriptor's bytes (protocol_c8); of two paths, the larger.
  std::map<Reg, unsigned> segment;
  unsigned segmentBytes = 0;
  // Groups committed in this round of the innermost loop (protocol_c7):
  // the ones older than that are the previous rounds'.
  unsigned roundGroups = 0;

  bool operator==(const State &o) const {
    return sameProtocol(o) && facts == o.facts && segment == o.segment;
  }
  /// Equal but for the facts.
  bool sameProtocol(const State &o) const {
    return reached == o.reached && groups == o.groups && open == o.open &&
           touched == o.touched && read == o.read && unfenced == o.unfenced &&
           smemWrite == o.smemWrite && waited == o.waited &&
           roundGroups == o.roundGroups;
  }

  void join(const State &o) {
    if (!o.reached)
      return;
    if (!reached) {
      *this = o;
      return;
    }
    if (groups.size() < o.groups.size())
      groups.resize(o.groups.size());
    for (auto [k, g] : llvm::enumerate(o.groups))
      unite(groups[k], g);
    unite(open, o.open);
    unite(touched, o.touched);
    read.insert(o.read.begin(), o.read.end());
    unfenced |= o.unfenced;
    if (smemWrite < 0 || (o.smemWrite >= 0 && o.smemWrite < smemWrite))
      smemWrite = o.smemWrite;
    waited &= o.waited;
    roundGroups = std::min(roundGroups, o.roundGroups);
    facts = joinFacts(facts, o.facts);
    if (o.segmentBytes > segmentBytes) {
      segment = o.segment;
      segmentBytes = o.segmentBytes;
    }
  }

  /// Where `r` may be pending: the mma_async it belongs to and whether its
  /// group is committed.
  std::optional<std::pair<unsigned, bool>> pending(Reg r) const {
    if (auto it = open.find(r); it != open.end())
      return std::make_pair(it->second, false);
    for (const RegMap &g : groups)
      if (auto it = g.find(r); it != g.end())
        return std::make_pair(it->second, true);
    return std::nullopt;
  }
};

/// The states reaching a block, kept apart where the protocol state differs
/// (up to kMaxPaths; past that, one state for all): joining them would
/// forget which branch decisions go with which state, and a path no thread
/// takes could then report. Paths in the same protocol state share one
/// state with the facts both know.
constexpr unsigned kMaxPaths = 8;

struct Paths {
  std::vector<State> states;
  bool folded = false;

  /// Adds a path's state; whether anything changed.
  bool add(const State &s) {
    State *into = nullptr;
    if (folded) {
      into = &states.front();
    } else {
      for (State &t : states)
        if (t.sameProtocol(s))
          into = &t;
    }
    if (!into && states.size() < kMaxPaths) {
      states.push_back(s);
      return true;
    }
    if (!into) { // too many: from now on one state for every path
      State all = s;
      for (const State &t : states)
        all.join(t);
      states = {std::move(all)};
      folded = true;
      return true;
    }
    State joined = *into;
    joined.join(s);
    if (joined == *into)
      return false;
    *into = std::move(joined);
    return true;
  }
};

class Checker {
public:
  Checker(const Program &p, const CheckOptions &options,
          std::vector<Finding> &out)
      : p(p), values(p), options(options), out(out) {
    for (unsigned i = 0; i < p.size(); ++i) {
      kinds.push_back(classify(p.at(i).mnemonic));
      if (kinds.back() == Kind::TmaLoad)
        loadsThroughTma = true;
      if (kinds.back() == Kind::Mma) {
        for (Reg r : accumulator(i))
          wgmmaRegs.insert(r);
        for (Reg r : fragmentA(i))
          wgmmaRegs.insert(r);
      }
    }
  }

  /// Registers whose value may differ between the threads of a warpgroup:
  /// derived from %tid, %laneid, loaded or exchanged values (flow
  /// insensitive; parameters, constants, %ctaid and symbols are uniform).
  void findVarying() {
    for (StringRef special :
         {"%tid", "%laneid", "%warpid", "%clock", "%clock64"})
      if (std::optional<Reg> r = p.find(special))
        varying.insert(*r);
    auto source = [](StringRef m) {
      return (m.starts_with("ld.") && !m.starts_with("ld.param")) ||
             m.starts_with("ldu") || m.starts_with("atom") ||
             m.starts_with("shfl") || m.starts_with("ldmatrix") ||
             m.starts_with("mbarrier") || m.starts_with("elect") ||
             m.starts_with("vote") || m.starts_with("match") ||
             m.starts_with("activemask") || m.starts_with("redux");
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (unsigned i = 0; i < p.size(); ++i) {
        const Instruction &in = p.at(i);
        if (!p.writesFirstOperand(i))
          continue;
        bool vary = source(in.mnemonic);
        for (unsigned k = 1; k < in.operands.size() && !vary; ++k)
          for (Reg r : p.registers(i, k))
            vary |= varying.count(r) != 0;
        if (std::optional<Reg> g = p.guard(i))
          vary |= varying.count(*g) != 0;
        if (!vary)
          continue;
        for (Reg r : p.registers(i, 0))
          changed |= varying.insert(r).second;
      }
    }
  }

  /// A generic store every thread makes to one address (a flag, a
  /// partition's bookkeeping) never writes an operand tile, which needs a
  /// distinct address per thread.
  bool uniformAddress(unsigned i) const {
    const Instruction &in = p.at(i);
    if (in.operands.empty() || !in.operands[0].starts_with("[") ||
        in.mnemonic.starts_with("stmatrix") ||
        in.mnemonic.starts_with("cp.async"))
      return false;
    return llvm::none_of(p.registers(i, 0),
                         [&](Reg r) { return varying.count(r) != 0; });
  }

  /// Natural loops, by header: a header is the target of a back edge, an
  /// edge to a block that dominates its source (the text order of blocks
  /// says nothing: LLVM may place a loop's blocks before its header).
  void findLoops() {
    size_t n = p.blocks().size();
    std::vector<std::vector<unsigned>> preds(n);
    for (unsigned b = 0; b < n; ++b)
      for (unsigned succ : p.blocks()[b].succs)
        preds[succ].push_back(b);
    std::vector<llvm::BitVector> dom(n, llvm::BitVector(n, true));
    dom[0] = llvm::BitVector(n, false);
    dom[0].set(0);
    for (bool changed = true; changed;) {
      changed = false;
      for (unsigned b = 1; b < n; ++b) {
        llvm::BitVector d(n, true);
        bool any = false;
        for (unsigned q : preds[b]) {
          d &= dom[q];
          any = true;
        }
        if (!any)
          d.reset(); // unreachable
        d.set(b);
        if (d != dom[b]) {
          dom[b] = std::move(d);
          changed = true;
        }
      }
    }
    // Natural loops: a back edge's header and every block that reaches the
    // edge's source without passing the header.
    for (unsigned b = 0; b < n; ++b)
      for (unsigned h : p.blocks()[b].succs) {
        if (!dom[b].test(h))
          continue;
        llvm::BitVector &body = loops.try_emplace(h, n, false).first->second;
        body.set(h);
        std::vector<unsigned> work{b};
        while (!work.empty()) {
          unsigned x = work.back();
          work.pop_back();
          if (body.test(x))
            continue;
          body.set(x);
          llvm::append_range(work, preds[x]);
        }
      }
  }

  /// The innermost natural loop holding block `b` (its body), or null.
  const llvm::BitVector *innermostLoop(unsigned b) const {
    const llvm::BitVector *best = nullptr;
    for (const auto &[h, body] : loops)
      if (body.test(b) && (!best || body.count() < best->count()))
        best = &body;
    return best;
  }

  /// Bytes of shared memory operand `k` (1: A, 2: B) of mma_async `i`
  /// reads through its descriptor: 64 x K (A, halved where sparse) or
  /// N x K elements.
  unsigned operandBytes(unsigned i, unsigned k) const {
    llvm::SmallVector<StringRef> parts;
    p.at(i).mnemonic.split(parts, '.');
    bool sparse = llvm::is_contained(parts, "sp");
    std::optional<std::array<int64_t, 3>> shape;
    unsigned at = 0;
    for (auto [j, part] : llvm::enumerate(parts))
      if (!shape && (shape = mlir::nvwgmma::parseWgmmaShape(part)))
        at = j;
    if (!shape || parts.size() < at + 4)
      return 0;
    auto bits = [](StringRef t) -> unsigned {
      return llvm::StringSwitch<unsigned>(t)
          .Cases("f16", "bf16", 16)
          .Case("tf32", 32)
          .Cases("e4m3", "e5m2", "s8", "u8", 8)
          .Case("b1", 1)
          .Default(0);
    };
    auto [m, nn, kk] = *shape;
    int64_t elems = k == 1 ? m * kk / (sparse ? 2 : 1) : nn * kk;
    return elems * bits(parts[at + (k == 1 ? 2 : 3)]) / 8;
  }

  /// Whether register `r` is written in the loop `body` (or anywhere, for
  /// an mma_async outside loops): a descriptor the round computes, not a
  /// one-shot fill's (Q of attention, read in every round).
  bool computedIn(Reg r, const llvm::BitVector *body) const {
    llvm::ArrayRef<unsigned> writers = p.writers(r);
    return !writers.empty() && (!body || llvm::any_of(writers, [&](unsigned i) {
      return body->test(p.blockIndexOf(i));
    }));
  }

  void run() {
    if (p.blocks().empty() || !hasAny(Kind::Mma))
      return strictNotes();
    findVarying();
    findLoops();
    std::vector<Paths> in(p.blocks().size());
    State entry;
    entry.reached = true;
    in[0].add(entry);
    std::vector<bool> queued(p.blocks().size(), false);
    std::vector<unsigned> work{0};
    queued[0] = true;
    unsigned budget = 64 * kMaxPaths * p.blocks().size() + 64;
    while (!work.empty() && budget-- > 0) {
      unsigned b = work.back();
      work.pop_back();
      queued[b] = false;
      // A copy: a block that is its own successor adds to in[b] below.
      std::vector<State> states = in[b].states;
      for (State &s : states) {
        walk(b, s, /*report=*/false);
        for (unsigned succ : p.blocks()[b].succs) {
          // An edge no thread can take (its branch contradicts what the
          // path learned) carries nothing.
          std::optional<Facts> edge = values.along(b, succ, s.facts);
          if (!edge)
            continue;
          std::swap(s.facts, *edge); // the edge's facts, then back
          bool changed = in[succ].add(s);
          std::swap(s.facts, *edge);
          if (changed && !queued[succ]) {
            queued[succ] = true;
            work.push_back(succ);
          }
        }
      }
    }
    converged = work.empty();
    for (unsigned b = 0; b < p.blocks().size(); ++b)
      for (State s : in[b].states)
        walk(b, s, /*report=*/true);
    reportEarlyUses();
    checkExpectedBytes();
    checkFirstParity();
    strictNotes();
  }

private:
  bool hasAny(Kind k) const { return llvm::is_contained(kinds, k); }

  llvm::ArrayRef<Reg> accumulator(unsigned i) const {
    return p.registers(i, 0);
  }
  llvm::ArrayRef<Reg> fragmentA(unsigned i) const {
    const auto &ops = p.at(i).operands;
    return ops.size() > 1 && ops[1].starts_with("{") ? p.registers(i, 1)
                                                     : llvm::ArrayRef<Reg>();
  }

  /// Kinds whose guarded execution may or may not change the state (an
  /// mma_async is never guarded in practice; loads, returns and others
  /// change nothing a guard could skip).
  static bool changesState(Kind k) {
    switch (k) {
    case Kind::Fence:
    case Kind::Commit:
    case Kind::Wait:
    case Kind::ProxyFence:
    case Kind::SmemWrite:
    case Kind::AsyncRead:
    case Kind::BarrierWait:
      return true;
    default:
      return false;
    }
  }

  void walk(unsigned b, State &s, bool report) {
    const Block &blk = p.blocks()[b];
    // Each round of a loop needs its own wait (protocol_c6): which tile a
    // wait makes visible is not known here, so any wait in the round counts.
    if (loops.count(b)) {
      s.waited = false;
      s.roundGroups = 0;
    }
    for (unsigned i = blk.begin; i < blk.end; ++i) {
      if (p.guard(i) && changesState(kinds[i])) {
        // may not run: the state after is either
        State skipped = s;
        step(i, s, report);
        s.join(skipped);
      } else {
        step(i, s, report);
      }
    }
  }

  void step(unsigned i, State &s, bool report) {
    const Instruction &in = p.at(i);
    switch (kinds[i]) {
    case Kind::Mma:
      return mma(i, s, report);
    case Kind::Fence:
      s.touched.clear();
      s.read.clear();
      s.unfenced = false;
      return;
    case Kind::Commit:
      s.groups.insert(s.groups.begin(), std::move(s.open));
      s.open.clear();
      ++s.roundGroups;
      if (s.groups.size() > kMaxGroups) {
        unite(s.groups[kMaxGroups - 1], s.groups.back());
        s.groups.pop_back();
      }
      s.roundGroups = std::min<unsigned>(s.roundGroups, s.groups.size());
      return;
    case Kind::Wait: {
      std::optional<unsigned> n = waitDepth(in);
      if (!n) {
        unknownWaits.insert(i);
        n = 0; // the strict note says so; any other guess could hide a bug
      }
      if (s.groups.size() > *n)
        s.groups.resize(*n);
      s.roundGroups = std::min<unsigned>(s.roundGroups, s.groups.size());
      return;
    }
    case Kind::ProxyFence:
      s.smemWrite = -1;
      return;
    case Kind::SmemWrite:
      if (uniformAddress(i))
        bookkeeping.insert(i);
      else if (s.smemWrite < 0)
        s.smemWrite = i;
      break;
    case Kind::AsyncRead:
      if (s.smemWrite >= 0 && report)
        emit(i, "protocol_c5",
             llvm::formatv("a fence.proxy.async must separate a generic-proxy "
                           "write to shared memory from '{0}', which reads "
                           "shared memory in the async proxy, but got none "
                           "(protocol_c5)",
                           in.mnemonic),
             {{p.at(s.smemWrite).line, "shared memory written here"}});
      s.smemWrite = -1;
      break;
    case Kind::TmaLoad:
    case Kind::Release:
      if (report)
        checkEarlierRoundsDone(i, s);
      break;
    case Kind::BarrierWait:
      s.waited = true;
      s.segment.clear();
      s.segmentBytes = 0;
      break;
    case Kind::Return:
      if (report)
        atReturn(i, s);
      break;
    default:
      break;
    }
    access(i, s, report);
  }

  std::optional<unsigned> waitDepth(const Instruction &in) const {
    unsigned n;
    if (in.operands.size() != 1 || in.operands[0].getAsInteger(0, n))
      return std::nullopt;
    return n;
  }

  /// Another instruction reads or writes registers: protocol_c4 where any
  /// may be pending; they count as touched for the next mma_async.
  void access(unsigned i, State &s, bool report) {
    const Instruction &in = p.at(i);
    bool reported = false;
    bool copiesAmongWgmmaRegs =
        p.writesFirstOperand(i) && in.mnemonic.starts_with("mov") &&
        !p.registers(i, 0).empty() &&
        llvm::all_of(p.registers(i, 0),
                     [&](Reg r) { return wgmmaRegs.count(r) != 0; });
    auto visit = [&](Reg r, bool writes) {
      if (!wgmmaRegs.count(r))
        return;
      if (auto pend = s.pending(r); pend && report && !reported) {
        reported = true;
        earlyUses[pend->first].push_back(EarlyUse{i, r, writes, pend->second});
      }
      s.touched.emplace(r, i);
      // A copy between mma_async registers (the zeroing of an accumulator,
      // spread by LLVM) is dead before a scale-d-false mma_async too.
      if (!writes && !copiesAmongWgmmaRegs)
        s.read.insert(r);
    };
    if (std::optional<Reg> g = p.guard(i))
      visit(*g, false);
    for (unsigned k = 0; k < in.operands.size(); ++k)
      for (Reg r : p.registers(i, k))
        visit(r, k == 0 && p.writesFirstOperand(i));
  }

  /// protocol_c4 once per mma_async: its first early access, with a count
  /// of the others (an epilogue reads every accumulator register).
  void reportEarlyUses() {
    for (auto &[mma, uses] : earlyUses) {
      llvm::sort(uses, [](const EarlyUse &a, const EarlyUse &b) {
        return a.at < b.at;
      });
      uses.erase(std::unique(uses.begin(), uses.end(),
                             [](const EarlyUse &a, const EarlyUse &b) {
                               return a.at == b.at;
                             }),
                 uses.end());
      const EarlyUse &u = uses.front();
      size_t more = uses.size() - 1;
      bool isA = llvm::is_contained(fragmentA(mma), u.reg);
      emit(u.at, "protocol_c4",
           llvm::formatv(
               "a wgmma.wait_group must complete the group of the "
               "wgmma.mma_async at line {0} before '{1}' {2} its {3} "
               "register {4}, but got {5}{6} (protocol_c4)",
               p.at(mma).line, p.at(u.at).mnemonic,
               u.writes ? "writes" : "reads",
               isA ? "A-fragment" : "accumulator", p.name(u.reg),
               u.committed ? "its group still pending"
                           : "the mma_async not even committed",
               more ? llvm::formatv(", here and at {0} more instruction{1}",
                                    more, more == 1 ? "" : "s")
                          .str()
                    : std::string()),
           {{p.at(mma).line, "the wgmma.mma_async"}});
    }
  }

  /// Whether mma_async `i`'s scale-d is a constant false: the literal 0,
  /// or a predicate its block set from constants (`setp.ne.b32 p, 0, 0`).
  bool scaleDZero(unsigned i) const {
    const Instruction &in = p.at(i);
    size_t at = in.mnemonic.contains(".sp.") ? 5 : 3;
    if (in.operands.size() <= at)
      return false;
    StringRef scale = in.operands[at];
    if (scale == "0")
      return true;
    llvm::ArrayRef<Reg> pred = p.registers(i, at);
    if (pred.size() != 1)
      return false;
    for (unsigned j = i; j-- > p.blockOf(i).begin;) {
      if (!p.writesFirstOperand(j) ||
          !llvm::is_contained(p.registers(j, 0), pred[0]))
        continue;
      const Instruction &def = p.at(j);
      int64_t x, y;
      if (def.mnemonic.starts_with("mov.pred") && def.operands.size() == 2)
        return def.operands[1] == "0";
      if (!def.mnemonic.starts_with("setp.") || def.operands.size() != 3 ||
          def.operands[1].getAsInteger(0, x) ||
          def.operands[2].getAsInteger(0, y) || !def.guard.empty())
        return false;
      if (def.mnemonic.starts_with("setp.ne."))
        return x == y;
      if (def.mnemonic.starts_with("setp.eq."))
        return x != y;
      return false;
    }
    return false;
  }

  /// Adds the shared memory mma_async `i` reads to the state's segment.
  void readsShared(unsigned i, State &s, bool report) {
    const llvm::BitVector *body = innermostLoop(p.blockIndexOf(i));
    for (unsigned k : {1u, 2u}) {
      if (k >= p.at(i).operands.size() ||
          p.at(i).operands[k].starts_with("{") || p.registers(i, k).size() != 1)
        continue;
      Reg desc = p.registers(i, k)[0];
      if (!computedIn(desc, body) || s.segment.count(desc))
        continue;
      unsigned bytes = operandBytes(i, k);
      s.segment[desc] = bytes;
      s.segmentBytes += bytes;
    }
    if (report && s.segmentBytes > widest.first)
      widest = {s.segmentBytes, i};
  }

  /// protocol_c8 on PTX: the bytes one wait makes visible (the widest
  /// segment of mma_async reads between waits) exceed every expect_tx.
  void checkExpectedBytes() {
    std::vector<std::pair<unsigned, int64_t>> expects;
    for (unsigned i = 0; i < p.size(); ++i) {
      StringRef m = p.at(i).mnemonic;
      if (!m.starts_with("mbarrier.arrive.expect_tx") &&
          !m.starts_with("mbarrier.expect_tx"))
        continue;
      int64_t bytes;
      if (p.at(i).operands.empty() ||
          p.at(i).operands.back().getAsInteger(0, bytes)) {
        uncountedExpect = true; // a register: the checker cannot compare
        return;
      }
      expects.push_back({i, bytes});
    }
    for (auto [i, bytes] : expects)
      if (bytes < widest.first)
        emit(
            i, "protocol_c8",
            llvm::formatv("an mbarrier expect_tx must count at least the {0} "
                          "bytes of shared memory the wgmma.mma_async ops read "
                          "after one wait, but got {1} (protocol_c8)",
                          widest.first, bytes),
            {{p.at(widest.second).line,
              "the last wgmma.mma_async of those reads"}});
  }

  void mma(unsigned i, State &s, bool report) {
    readsShared(i, s, report);
    llvm::SmallVector<Reg> regs(accumulator(i));
    llvm::append_range(regs, fragmentA(i));
    if (report) {
      // With scale-d a constant false the mma_async only writes D: an
      // earlier write of D is dead (LLVM sinks the zeroing of an accumulator
      // below an operand-less wgmma.fence), an earlier read still races.
      size_t writeOnly = scaleDZero(i) ? accumulator(i).size() : 0;
      std::optional<Reg> reg;
      for (auto [k, r] : llvm::enumerate(regs))
        if (s.touched.count(r) && (k >= writeOnly || s.read.count(r))) {
          reg = r;
          break;
        }
      if (reg) {
        unsigned by = s.touched.at(*reg);
        emit(i, "protocol_c1",
             llvm::formatv("a wgmma.fence must separate '{0}' at line {1}, "
                           "which accesses {2}, from this wgmma.mma_async "
                           "that uses it, but got none (protocol_c1)",
                           p.at(by).mnemonic, p.at(by).line, p.name(*reg)),
             {{p.at(by).line, "the register is accessed here"}});
      } else if (s.unfenced) {
        emit(i, "protocol_c1",
             "a wgmma.fence must come before the first wgmma.mma_async, but "
             "got a path from the function's entry without one (protocol_c1)",
             {});
      }
      for (Reg r : fragmentA(i))
        if (auto pend = s.pending(r);
            pend && !llvm::is_contained(fragmentA(pend->first), r)) {
          emit(i, "protocol_c4",
               llvm::formatv("a wgmma.wait_group must complete the group of "
                             "the wgmma.mma_async at line {0} before this "
                             "wgmma.mma_async reads its accumulator register "
                             "{1} as A, but got its group still pending "
                             "(protocol_c4)",
                             p.at(pend->first).line, p.name(r)),
               {{p.at(pend->first).line, "the wgmma.mma_async"}});
          break;
        }
      if (s.smemWrite >= 0)
        emit(i, "protocol_c5",
             "a fence.proxy.async must separate a generic-proxy write to "
             "shared memory from this wgmma.mma_async, but got none "
             "(protocol_c5)",
             {{p.at(s.smemWrite).line, "shared memory written here"}});
      if (loadsThroughTma && !s.waited)
        emit(i, "protocol_c6",
             "a wgmma.mma_async must read shared memory a TMA load fills "
             "only after a wait on an mbarrier in the same round of its "
             "loop, but got no such wait (protocol_c6)",
             {});
    }
    // Reported once: later mma_async ops of the group would repeat them.
    s.smemWrite = -1;
    s.waited = true; // reported once per round
    s.unfenced = false;
    for (Reg r : regs) {
      s.touched.erase(r);
      s.read.erase(r);
      s.open.emplace(r, i);
    }
  }

  /// protocol_c7 on PTX: a ring's stage is refilled (a TMA load) or
  /// released (a plain arrive) in a loop round, the stage an earlier round
  /// read: every group of the earlier rounds must be complete (`wait_group
  /// N` leaves the N newest pending).
  void checkEarlierRoundsDone(unsigned i, const State &s) {
    if (!innermostLoop(p.blockIndexOf(i)))
      return;
    for (size_t k = s.roundGroups; k < s.groups.size(); ++k)
      if (!s.groups[k].empty()) {
        emit(i, "protocol_c7",
             llvm::formatv("'{0}' refills or releases a stage an earlier "
                           "round read only when that round's wgmma groups "
                           "are complete, but got a group of an earlier "
                           "round still pending (protocol_c7)",
                           p.at(i).mnemonic),
             {{p.at(s.groups[k].begin()->second).line,
               "a wgmma.mma_async of that group"}});
        return;
      }
  }

  /// protocol_c9 on PTX: in the first round of every loop (ring counters
  /// at their start values) the first wait on a barrier a TMA load fills
  /// must be for parity 0: a freshly initialised mbarrier passes a wait for
  /// parity 1 at once, before the bytes land.
  void checkFirstParity() {
    if (!loadsThroughTma)
      return;
    FirstRound first(p, loops);
    for (const FirstWait &w : first.waits())
      if (w.first && w.parity == 1 &&
          llvm::is_contained(first.filledBarriers(), w.barrier))
        emit(w.instruction, "protocol_c9",
             "the first wait on a barrier a TMA load fills must be for parity "
             "0 (the phase the load completes), but got parity 1, which a "
             "freshly initialised barrier passes at once (protocol_c9)",
             {});
  }

  void atReturn(unsigned i, const State &s) {
    if (!s.open.empty())
      emit(i, "protocol_c2",
           "every wgmma.mma_async must be committed before the function "
           "returns, but got one that is not (protocol_c2)",
           {{p.at(s.open.begin()->second).line, "the wgmma.mma_async"}});
    for (const RegMap &g : s.groups)
      if (!g.empty()) {
        emit(i, "protocol_c3",
             "every committed group must be completed by a wgmma.wait_group "
             "before the function returns, but got a group that is not "
             "waited on (protocol_c3)",
             {{p.at(g.begin()->second).line, "the wgmma.mma_async"}});
        break;
      }
  }

  void strictNotes() {
    if (!options.strict)
      return;
    if (!converged)
      emit(kFunction, "protocol_unchecked",
           "the dataflow must reach a fixed point, but got none within its "
           "budget: later findings may be missing (protocol_unchecked)",
           {}, Finding::Warning);
    for (unsigned i : bookkeeping)
      emit(i, "protocol_c5",
           "a generic store to shared memory is taken as bookkeeping no "
           "wgmma reads, but got one the checker cannot relate to the "
           "operands: every thread stores to one address (protocol_c5, "
           "strict)",
           {}, Finding::Warning);
    if (uncountedExpect)
      emit(kFunction, "protocol_unchecked",
           "an expect_tx must count its bytes as an immediate, but got a "
           "register: protocol_c8 is not checked (protocol_unchecked)",
           {}, Finding::Warning);
    for (unsigned i : unknownWaits)
      emit(i, "protocol_unchecked",
           "wgmma.wait_group must take an immediate, but got an operand the "
           "checker cannot read; taken as 0 (protocol_unchecked)",
           {}, Finding::Warning);
    if (hasAny(Kind::Mma) && loadsThroughTma)
      emit(kFunction, "protocol_unchecked",
           "the ring rules (protocol_c7 release, protocol_c9 parity), the "
           "stage of protocol_c6 and the exact bytes of protocol_c8 (only a "
           "lower bound is checked) need barrier and stage addresses, which "
           "the PTX checker does not relate; check the MLIR with "
           "--nvwgmma-check-protocol (protocol_unchecked)",
           {}, Finding::Warning);
  }

  void emit(unsigned i, StringRef label, const std::string &message,
            std::vector<std::pair<unsigned, std::string>> notes,
            Finding::Severity severity = Finding::Error) {
    unsigned line = i == kFunction ? p.function().line : p.at(i).line;
    if (!emitted.insert({line, label.str()}).second)
      return;
    Finding f;
    f.severity = severity;
    f.function = p.function().name;
    f.line = line;
    f.label = label.str();
    f.message = message;
    f.notes = std::move(notes);
    out.push_back(std::move(f));
  }

  const Program &p;
  Values values;
  const CheckOptions &options;
  std::vector<Finding> &out;
  std::vector<Kind> kinds;
  std::set<Reg> wgmmaRegs;
  bool loadsThroughTma = false;
  bool converged = true;
  std::set<unsigned> unknownWaits;
  std::set<Reg> varying;
  std::map<unsigned, llvm::BitVector> loops;  // natural loop bodies by header
  std::pair<unsigned, unsigned> widest{0, 0}; // (bytes, last mma_async)
  bool uncountedExpect = false;
  std::set<unsigned> bookkeeping; // uniform-address generic stores
  struct EarlyUse {
    unsigned at;
    Reg reg;
    bool writes, committed;
  };
  std::map<unsigned, std::vector<EarlyUse>> earlyUses; // by mma_async
  std::set<std::pair<unsigned, std::string>> emitted;
};

} // namespace

std::vector<Finding> mlir::nvwgmma::ptx::checkPtx(StringRef text,
                                                  const CheckOptions &options) {
  std::vector<Finding> out;
  for (const Function &f : parseModule(text)) {
    Program p(f);
    size_t first = out.size();
    Checker(p, options, out).run();
    std::stable_sort(
        out.begin() + first, out.end(),
        [](const Finding &a, const Finding &b) { return a.line < b.line; });
  }
  return out;
}

const char *mlir::nvwgmma::ptx::severityName(Finding::Severity s) {
  static const char *names[] = {"error", "warning", "note"};
  return names[s];
}

std::string
mlir::nvwgmma::ptx::formatFindings(const std::vector<Finding> &findings,
                                   StringRef file) {
  std::string s;
  for (const Finding &f : findings) {
    s += llvm::formatv("{0}:{1}: {2}: {3}\n", file, f.line,
                       severityName(f.severity), f.message)
             .str();
    for (const auto &[line, what] : f.notes)
      s += llvm::formatv("{0}:{1}: note: {2}\n", file, line, what).str();
  }
  return s;
}
