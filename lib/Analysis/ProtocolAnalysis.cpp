//===- ProtocolAnalysis.cpp - wgmma protocol dataflow ---------------------===//
//
// A forward dataflow over each function. The state at a program point:
//   everFenced  - a wgmma.fence ran at all (required before the first mma);
//   dirty       - register values (SSA values flowing into an mma_async's
//                 accumulator or A fragment) that a non-wgmma op accessed
//                 since the last wgmma.fence;
//   proxyStores - generic-proxy shared stores not yet followed by
//                 fence.proxy.async;
//   uncommitted - mma_async ops issued since the last commit_group;
//   groups      - committed groups not known to be complete, oldest first.
// Structured loops iterate to a fixpoint (states only grow, groups are
// capped), then run once more to report; multi-block regions use a
// worklist. Values are tracked through forwarding (scf.for/if/yield, branch
// operands) and register plumbing (llvm.insertvalue/extractvalue/bitcast).
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/Analysis/ProtocolAnalysis.h"

#include "PipelineModel.h"
#include "Plumbing.h"

#include "nvwgmma/IR/NVWGMMAOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::nvwgmma;

const char *ProtocolViolation::label() const {
  switch (kind) {
  case MissingFence:
    return "protocol_c1";
  case NotCommitted:
    return "protocol_c2";
  case NotWaited:
    return "protocol_c3";
  case EarlyUse:
    return "protocol_c4";
  case MissingProxyFence:
    return "protocol_c5";
  case ReadBeforeFilled:
    return "protocol_c6";
  case ReleasedWhilePending:
    return "protocol_c7";
  case ExpectTxMismatch:
    return "protocol_c8";
  case PhaseMismatch:
    return "protocol_c9";
  case Unmodelled:
    return "protocol_strict";
  case Unchecked:
    return "protocol_unchecked";
  }
  return "protocol";
}

std::string ProtocolViolation::message() const {
  if (!text.empty())
    return text;
  switch (kind) {
  case MissingFence:
    return "an nvwgmma.fence must separate the last non-wgmma access to the "
           "accumulator or A-fragment registers from this mma_async, but got "
           "none (protocol_c1)";
  case NotCommitted:
    return "every mma_async must be committed before the function returns, "
           "but got one that is not (protocol_c2)";
  case NotWaited:
    return "every committed group must be completed by a wait_group before "
           "the function returns, but got a group that is not waited on "
           "(protocol_c3)";
  case EarlyUse:
    return llvm::formatv("the mma_async group must be completed by a "
                         "wait_group {0} before this use of its result, but "
                         "got {1}{2} (protocol_c4)",
                         waitDepth,
                         uncommitted ? "the mma_async not even committed"
                                     : "its group still pending",
                         moreUses
                             ? llvm::formatv(", here and at {0} more use{1}",
                                             moreUses, moreUses == 1 ? "" : "s")
                                   .str()
                             : std::string())
        .str();
  case MissingProxyFence:
    return "a fence.proxy.async must separate a generic-proxy write to shared "
           "memory from this mma_async, but got none (protocol_c5)";
  default:
    return "";
  }
}

const char *ProtocolViolation::note() const {
  switch (kind) {
  case MissingFence:
    return "registers last accessed here";
  case MissingProxyFence:
    return "shared memory written here";
  case NotCommitted:
    return "uncommitted mma_async issued here";
  case NotWaited:
    return "mma_async of the pending group issued here";
  default:
    return "mma_async issued here";
  }
}

namespace {

using OpSet = llvm::SmallSetVector<Operation *, 4>;

constexpr size_t kMaxGroups = 16;
/// A peeked value that is a constant true: no wait was needed.
constexpr int kAnySlot = -2;
/// Slots read more iterations ago than this are no longer tracked by stage.
constexpr int64_t kMaxAge = 64;

bool sameSet(const llvm::DenseSet<Value> &a, const llvm::DenseSet<Value> &b) {
  return a.size() == b.size() &&
         llvm::all_of(a, [&](Value v) { return b.contains(v); });
}

StageExpr unknownStage() { return StageExpr{Value(), 0, 0}; }

/// An mma_async that may still run, with the stage of each ring slot it
/// reads (PipelineModel::readsOf order) as seen from the current point.
struct Pending {
  Operation *op;
  SmallVector<StageExpr, 2> stages;
  bool operator==(const Pending &o) const {
    return op == o.op && stages == o.stages;
  }
};

/// A set of Pending in insertion order, compared without regard to order.
/// Indexed by hash: a loop whose reads stay pending can carry hundreds of
/// them round its back edge, and a linear search per insert made every
/// join and comparison quadratic in them.
class PendingSet {
public:
  void insert(const Pending &p) {
    SmallVector<unsigned, 1> &slots = index[hashOf(p)];
    for (unsigned i : slots)
      if (items[i] == p)
        return;
    slots.push_back(items.size());
    items.push_back(p);
  }
  void insert(const PendingSet &o) {
    for (const Pending &p : o.items)
      insert(p);
  }
  bool contains(Operation *op) const {
    return llvm::any_of(items, [&](const Pending &p) { return p.op == op; });
  }
  bool empty() const { return items.empty(); }
  void clear() {
    items.clear();
    index.clear();
  }
  Operation *front() const { return items.front().op; }
  auto begin() const { return items.begin(); }
  auto end() const { return items.end(); }
  template <typename F> void rewrite(F f) {
    SmallVector<Pending, 4> old = std::move(items);
    clear();
    for (Pending p : old) {
      for (StageExpr &e : p.stages)
        f(e);
      insert(p);
    }
  }
  bool operator==(const PendingSet &o) const {
    return items.size() == o.items.size() &&
           llvm::all_of(items, [&](const Pending &p) { return o.has(p); });
  }

private:
  bool has(const Pending &p) const {
    auto it = index.find(hashOf(p));
    return it != index.end() &&
           llvm::any_of(it->second, [&](unsigned i) { return items[i] == p; });
  }
  /// 31 bits: DenseMap keeps the two largest unsigned values for itself.
  static unsigned hashOf(const Pending &p) {
    llvm::hash_code h = llvm::hash_value(p.op);
    for (const StageExpr &e : p.stages)
      h = llvm::hash_combine(h, e.counter.getAsOpaquePointer(), e.offset,
                             e.stages);
    return static_cast<unsigned>(static_cast<size_t>(h)) & 0x7fffffffu;
  }

  SmallVector<Pending, 4> items;
  llvm::DenseMap<unsigned, SmallVector<unsigned, 1>> index;
};

struct State {
  bool reachable = false;
  bool everFenced = false;
  llvm::DenseSet<Value> dirty;
  OpSet proxyStores;
  Operation *lastAccess = nullptr;
  /// A fence ran since the last mma_async (orders a change of shape).
  bool fencedSinceMma = false;
  PendingSet uncommitted;
  SmallVector<PendingSet, 4> groups;
  /// Barrier slots waited on (full barriers: their stage has landed).
  SmallVector<SlotRef> ready;
  /// Slots waited on along some paths but not all: one warpgroup waits
  /// (a branch on the warpgroup index) and a CTA barrier then hands what it
  /// saw to every thread, which makes them ready.
  SmallVector<SlotRef> partial;
  /// i1 values that, where true, mean a probe (a non-blocking try_wait)
  /// found the slot's phase complete; a slot id of kAnySlot stands for a
  /// constant true a front end passes where no wait is needed.
  SmallVector<std::pair<Value, SlotRef>, 2> peeked;
  /// Loop bounds this path has passed: counter + offset >= bound (the
  /// false side of a `x < bound` test). A later iteration of the loop that
  /// runs only while counter < bound cannot follow such a path (a wait
  /// guarded by "the next block exists" is skipped only in the last one).
  struct Exhausted {
    Value counter;
    int64_t offset;
    Value bound;
    /// The bound is the one the counter's loop runs under: no iteration
    /// follows where the fact holds.
    bool endsLoop = false;
    bool operator==(const Exhausted &o) const {
      return counter == o.counter && offset == o.offset && bound == o.bound;
    }
  };
  SmallVector<Exhausted, 1> exhausted;
  OpSet unsynced;
  Operation *lastWait = nullptr;

  bool operator==(const State &o) const {
    return reachable == o.reachable && everFenced == o.everFenced &&
           sameSet(dirty, o.dirty) && proxyStores == o.proxyStores &&
           lastAccess == o.lastAccess && fencedSinceMma == o.fencedSinceMma &&
           uncommitted == o.uncommitted && groups == o.groups &&
           sameElements(ready, o.ready) && sameElements(partial, o.partial) &&
           unsynced == o.unsynced && lastWait == o.lastWait &&
           sameElements(peeked, o.peeked) &&
           sameElements(exhausted, o.exhausted);
  }

  /// As many elements, each found in the other (the order is no fact).
  template <typename Range>
  static bool sameElements(const Range &a, const Range &b) {
    return a.size() == b.size() && llvm::all_of(a, [&](const auto &x) {
             return llvm::is_contained(b, x);
           });
  }

  /// What both sides say of a peeked value; a constant true on one side
  /// (kAnySlot) keeps what the other side says.
  void joinPeeked(const State &o) {
    auto has = [](ArrayRef<std::pair<Value, SlotRef>> set, Value v,
                  const SlotRef &slot) {
      return llvm::any_of(set, [&](const auto &y) {
        return y.first == v && (y.second.id == kAnySlot || y.second == slot);
      });
    };
    SmallVector<std::pair<Value, SlotRef>, 2> merged;
    auto add = [&](const std::pair<Value, SlotRef> &x) {
      if (!llvm::is_contained(merged, x))
        merged.push_back(x);
    };
    // Ours where the other side agrees (or passed a constant true), and
    // the other side's where we passed a constant true.
    for (const auto &x : peeked)
      if (x.second.id != kAnySlot ? has(o.peeked, x.first, x.second)
                                  : llvm::any_of(o.peeked, [&](const auto &y) {
                                      return y.first == x.first &&
                                             y.second.id == kAnySlot;
                                    }))
        add(x);
    for (const auto &y : o.peeked)
      if (y.second.id != kAnySlot && llvm::any_of(peeked, [&](const auto &x) {
            return x.first == y.first && x.second.id == kAnySlot;
          }))
        add(y);
    peeked = std::move(merged);
  }

  /// `divergent`: the two sides are threads of one CTA that a branch on
  /// the thread or warpgroup index split (a wait on one side is a wait by
  /// some threads); otherwise they are paths, and a wait on one only is no
  /// wait at all.
  void join(const State &o, bool divergent = false) {
    if (!o.reachable)
      return;
    if (!reachable) {
      *this = o;
      return;
    }
    joinPeeked(o);
    // What this side had passed decides vacuity below, whichever side joins.
    SmallVector<Exhausted, 1> passed = exhausted;
    llvm::erase_if(exhausted, [&](const Exhausted &x) {
      return !llvm::is_contained(o.exhausted, x);
    });
    everFenced = everFenced && o.everFenced;
    fencedSinceMma = fencedSinceMma && o.fencedSinceMma;
    dirty.insert(o.dirty.begin(), o.dirty.end());
    proxyStores.insert(o.proxyStores.begin(), o.proxyStores.end());
    lastAccess = lastAccess ? lastAccess : o.lastAccess;
    lastWait = lastWait ? lastWait : o.lastWait;
    uncommitted.insert(o.uncommitted);
    unsynced.insert(o.unsynced.begin(), o.unsynced.end());
    auto in = [](ArrayRef<SlotRef> set, const SlotRef &x) {
      return llvm::is_contained(set, x);
    };
    // Some threads waited: on a divergent join, either side's facts; on a
    // join of paths, only what every path has at least partially.
    SmallVector<SlotRef> some;
    auto add = [&](const SlotRef &x) {
      if (!in(some, x))
        some.push_back(x);
    };
    for (ArrayRef<SlotRef> mine :
         {ArrayRef<SlotRef>(ready), ArrayRef<SlotRef>(partial)})
      for (const SlotRef &x : mine)
        if (divergent || in(o.ready, x) || in(o.partial, x))
          add(x);
    for (ArrayRef<SlotRef> theirs :
         {ArrayRef<SlotRef>(o.ready), ArrayRef<SlotRef>(o.partial)})
      for (const SlotRef &x : theirs)
        if (divergent || in(ready, x) || in(partial, x))
          add(x);
    llvm::erase_if(
        some, [&](const SlotRef &x) { return in(ready, x) && in(o.ready, x); });
    partial = std::move(some);
    // A fact about stage (k + c) is vacuous on a path that has shown
    // k + c' >= bound with c' <= c: no iteration with that stage follows
    // (a wait for the next block, skipped in the last one).
    auto vacuous = [](ArrayRef<Exhausted> side, const SlotRef &x) {
      return x.stage.counter && llvm::any_of(side, [&](const Exhausted &e) {
               return e.endsLoop && e.counter == x.stage.counter &&
                      x.stage.offset >= e.offset;
             });
    };
    SmallVector<SlotRef> theirs;
    for (const SlotRef &y : o.ready)
      if (!in(ready, y) && vacuous(passed, y))
        theirs.push_back(y);
    llvm::erase_if(ready, [&](const SlotRef &x) {
      return !in(o.ready, x) && !vacuous(o.exhausted, x);
    });
    llvm::append_range(ready, theirs);
    llvm::erase_if(partial, [&](const SlotRef &x) { return in(ready, x); });
    // Align at the most recent group: wait_group counts from the end.
    size_t n = std::max(groups.size(), o.groups.size());
    SmallVector<PendingSet, 4> merged(n);
    for (size_t i = 0; i < n; ++i) {
      if (i < groups.size())
        merged[n - 1 - i].insert(groups[groups.size() - 1 - i]);
      if (i < o.groups.size())
        merged[n - 1 - i].insert(o.groups[o.groups.size() - 1 - i]);
    }
    groups = std::move(merged);
  }

  void capGroups() {
    while (groups.size() > kMaxGroups) {
      groups[1].insert(groups[0]);
      groups.erase(groups.begin());
    }
  }

  /// A CTA-wide barrier: what some threads waited for, all have seen.
  void synchronize() {
    for (const SlotRef &x : partial)
      if (!llvm::is_contained(ready, x))
        ready.push_back(x);
    partial.clear();
  }

  /// wgmma.fence: register accesses so far are ordered.
  void fence() {
    everFenced = true;
    fencedSinceMma = true;
    dirty.clear();
    lastAccess = nullptr;
  }
  /// wgmma.commit_group: the uncommitted ops become the newest group.
  void commit() {
    groups.push_back(uncommitted);
    uncommitted.clear();
    capGroups();
  }
  /// wgmma.wait_group N: all but the N newest groups complete.
  void waitGroup(uint64_t keep) {
    if (groups.size() > keep)
      groups.erase(groups.begin(), groups.end() - keep);
  }

  /// Re-expresses every stage (pending reads and ready slots) with `f`;
  /// slots that become unknown leave `ready`.
  template <typename F> void rebase(F f) {
    uncommitted.rewrite(f);
    for (PendingSet &g : groups)
      g.rewrite(f);
    for (SlotRef &r : ready)
      f(r.stage);
    llvm::erase_if(ready, [](const SlotRef &r) { return r.stage.stages <= 0; });
    for (SlotRef &r : partial)
      f(r.stage);
    llvm::erase_if(partial,
                   [](const SlotRef &r) { return r.stage.stages <= 0; });
    for (auto &[v, r] : peeked)
      if (r.id != kAnySlot)
        f(r.stage);
    llvm::erase_if(peeked, [](const auto &p) {
      return p.second.id != kAnySlot && p.second.stage.stages <= 0;
    });
  }

  /// Whether `mma` may still be running, and the wait depth completing it:
  /// the first mma_async of its group (the group's identity), or null.
  /// In how many of the uncommitted set and the groups `mma` is pending.
  int instances(Operation *mma) const {
    int n = uncommitted.contains(mma);
    for (const PendingSet &g : groups)
      n += g.contains(mma);
    return n;
  }

  Operation *pending(Operation *mma, bool &isUncommitted,
                     int64_t &depth) const {
    if (uncommitted.contains(mma)) {
      isUncommitted = true;
      depth = 0;
      return uncommitted.front();
    }
    for (size_t i = groups.size(); i-- > 0;)
      if (groups[i].contains(mma)) {
        isUncommitted = false;
        depth = static_cast<int64_t>(groups.size() - 1 - i);
        return groups[i].front();
      }
    return nullptr;
  }
};

/// Ops whose operands flow unchanged into region arguments or results.
bool isForwarding(Operation *op) {
  return isa<scf::YieldOp, scf::ForOp, scf::IfOp, scf::WhileOp,
             scf::ConditionOp>(op) ||
         isa<BranchOpInterface>(op);
}

bool isSharedPtr(Type t) {
  auto ptr = dyn_cast<LLVM::LLVMPointerType>(t);
  return ptr && ptr.getAddressSpace() == 3;
}

bool isSharedMemRef(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  if (!m || !m.getMemorySpace())
    return false;
  if (auto i = dyn_cast<IntegerAttr>(m.getMemorySpace()))
    return i.getInt() == 3;
  auto space = dyn_cast<gpu::AddressSpaceAttr>(m.getMemorySpace());
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

bool isGenericSharedStore(Operation *op) {
  if (auto store = dyn_cast<LLVM::StoreOp>(op))
    return isSharedPtr(store.getAddr().getType());
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return isSharedMemRef(store.getMemRef().getType());
  return false;
}

class Analysis {
public:
  /// Reports what it could not decide too, marked `unproven`:
  /// analyzeProtocol turns those into strict-mode errors or one warning.
  explicit Analysis(FunctionOpInterface fn) : fn(fn), model(fn), plumbing(fn) {
    precompute();
  }

  void run(SmallVectorImpl<ProtocolViolation> &out) {
    model.check(out);
    fn->walk([&](Operation *op) {
      const ProtocolEvent &e = event(op);
      if (e.kind != EventKind::Unrecognised)
        return;
      ProtocolViolation v{ProtocolViolation::Unmodelled, op, nullptr};
      v.unproven = true;
      v.text = "every wgmma, mbarrier and TMA instruction must be one the "
               "checker reads, but got inline asm '" +
               e.text +
               "' it does not, so the rules cannot see it "
               "(protocol_strict)";
      out.push_back(v);
    });
    State entry;
    entry.reachable = true;
    // Registers passed in were written before the function started.
    for (Value arg : fn->getRegion(0).getArguments())
      if (mmaInputs.contains(arg))
        entry.dirty.insert(arg);
    report = &out;
    runRegion(fn->getRegion(0), entry, /*emit=*/true);
  }

private:
  EventKind kind(Operation *op) { return model.events.kind(op); }
  const ProtocolEvent &event(Operation *op) { return model.events.of(op); }
  bool isMma(Operation *op) { return kind(op) == EventKind::Mma; }

  FunctionOpInterface fn;
  PipelineModel model;
  Plumbing plumbing;
  /// Per mma_async: the ring slots it reads.
  DenseMap<Operation *, SmallVector<SlotRef, 2>> reads;
  DenseMap<Operation *, SmallVector<const OneShotFill *, 1>> oneShotReads;
  /// Value -> mma ops whose registers it may carry.
  DenseMap<Value, OpSet> carries;
  /// The same, without crossing a loop's back edge: the mma ops whose
  /// result of the current iteration the value may carry (carries minus
  /// these: only an earlier iteration's instance).
  DenseMap<Value, OpSet> sameIteration;
  /// Values whose registers an mma_async reads (acc / A fragment), with
  /// everything forwarded or plumbed into them.
  llvm::DenseSet<Value> mmaInputs;
  /// Per mma_async: the values its register operands are made of.
  DenseMap<Operation *, llvm::DenseSet<Value>> closure;
  SmallVectorImpl<ProtocolViolation> *report = nullptr;
  llvm::DenseSet<std::pair<Operation *, int>> reported;
  /// Per pending group (its first mma_async): the index of its early-use
  /// report, and the uses already counted.
  DenseMap<Operation *, size_t> earlyUseOf;
  llvm::DenseSet<std::pair<Operation *, Operation *>> seenUses;

  void precompute() {
    fn->walk([&](Operation *op) {
      if (!isMma(op))
        return;
      carries[op->getResult(0)].insert(op);
      sameIteration[op->getResult(0)].insert(op);
      reads[op] = model.readsOf(op);
      oneShotReads[op] = model.oneShotReadsOf(op);
    });
    propagate(carries, /*backEdges=*/true);
    propagate(sameIteration, /*backEdges=*/false);
    precomputeClosures();
  }

  /// Forward from mma results through forwarding and plumbing; across
  /// loops' back edges only where `backEdges`.
  void propagate(DenseMap<Value, OpSet> &map, bool backEdges) {
    bool changed = true;
    auto merge = [&](Value to, Value from) {
      auto it = map.find(from);
      if (it == map.end())
        return;
      OpSet src = it->second;
      OpSet &dst = map[to];
      size_t before = dst.size();
      dst.insert(src.begin(), src.end());
      changed |= dst.size() != before;
    };
    while (changed) {
      changed = false;
      fn->walk([&](Operation *op) {
        // Plumbing moves no data: an extracted register is the register,
        // and the op that reads it is the use.
        plumbing.forEachMove(op, merge);
        // Triton's wait_group asm hands the registers it waited for back.
        for (Value v : event(op).passedThrough)
          if (v)
            merge(op->getResult(0), v);
        if (auto forOp = dyn_cast<scf::ForOp>(op)) {
          auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
          for (auto [i, arg] : llvm::enumerate(forOp.getRegionIterArgs())) {
            merge(arg, forOp.getInitArgs()[i]);
            if (backEdges)
              merge(arg, yield.getOperand(i));
            merge(forOp.getResult(i), yield.getOperand(i));
            merge(forOp.getResult(i), forOp.getInitArgs()[i]);
          }
        }
        if (auto ifOp = dyn_cast<scf::IfOp>(op))
          for (Region &r : ifOp->getRegions())
            if (!r.empty())
              for (auto [i, v] :
                   llvm::enumerate(r.front().getTerminator()->getOperands()))
                merge(ifOp.getResult(i), v);
        if (auto br = dyn_cast<BranchOpInterface>(op))
          for (unsigned s = 0; s < op->getNumSuccessors(); ++s) {
            Block *dest = op->getSuccessor(s);
            if (!backEdges && model.addresses.isBackEdge(op->getBlock(), dest))
              continue;
            OperandRange fwd =
                br.getSuccessorOperands(s).getForwardedOperands();
            unsigned offset = dest->getNumArguments() - fwd.size();
            for (auto [i, v] : llvm::enumerate(fwd))
              merge(dest->getArgument(offset + i), v);
          }
      });
    }
  }

  void precomputeClosures() {
    // Closures: backward from each mma's register operands.
    fn->walk([&](Operation *op) {
      if (!isMma(op))
        return;
      llvm::DenseSet<Value> &seen = closure[op];
      SmallVector<Value> work(event(op).registers.begin(),
                              event(op).registers.end());
      while (!work.empty()) {
        Value v = work.pop_back_val();
        if (!seen.insert(v).second)
          continue;
        mmaInputs.insert(v);
        if (Operation *def = v.getDefiningOp()) {
          // A member of what a wait asm handed back is the operand tied to
          // it, not every register the wait kept alive.
          if (auto extract = dyn_cast<LLVM::ExtractValueOp>(def);
              extract && extract.getPosition().size() == 1)
            if (Operation *wait = extract.getContainer().getDefiningOp()) {
              const auto &through = event(wait).passedThrough;
              int64_t i = extract.getPosition()[0];
              if (!through.empty()) {
                if (i < static_cast<int64_t>(through.size()) && through[i])
                  work.push_back(through[i]);
                continue;
              }
            }
          // Moved values (and fragment arrays) are what was moved in.
          llvm::append_range(work, plumbing.sourcesOf(v));
          for (Value o : event(def).passedThrough)
            if (o)
              work.push_back(o);
          if (auto forOp = dyn_cast<scf::ForOp>(def)) {
            unsigned i = cast<OpResult>(v).getResultNumber();
            work.push_back(forOp.getInitArgs()[i]);
            work.push_back(forOp.getBody()->getTerminator()->getOperand(i));
          }
          if (auto ifOp = dyn_cast<scf::IfOp>(def))
            for (Region &r : ifOp->getRegions())
              if (!r.empty())
                work.push_back(r.front().getTerminator()->getOperand(
                    cast<OpResult>(v).getResultNumber()));
          continue;
        }
        auto arg = cast<BlockArgument>(v);
        Operation *parent = arg.getOwner()->getParentOp();
        if (auto forOp = dyn_cast<scf::ForOp>(parent)) {
          if (arg.getArgNumber() == 0)
            continue;
          unsigned i = arg.getArgNumber() - 1;
          work.push_back(forOp.getInitArgs()[i]);
          work.push_back(forOp.getBody()->getTerminator()->getOperand(i));
          continue;
        }
        // Block arguments of a CFG: what the predecessors forward.
        for (Block *pred : arg.getOwner()->getPredecessors())
          if (auto br = dyn_cast<BranchOpInterface>(pred->getTerminator()))
            for (unsigned s = 0; s < pred->getTerminator()->getNumSuccessors();
                 ++s) {
              if (pred->getTerminator()->getSuccessor(s) != arg.getOwner())
                continue;
              OperandRange fwd =
                  br.getSuccessorOperands(s).getForwardedOperands();
              unsigned offset = arg.getOwner()->getNumArguments() - fwd.size();
              if (arg.getArgNumber() >= offset)
                work.push_back(fwd[arg.getArgNumber() - offset]);
            }
      }
    });
  }

  void emitOnce(const ProtocolViolation &v, bool emit) {
    if (!emit || !reported.insert({v.at, 2 * v.kind + v.unproven}).second)
      return;
    report->push_back(v);
  }

  /// Early uses have one cause per pending group (the missing or too
  /// shallow wait): the first use is reported, the others counted on it.
  void emitEarlyUse(const ProtocolViolation &v, Operation *group, bool emit) {
    if (!emit)
      return;
    auto [it, first] = earlyUseOf.try_emplace(group, report->size());
    if (!first) {
      ProtocolViolation &earlier = (*report)[it->second];
      if (earlier.at != v.at && seenUses.insert({group, v.at}).second)
        ++earlier.moreUses;
      return;
    }
    seenUses.insert({group, v.at});
    reported.insert({v.at, v.kind});
    report->push_back(v);
  }

  /// Plumbing that accesses nothing: taking registers out of a bundle, a
  /// vector or a fragment array, reinterpreting them, or putting an
  /// mma_async result back into one (upstream's re-bundling of m64 halves,
  /// CuTe's store of the accumulator into its array). Inserting or storing
  /// any other value writes the registers (a mov into them).
  bool isTransparent(Operation *op) {
    if (plumbing.addresses(op))
      return true;
    if (!plumbing.moves(op))
      return false;
    Value inserted = plumbing.insertedValue(op);
    return !inserted || carries.contains(inserted);
  }

  /// The registers an op reads: its operands, seen through plumbing
  /// (extractvalue/insertvalue/bitcast move no data), that an mma_async
  /// reads or writes.
  SmallVector<Value> registersRead(Operation *op) {
    SmallVector<Value> found, work(op->getOperands());
    llvm::DenseSet<Value> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      if (mmaInputs.contains(v))
        found.push_back(v);
      llvm::append_range(work, plumbing.sourcesOf(v));
    }
    return found;
  }

  void transferMma(Operation *op, State &s, bool emit) {
    // Only a store whose bytes this mma_async may read needs the fence (a
    // partition's bookkeeping bytes elsewhere in shared memory do not).
    for (Operation *store : s.proxyStores)
      if (model.mayFeed(store, op)) {
        emitOnce({ProtocolViolation::MissingProxyFence, op, store}, emit);
        break;
      }
    // mma_async ops never mark registers dirty, so chaining accumulators
    // needs no fence; what does is a non-wgmma access since the last fence,
    // or a chain that changes shape (outside the ISA's exception).
    bool dirty =
        llvm::any_of(closure[op], [&](Value v) { return s.dirty.contains(v); });
    bool shapeChange = false;
    const ProtocolEvent &mma = event(op);
    if (auto it = mma.registers.empty() ? carries.end()
                                        : carries.find(mma.registers.front());
        it != carries.end())
      shapeChange = llvm::any_of(it->second, [&](Operation *prev) {
        return prev != op && event(prev).shape != mma.shape;
      });
    if (!s.everFenced || dirty || (shapeChange && !s.fencedSinceMma))
      emitOnce({ProtocolViolation::MissingFence, op, s.lastAccess}, emit);
    checkFilled(op, s, emit);
    s.fencedSinceMma = false;
    Pending p{op, {}};
    for (const SlotRef &r : reads[op])
      p.stages.push_back(r.stage);
    s.uncommitted.insert(p);
  }

  /// protocol_c6: every ring slot the mma reads has had its full barrier
  /// waited on in this round, and no generic store into what it reads is
  /// without a CTA barrier since.
  /// Whether TMA fills shared memory in this function but none of what
  /// the mma reads is a ring slot or a one-shot fill the model learned.
  bool unrelated(Operation *op) {
    return model.hasTmaLoads() && reads[op].empty() &&
           oneShotReads[op].empty() && !event(op).descriptors.empty();
  }
  bool unrelatedReported = false;

  void checkFilled(Operation *op, State &s, bool emit) {
    // Strict mode says so where TMA fills shared memory but what this mma
    // reads is in no ring and no one-shot fill the checker learned (a stage
    // index or a byte offset passed in as a kernel parameter, a ring filled
    // only before its loop): the fill-before-read rule is not checked there.
    if (emit && unrelated(op) && !unrelatedReported) {
      unrelatedReported = true;
      int64_t others = 0;
      fn->walk([&](Operation *other) {
        others += other != op && isMma(other) && unrelated(other);
      });
      ProtocolViolation v{ProtocolViolation::ReadBeforeFilled, op, nullptr};
      v.unproven = true;
      v.text =
          llvm::formatv(
              "the shared memory an mma_async reads must be proven "
              "filled by a TMA load and waited for, but got descriptors "
              "the checker cannot relate to any TMA ring or fill{0} "
              "(protocol_c6, strict)",
              others ? llvm::formatv(", here and at {0} more mma_async", others)
                           .str()
                     : std::string())
              .str();
      emitOnce(v, emit);
    }
    for (const SlotRef &r : reads[op]) {
      const Ring &ring = model.ring(r.id);
      if (ring.full.empty())
        continue;
      ProtocolViolation v{ProtocolViolation::ReadBeforeFilled, op, nullptr};
      v.notes.push_back({ring.firstWrite, "the stage is filled by this TMA "
                                          "load, which completes on the full "
                                          "barrier"});
      if (r.stage.stages <= 0) {
        v.unproven = true;
        v.text = "the shared-memory stage this mma_async reads must be proven "
                 "filled, but got a descriptor the checker cannot relate to "
                 "a stage (protocol_c6, strict)";
        emitOnce(v, emit);
        continue;
      }
      auto waited = [&](const SlotRef &w) {
        return llvm::is_contained(ring.full, w.id) && w.stage.sameSlot(r.stage);
      };
      // A wait by some warpgroups reaches the others through a rendezvous
      // of the round (see PipelineModel::rendezvousInRound).
      bool filled =
          llvm::any_of(s.ready, waited) ||
          (llvm::any_of(s.partial, waited) && model.rendezvousInRound(op));
      if (filled)
        continue;
      v.text = llvm::formatv("an mma_async must read stage {0} only after a "
                             "wait on that stage's full barrier in the same "
                             "round, but got no such wait (protocol_c6)",
                             describeStage(r.stage))
                   .str();
      emitOnce(v, emit);
      // Reported once: the later mma_async ops of this round read it too.
      s.ready.push_back(SlotRef{ring.full.front(), r.stage});
    }
    for (const OneShotFill *fill : oneShotReads[op]) {
      if (llvm::any_of(s.ready,
                       [&](const SlotRef &w) { return w.id == fill->barrier; }))
        continue;
      ProtocolViolation v{ProtocolViolation::ReadBeforeFilled, op, nullptr};
      v.text = "an mma_async must read shared memory a TMA load fills only "
               "after a wait on that load's barrier, but got no such wait "
               "(protocol_c6)";
      v.notes.push_back({fill->load, "the shared memory is filled by this "
                                     "TMA load, which completes on that "
                                     "barrier"});
      emitOnce(v, emit);
      // Reported once: the later mma_async ops read it too.
      s.ready.push_back(SlotRef{fill->barrier, StageExpr{}});
    }
    for (Operation *store : s.unsynced) {
      if (!storeFeeds(store, op))
        continue;
      ProtocolViolation v{ProtocolViolation::ReadBeforeFilled, op, nullptr};
      v.text = "a barrier across the writing threads must separate a generic "
               "store to the shared memory an mma_async reads from it, but "
               "got none (protocol_c6)";
      v.notes.push_back({store, "shared memory written here"});
      emitOnce(v, emit);
      return;
    }
  }

  /// Whether a generic shared store writes what `mma` reads: both
  /// addresses share a base atom (a different base cannot be decided).
  bool storeFeeds(Operation *store, Operation *mma) {
    if (!model.mayFeed(store, mma))
      return false;
    Value address = isa<LLVM::StoreOp>(store)
                        ? cast<LLVM::StoreOp>(store).getAddr()
                        : Value();
    if (!address)
      return false;
    std::optional<StagedAddress> to = model.addresses.staged(address);
    if (!to)
      return false;
    for (Value d : event(mma).descriptors) {
      std::optional<StagedAddress> from = model.addresses.staged(d, true);
      if (from && llvm::any_of(to->rest.terms, [&](const auto &t) {
            return from->rest.terms.lookup(t.first) == t.second;
          }))
        return true;
    }
    return false;
  }

  /// protocol_c7: `at` releases (arrives on an empty barrier of) or
  /// overwrites ring slot `slot` while an mma_async reading it may be pending.
  void checkNotPending(Operation *at, int ringId, const StageExpr &stage,
                       const State &s, bool emit, const char *what) {
    auto scan = [&](const PendingSet &set, bool uncommitted, int64_t depth) {
      for (const Pending &p : set) {
        const SmallVector<SlotRef, 2> &r = reads[p.op];
        for (auto [i, slot] : llvm::enumerate(r)) {
          if (slot.id != ringId)
            continue;
          const StageExpr &read = p.stages[i];
          ProtocolViolation v{ProtocolViolation::ReleasedWhilePending, at,
                              nullptr};
          if (read.sameSlot(stage)) {
            v.text =
                uncommitted
                    ? llvm::formatv("a stage must be {0} only after the "
                                    "wgmma groups reading it completed, but "
                                    "got stage {1} {0} while an mma_async "
                                    "reading it is not even committed "
                                    "(protocol_c7)",
                                    what, describeStage(stage))
                          .str()
                    : llvm::formatv("a stage must be {0} only after the "
                                    "wgmma groups reading it completed "
                                    "(wait_group {1} or lower first), but got "
                                    "stage {2} {0} while that group may be "
                                    "pending (protocol_c7)",
                                    what, depth, describeStage(stage))
                          .str();
          } else if (!read.comparable(stage) || stage.stages <= 0) {
            v.unproven = true;
            v.text = llvm::formatv("a stage must be proven {0} only after the "
                                   "wgmma groups reading it completed, but "
                                   "got stage {1} and a pending read the "
                                   "checker cannot relate (protocol_c7, "
                                   "strict)",
                                   what, describeStage(stage))
                         .str();
          } else {
            continue;
          }
          v.notes.push_back({p.op, "mma_async reading the stage issued here"});
          if (s.lastWait && !v.unproven)
            v.notes.push_back(
                {s.lastWait, "the last wait_group executed before it"});
          emitOnce(v, emit);
          return true;
        }
      }
      return false;
    };
    forEachPendingSet(s, scan);
  }

  /// The uncommitted mma_async ops, then each committed group from the
  /// newest (with the wait_group depth that would complete it), until
  /// `visit` returns true.
  static void forEachPendingSet(
      const State &s,
      llvm::function_ref<bool(const PendingSet &, bool, int64_t)> visit) {
    if (visit(s.uncommitted, /*uncommitted=*/true, 0))
      return;
    for (size_t i = s.groups.size(); i-- > 0;)
      if (visit(s.groups[i], /*uncommitted=*/false,
                static_cast<int64_t>(s.groups.size() - 1 - i)))
        return;
  }

  void transferBarrierOp(Operation *op, State &s, bool emit) {
    const ProtocolEvent &e = event(op);
    if (e.kind == EventKind::ParityWait) {
      std::optional<SlotRef> slot = model.barrierOf(op);
      // A probe waits only where its result is true (see alongEdge).
      if (e.probe) {
        if (slot)
          s.peeked.push_back({e.probe, *slot});
        return;
      }
      if (slot)
        s.ready.push_back(*slot);
      // A wait on a barrier outside every ring, which the threads also
      // arrive on, is a CTA-wide rendezvous (Mosaic's schedule barriers).
      if (slot && !model.isFull(slot->id) && !model.isEmpty(slot->id) &&
          model.isArrivedOn(slot->id))
        s.synchronize();
      s.unsynced.clear();
      return;
    }
    if (e.kind == EventKind::Arrive) {
      std::optional<SlotRef> slot = model.barrierOf(op);
      if (!slot)
        return;
      for (int id = 0; id < model.numRings(); ++id)
        if (llvm::is_contained(model.ring(id).empty, slot->id)) {
          // A barrier shared by every stage releases the stage read last.
          StageExpr stage = slot->stage;
          if (PipelineModel::isShared(*slot)) {
            std::optional<StageExpr> read = model.sharedReleaseStage(op, id);
            if (!read)
              continue;
            stage = *read;
          }
          checkNotPending(op, id, stage, s, emit, "released");
          // Released, the stage may be refilled: no longer known filled.
          auto released = [&](const SlotRef &r) {
            return llvm::is_contained(model.ring(id).full, r.id) &&
                   r.stage.sameSlot(stage);
          };
          llvm::erase_if(s.ready, released);
          llvm::erase_if(s.partial, released);
        }
      return;
    }
    Value written;
    if (e.kind == EventKind::TmaLoad)
      written = e.destination;
    else if (auto store = dyn_cast<LLVM::StoreOp>(op))
      written = store.getAddr();
    if (!written)
      return;
    std::optional<SlotRef> slot = model.ringAt(written);
    if (!slot) {
      // A tile loaded once per round (a 1-stage ring, a persistent
      // kernel's next Q) is overwritten like a stage.
      if (e.kind == EventKind::TmaLoad)
        if (const OneShotFill *fill = model.oneShotAt(written))
          checkOneShotNotPending(op, fill, s, emit);
      return;
    }
    checkNotPending(op, slot->id, slot->stage, s, emit, "overwritten");
    if (e.kind == EventKind::TmaLoad)
      checkRefillWaited(op, *slot, s, emit);
  }

  /// protocol_c7 for a one-shot tile: no wgmma group reading it may be
  /// pending when a TMA load overwrites it.
  void checkOneShotNotPending(Operation *at, const OneShotFill *fill,
                              const State &s, bool emit) {
    forEachPendingSet(s, [&](const PendingSet &set, bool uncommitted,
                             int64_t depth) {
      auto p = llvm::find_if(set, [&](const Pending &p) {
        return llvm::is_contained(oneShotReads[p.op], fill);
      });
      if (p == set.end())
        return false;
      ProtocolViolation v{ProtocolViolation::ReleasedWhilePending, at, nullptr};
      v.text =
          uncommitted
              ? "a tile must be overwritten only after the wgmma groups "
                "reading it completed, but got it overwritten while an "
                "mma_async reading it is not even committed (protocol_c7)"
              : llvm::formatv("a tile must be overwritten only after the "
                              "wgmma groups reading it completed "
                              "(wait_group {0} or lower first), but got it "
                              "overwritten while that group may be pending "
                              "(protocol_c7)",
                              depth)
                    .str();
      v.notes.push_back({p->op, "mma_async reading the tile issued here"});
      if (s.lastWait && !uncommitted)
        v.notes.push_back(
            {s.lastWait, "the last wait_group executed before it"});
      emitOnce(v, emit);
      return true;
    });
  }

  /// protocol_c6, the producer's side: a load into a stage of a ring whose
  /// producer waits on empty barriers follows such a wait for that stage in
  /// its round on every path (a wait skipped on some path is missing).
  /// Fills at a fixed or constant slot (a prologue's first round) need none.
  void checkRefillWaited(Operation *op, const SlotRef &slot, State &s,
                         bool emit) {
    const Ring &ring = model.ring(slot.id);
    if (ring.empty.empty() || slot.stage.isFixed() || slot.stage.stages <= 0 ||
        model.fillsFirstRound(op, slot.stage))
      return;
    auto waited = [&](const SlotRef &w) {
      return llvm::is_contained(ring.empty, w.id) &&
             (w.stage.sameSlot(slot.stage) || PipelineModel::isShared(w));
    };
    if (llvm::any_of(s.ready, waited) || llvm::any_of(s.partial, waited))
      return;
    ProtocolViolation v{ProtocolViolation::ReadBeforeFilled, op, nullptr};
    v.text = llvm::formatv("a TMA load must refill stage {0} only after a "
                           "wait on that stage's empty barrier in the same "
                           "round, but got a path without one (protocol_c6)",
                           describeStage(slot.stage))
                 .str();
    emitOnce(v, emit);
  }

  void transferOp(Operation *op, State &s, bool emit) {
    const ProtocolEvent &e = event(op);
    if (e.kind == EventKind::Fence) {
      s.fence();
      return;
    }
    if (e.kind == EventKind::Commit) {
      s.commit();
      return;
    }
    if (e.kind == EventKind::WaitGroup) {
      s.waitGroup(static_cast<uint64_t>(e.depth));
      s.lastWait = op;
      return;
    }
    if (isMma(op)) {
      // nvgpu.warpgroup.mma is the whole sequence.
      if (e.fences)
        s.fence();
      transferMma(op, s, emit);
      if (e.commits)
        s.commit();
      if (e.waits)
        s.waitGroup(static_cast<uint64_t>(*e.waits));
      return;
    }
    if (e.kind == EventKind::ProxyFence) {
      s.proxyStores.clear();
      return;
    }
    if (e.kind == EventKind::ThreadBarrier) {
      s.unsynced.clear();
      s.synchronize();
    }
    transferBarrierOp(op, s, emit);
    if (isGenericSharedStore(op)) {
      s.proxyStores.insert(op);
      s.unsynced.insert(op);
    }
    // Forwarding and register plumbing execute nothing: the op that
    // finally reads or writes the registers is the access.
    if (isForwarding(op) || isTransparent(op))
      return;
    // A non-wgmma op: early uses of pending results, register accesses.
    bool touches = false;
    for (Value v : registersRead(op)) {
      s.dirty.insert(v);
      touches = true;
    }
    // Writing a register that only feeds the next mma_async (the ISA's
    // example 2: mov into the pending result, fence, use it as A) is not a
    // use of the pending result.
    bool feedsOnlyMma =
        plumbing.moves(op) && llvm::all_of(op->getResults(), [&](Value r) {
          return mmaInputs.contains(r);
        });
    for (Value v : op->getOperands()) {
      auto it = carries.find(v);
      if (it == carries.end() || feedsOnlyMma)
        continue;
      for (Operation *mma : it->second) {
        bool isUncommitted = false;
        int64_t depth = 0;
        // Only an earlier iteration's result, where this iteration's
        // mma_async has run before the use: that instance is the newest
        // pending one, and the value's is pending only if another is.
        auto same = sameIteration.find(v);
        if ((same == sameIteration.end() || !same->second.contains(mma)) &&
            model.addresses.properlyDominates(mma, op) && s.instances(mma) < 2)
          continue;
        if (Operation *group = s.pending(mma, isUncommitted, depth)) {
          ProtocolViolation v{ProtocolViolation::EarlyUse, op, mma};
          v.uncommitted = isUncommitted;
          v.waitDepth = depth;
          emitEarlyUse(v, group, emit);
        }
      }
    }
    for (Value r : op->getResults())
      if (mmaInputs.contains(r)) {
        s.dirty.insert(r);
        touches = true;
      }
    // A value stored into a fragment array writes the array's registers.
    plumbing.forEachMove(op, [&](Value to, Value) {
      if (!llvm::is_contained(op->getResults(), to) && mmaInputs.contains(to)) {
        s.dirty.insert(to);
        touches = true;
      }
    });
    if (touches)
      s.lastAccess = op;
  }

  /// Leaving the function: any terminator of its body without successors
  /// (gpu.return is not ReturnLike), except llvm.unreachable (a trap).
  bool isReturn(Operation *op) {
    return op->getParentOp() == fn && op->hasTrait<OpTrait::IsTerminator>() &&
           op->getNumSuccessors() == 0 && !isa<LLVM::UnreachableOp>(op);
  }

  void checkReturn(Operation *term, const State &s, bool emit) {
    for (const Pending &p : s.uncommitted) {
      ProtocolViolation v{ProtocolViolation::NotCommitted, term, p.op};
      v.uncommitted = true;
      emitOnce(v, emit);
      break;
    }
    for (size_t i = 0; i < s.groups.size(); ++i)
      if (!s.groups[i].empty()) {
        // A group whose results were already used early has one cause, the
        // missing wait, reported there.
        auto early = earlyUseOf.find(s.groups[i].front());
        if (early != earlyUseOf.end()) {
          if (emit &&
              reported.insert({term, ProtocolViolation::NotWaited}).second)
            (*report)[early->second].notes.push_back(
                {term, "and the function returns with the group pending"});
          break;
        }
        ProtocolViolation v{ProtocolViolation::NotWaited, term,
                            s.groups[i].front()};
        emitOnce(v, emit);
        break;
      }
  }

  /// The same SSA value, or two constants of one value.
  bool sameBound(Value a, Value b) {
    if (!a || !b)
      return false;
    if (a == b)
      return true;
    std::optional<int64_t> x = model.addresses.constant(a);
    return x && x == model.addresses.constant(b);
  }

  /// The bound a loop counter runs below: an scf.for's upper bound, or
  /// what its CFG loop header compares it with before entering the body.
  Value loopBound(Value counter) {
    auto arg = dyn_cast<BlockArgument>(counter);
    if (!arg)
      return Value();
    Block *header = arg.getOwner();
    if (auto forOp = dyn_cast<scf::ForOp>(header->getParentOp()))
      return forOp.getInductionVar() == counter ? forOp.getUpperBound()
                                                : Value();
    Value cond = branchCondition(header->getTerminator());
    Operation *cmp = cond ? cond.getDefiningOp() : nullptr;
    if (!cmp || !isa<LLVM::ICmpOp, arith::CmpIOp>(cmp) ||
        cmp->getOperand(0) != counter)
      return Value();
    return cmp->getOperand(1);
  }

  /// Whether a condition differs between the threads of a CTA: computed
  /// from the thread index (a warpgroup or lane number, an elected lane).
  bool threadDependent(Value c) {
    SmallVector<Value> work{c};
    llvm::DenseSet<Value> seen;
    while (!work.empty() && seen.size() < 64) {
      Value v = work.pop_back_val();
      if (!v || !seen.insert(v).second)
        continue;
      Operation *def = v.getDefiningOp();
      if (!def)
        continue;
      if (isa<gpu::ThreadIdOp, NVVM::ThreadIdXOp, NVVM::ThreadIdYOp,
              NVVM::ThreadIdZOp, NVVM::LaneIdOp, NVVM::WarpIdOp,
              NVVM::ElectSyncOp>(def))
        return true;
      if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(def);
          asmOp && (asmOp.getAsmString().contains("%tid") ||
                    asmOp.getAsmString().contains("elect.sync") ||
                    asmOp.getAsmString().contains("%laneid")))
        return true;
      if (isa<LLVM::LoadOp, memref::LoadOp, LLVM::CallOp>(def))
        continue;
      llvm::append_range(work, def->getOperands());
    }
    return false;
  }

  /// Whether a CFG join merges the two sides of a branch on a
  /// thread-dependent condition (the block's immediate dominator ends in
  /// it).
  bool divergentJoin(Block *join) {
    if (join->hasOneUse() || join->getSinglePredecessor())
      return false;
    auto it = divergent.find(join);
    if (it != divergent.end())
      return it->second;
    bool result = false;
    Block *dom = nullptr;
    for (Block *pred : join->getPredecessors()) {
      // The nearest block dominating every predecessor.
      dom = dom ? model.addresses.nearestCommonDominator(dom, pred) : pred;
    }
    if (dom && dom != join)
      if (Value cond = branchCondition(dom->getTerminator()))
        result = threadDependent(cond);
    divergent[join] = result;
    return result;
  }
  DenseMap<Block *, bool> divergent;

  /// For a branch condition: the i1 value it tests and whether the
  /// condition holds exactly when that value is true (through negations,
  /// zero-extensions and comparisons with 0 or 1).
  std::pair<Value, bool> tested(Value c) {
    bool same = true;
    for (int depth = 0; depth < 8; ++depth) {
      Operation *def = c.getDefiningOp();
      if (!def)
        break;
      if (isa<LLVM::ZExtOp, arith::ExtUIOp, LLVM::TruncOp, arith::TruncIOp>(
              def)) {
        c = def->getOperand(0);
        continue;
      }
      if (isa<LLVM::XOrOp, arith::XOrIOp>(def)) {
        std::optional<int64_t> k = model.addresses.constant(def->getOperand(1));
        if (!k || (*k & 1) == 0)
          break;
        same = !same;
        c = def->getOperand(0);
        continue;
      }
      auto eq = comparedBy(c, {arith::CmpIPredicate::eq});
      auto cmp = eq ? eq : comparedBy(c, {arith::CmpIPredicate::ne});
      std::optional<int64_t> k =
          cmp ? model.addresses.constant(cmp->second) : std::nullopt;
      if (!k || (*k != 0 && *k != 1))
        break;
      // x == 1 and x != 0 hold when x is true.
      if (eq.has_value() != (*k == 1))
        same = !same;
      c = cmp->first;
    }
    return {c, same};
  }

  /// Where a branch on `cond` goes the `taken` way: the slots of probes
  /// it proves complete become ready, a loop bound it proves passed is
  /// remembered, and a path that already passed it ends here.
  void assume(Value cond, bool taken, State &s) {
    auto [v, same] = tested(cond);
    bool holds = taken == same;
    if (auto below = comparedBy(
            v, {arith::CmpIPredicate::slt, arith::CmpIPredicate::ult}))
      if (std::optional<std::pair<Value, int64_t>> x =
              model.addresses.counterPlus(below->first)) {
        State::Exhausted fact{x->first, x->second, below->second,
                              sameBound(loopBound(x->first), below->second)};
        if (!holds && !llvm::is_contained(s.exhausted, fact))
          s.exhausted.push_back(fact);
        if (holds && llvm::any_of(s.exhausted, [&](const State::Exhausted &e) {
              return e.counter == fact.counter &&
                     sameBound(e.bound, fact.bound) && e.offset <= fact.offset;
            }))
          s.reachable = false;
      }
    if (!holds)
      return;
    for (const auto &[p, slot] : s.peeked)
      if (p == v && slot.id != kAnySlot && !llvm::is_contained(s.ready, slot))
        s.ready.push_back(slot);
  }

  /// A CFG edge: what a conditional branch proves on it, and peeked values
  /// renamed to the successor's arguments they are passed as.
  State alongEdge(Block *from, unsigned succIndex, State s) {
    Operation *term = from->getTerminator();
    if (Value cond = branchCondition(term))
      assume(cond, succIndex == 0, s);
    auto br = dyn_cast<BranchOpInterface>(term);
    if (!br)
      return s;
    Block *to = term->getSuccessor(succIndex);
    OperandRange fwd =
        br.getSuccessorOperands(succIndex).getForwardedOperands();
    unsigned offset = to->getNumArguments() - fwd.size();
    for (auto [i, v] : llvm::enumerate(fwd)) {
      Value arg = to->getArgument(offset + i);
      if (!arg.getType().isInteger(1))
        continue;
      if (model.addresses.constant(v).value_or(0) & 1) {
        s.peeked.push_back({arg, SlotRef{kAnySlot, StageExpr{}}});
        continue;
      }
      SmallVector<std::pair<Value, SlotRef>, 2> renamed;
      for (const auto &[p, slot] : s.peeked)
        if (p == v)
          renamed.push_back({arg, slot});
      llvm::append_range(s.peeked, renamed);
    }
    return s;
  }

  State runBlock(Block &block, State s, bool emit) {
    if (!s.reachable)
      return s;
    for (Operation &op : block) {
      if (auto forOp = dyn_cast<scf::ForOp>(&op)) {
        s = runFor(forOp, s, emit);
        continue;
      }
      if (auto ifOp = dyn_cast<scf::IfOp>(&op)) {
        State thenIn = s, elseIn = s;
        assume(ifOp.getCondition(), true, thenIn);
        assume(ifOp.getCondition(), false, elseIn);
        State then = runRegion(ifOp.getThenRegion(), thenIn, emit);
        State other = ifOp.getElseRegion().empty()
                          ? elseIn
                          : runRegion(ifOp.getElseRegion(), elseIn, emit);
        then.join(other, threadDependent(ifOp.getCondition()));
        s = then;
        continue;
      }
      transferOp(&op, s, emit);
      for (Region &r : op.getRegions())
        if (!r.empty() && !isa<FunctionOpInterface>(op))
          s = runRegion(r, s, emit);
      if (isReturn(&op))
        checkReturn(&op, s, emit);
    }
    return s;
  }

  /// The stage expressions of a loop's state are rewritten at its edges so
  /// that they always name the current iteration's counters: on entry the
  /// init values become the iteration arguments, across the back edge a
  /// slot read one iteration ago is (k - step), and on exit the counters
  /// become the loop's results.
  State enterLoop(scf::ForOp forOp, State s) {
    std::optional<int64_t> lower =
        model.addresses.constant(forOp.getLowerBound());
    s.rebase([&](StageExpr &e) {
      for (auto [i, init] : llvm::enumerate(forOp.getInitArgs()))
        if (e.counter == init &&
            model.addresses.counterStep(forOp.getRegionIterArgs()[i])) {
          e.counter = forOp.getRegionIterArgs()[i];
          return;
        }
      // A constant slot the induction variable starts at (a wait for stage
      // 0 before the loop that reads stage k mod S).
      if (e.isConstant() && lower &&
          ((*lower % e.stages) + e.stages) % e.stages == e.offset &&
          !model.addresses.wrapsAt(forOp.getInductionVar()))
        e = StageExpr{forOp.getInductionVar(), 0, e.stages};
    });
    return s;
  }

  /// Across a back edge into `header` (an scf.for body or a CFG loop
  /// header), a slot read one iteration ago is (k - step).
  State backEdge(Block *header, State s) {
    // Bounds passed, in the next iteration's counters.
    for (State::Exhausted &e : s.exhausted) {
      auto arg = dyn_cast<BlockArgument>(e.counter);
      std::optional<int64_t> step = model.addresses.counterStep(e.counter);
      if (arg && arg.getOwner() == header && step)
        e.offset -= *step;
      else if (definedInLoop(e.counter, header))
        e.counter = Value();
    }
    llvm::erase_if(s.exhausted,
                   [](const State::Exhausted &e) { return !e.counter; });
    // An scf.for runs its next iteration only while iv < ub.
    if (auto forOp = dyn_cast<scf::ForOp>(header->getParentOp()))
      if (llvm::any_of(s.exhausted, [&](const State::Exhausted &e) {
            return e.counter == forOp.getInductionVar() && e.offset <= 0 &&
                   sameBound(e.bound, forOp.getUpperBound());
          }))
        s.reachable = false;
    // A probe's result computed in the loop is another value next time
    // round; what the next iteration keeps is the argument it was passed as.
    llvm::erase_if(s.peeked, [&](const auto &p) {
      auto arg = dyn_cast<BlockArgument>(p.first);
      return !(arg && arg.getOwner() == header) &&
             definedInLoop(p.first, header);
    });
    s.rebase([&](StageExpr &e) {
      auto arg = dyn_cast_or_null<BlockArgument>(e.counter);
      if (!arg || arg.getOwner() != header) {
        // A symbolic index computed in the loop is another value in the
        // next iteration: what was said of its slot no longer applies.
        if (e.counter && !model.addresses.counterStep(e.counter) &&
            definedInLoop(e.counter, header))
          e = unknownStage();
        return;
      }
      std::optional<int64_t> step = model.addresses.counterStep(e.counter);
      e.offset -= step ? *step : 0;
      if (!step || e.offset < -kMaxAge * std::max<int64_t>(1, *step))
        e = unknownStage();
    });
    // A pending read names its slot only modulo the ring (all the rules ask
    // of it is sameSlot): one issued a whole ring of slots ago reads the
    // slot the same read issued now does. Folding the rounds bounds what a
    // loop whose reads stay pending (its last wait missing) carries round
    // the back edge, and its fixpoint comes within a ring's iterations
    // rather than kMaxAge's.
    auto fold = [&](StageExpr &e) {
      auto arg = dyn_cast_or_null<BlockArgument>(e.counter);
      if (arg && arg.getOwner() == header && e.stages > 0 &&
          e.offset < -e.stages)
        e.offset = ((e.offset % e.stages) + e.stages) % e.stages - e.stages;
    };
    s.uncommitted.rewrite(fold);
    for (PendingSet &g : s.groups)
      g.rewrite(fold);
    return s;
  }

  /// Whether `v` is computed inside the loop headed by `header` (an scf.for
  /// body or a CFG loop header, which dominates its loop's blocks).
  bool definedInLoop(Value v, Block *header) {
    Block *b = v.getParentBlock();
    while (b && b->getParent() != header->getParent()) {
      Operation *parent = b->getParentOp();
      b = parent ? parent->getBlock() : nullptr;
    }
    return b && (b == header || model.addresses.isBackEdge(b, header));
  }

  /// A wait keeps its stage filled until the stage is released. A fact
  /// from S or more iterations ago names a slot refilled since (the same
  /// index in a later round), so it goes.
  void ageReady(State &s, Block *header) {
    auto stale = [&](const SlotRef &r) {
      auto arg = dyn_cast_or_null<BlockArgument>(r.stage.counter);
      if (!arg || arg.getOwner() != header)
        return false;
      std::optional<int64_t> step = model.addresses.counterStep(arg);
      return !step || *step <= 0 || -r.stage.offset >= r.stage.stages * *step;
    };
    llvm::erase_if(s.ready, stale);
    llvm::erase_if(s.partial, stale);
  }

  /// Facts about earlier iterations' stages survive the join with the
  /// loop's entry: in the first iteration those stages do not exist yet (a
  /// read of one is guarded, as FlashAttention's P V of block j - 1 is).
  void keepEarlierIterations(State &joined, const State &back, Block *header) {
    for (const SlotRef &r : back.ready) {
      auto arg = dyn_cast_or_null<BlockArgument>(r.stage.counter);
      if (!arg || arg.getOwner() != header || r.stage.offset >= 0)
        continue;
      if (!llvm::is_contained(joined.ready, r))
        joined.ready.push_back(r);
    }
  }

  State leaveLoop(scf::ForOp forOp, State s, bool fromBody) {
    s.rebase([&](StageExpr &e) {
      if (!e.counter)
        return;
      if (!fromBody) {
        for (auto [i, init] : llvm::enumerate(forOp.getInitArgs()))
          if (e.counter == init)
            e.counter = forOp.getResult(i);
        return;
      }
      auto arg = dyn_cast<BlockArgument>(e.counter);
      if (arg && arg.getOwner() == forOp.getBody() && arg.getArgNumber() > 0) {
        std::optional<int64_t> step = model.addresses.counterStep(e.counter);
        if (step) {
          e.offset -= *step;
          e.counter = forOp.getResult(arg.getArgNumber() - 1);
          return;
        }
      }
      // Anything else defined in the loop means nothing after it.
      if (forOp->isAncestor(e.counter.getParentRegion()->getParentOp()))
        e = unknownStage();
    });
    return s;
  }

  State runFor(scf::ForOp forOp, State s, bool emit) {
    // Iterate the body from the join of the entry and the back edge.
    State entry = enterLoop(forOp, s);
    State head = entry;
    for (int i = 0; i < 2 * kMaxAge; ++i) {
      State out = runRegion(forOp.getRegion(), head, /*emit=*/false);
      State back = backEdge(forOp.getBody(), out);
      ageReady(back, forOp.getBody());
      State next = entry;
      next.join(back);
      keepEarlierIterations(next, back, forOp.getBody());
      if (next == head)
        break;
      head = next;
    }
    State out = runRegion(forOp.getRegion(), head, emit);
    State exit = leaveLoop(forOp, s, /*fromBody=*/false); // zero trips
    exit.join(leaveLoop(forOp, out, /*fromBody=*/true));
    return exit;
  }

  /// The CFG twin of enterLoop: along an edge into a loop header from
  /// outside the loop, a counter's initial value becomes the counter.
  State enterHeader(Block *from, Block *to, unsigned succIndex, State s) {
    auto br = dyn_cast<BranchOpInterface>(from->getTerminator());
    OperandRange fwd =
        br ? br.getSuccessorOperands(succIndex).getForwardedOperands()
           : OperandRange(from->getTerminator()->operand_end(),
                          from->getTerminator()->operand_end());
    unsigned offset = to->getNumArguments() - fwd.size();
    s.rebase([&](StageExpr &e) {
      for (auto [i, in] : llvm::enumerate(fwd)) {
        Value arg = to->getArgument(offset + i);
        if (e.counter && e.counter == in && model.addresses.counterStep(arg)) {
          e.counter = arg;
          return;
        }
      }
      if (!e.isConstant())
        return;
      // A constant slot the loop's stage index starts at (CuTe waits for
      // stage 1 before a loop whose index starts at 1): named as reads name
      // that index (by the loop's first one); failing a wrapping index, a
      // plain counter taken mod S.
      Value plain;
      for (auto [i, in] : llvm::enumerate(fwd)) {
        Value arg = to->getArgument(offset + i);
        std::optional<int64_t> start = model.addresses.constant(in);
        if (!model.addresses.counterStep(arg) || !start ||
            ((*start % e.stages) + e.stages) % e.stages != e.offset)
          continue;
        std::optional<int64_t> wraps = model.addresses.wrapsAt(arg);
        std::optional<StageExpr> own = model.addresses.stageOf(arg);
        if (wraps && own && *wraps == e.stages && own->stages == e.stages) {
          e = *own;
          return;
        }
        if (!wraps && !plain)
          plain = arg;
      }
      if (plain && indexesRing(plain))
        e = StageExpr{plain, 0, e.stages};
    });
    return s;
  }

  /// Whether some ring slot a wait, a load or an mma_async names is
  /// indexed by `counter` (a loop over k-blocks inside one stage is not).
  bool indexesRing(Value counter) {
    auto [it, added] = ringIndices.try_emplace(counter, false);
    if (!added)
      return it->second;
    bool found = false;
    auto names = [&](const std::optional<SlotRef> &slot) {
      found |= slot && slot->stage.counter == counter;
    };
    fn->walk([&](Operation *op) {
      if (found)
        return;
      switch (event(op).kind) {
      case EventKind::Mma:
        for (const SlotRef &r : reads[op])
          names(r);
        break;
      case EventKind::ParityWait:
      case EventKind::Arrive:
        names(model.barrierOf(op));
        break;
      case EventKind::TmaLoad:
        names(model.ringAt(event(op).destination));
        break;
      default:
        break;
      }
    });
    return ringIndices[counter] = found;
  }
  DenseMap<Value, bool> ringIndices;

  State runRegion(Region &region, State s, bool emit) {
    if (region.hasOneBlock())
      return runBlock(region.front(), s, emit);
    // Plain CFG: worklist over blocks; the exit state joins every block that
    // leaves the region. Natural loops are iterated like scf.for, their
    // counters rebased on the edges into the header (backEdge,
    // enterHeader).
    DenseMap<Block *, State> in;
    in[&region.front()] = s;
    // Blocks in reverse post-order, the worklist always taking the earliest:
    // an inner loop converges before its outer one moves on (a LIFO stack
    // revisited CuTe's nested loops until the cap and left blocks unseen).
    DenseMap<Block *, unsigned> order;
    for (Block *b : llvm::ReversePostOrderTraversal<Region *>(&region))
      order[b] = order.size();
    auto earlier = [&](Block *a, Block *b) {
      return order.lookup(a) < order.lookup(b);
    };
    std::set<Block *, decltype(earlier)> work(earlier);
    work.insert(&region.front());
    size_t cap = 256 * order.size() + 4096;
    for (size_t iterations = 0; !work.empty() && iterations < cap;
         ++iterations) {
      Block *b = *work.begin();
      work.erase(work.begin());
      State out = runBlock(*b, in[b], /*emit=*/false);
      for (auto [index, succ] : llvm::enumerate(b->getSuccessors())) {
        State joined = in.lookup(succ);
        bool loops =
            succ->getNumArguments() != 0 && model.addresses.isBackEdge(b, succ);
        State along = alongEdge(b, index, out);
        State edge = succ->getNumArguments() == 0 ? along
                     : loops ? backEdge(succ, along)
                             : enterHeader(b, succ, index, along);
        if (loops)
          ageReady(edge, succ);
        joined.join(edge, !loops && divergentJoin(succ));
        if (loops)
          keepEarlierIterations(joined, edge, succ);
        if (!(joined == in.lookup(succ))) {
          in[succ] = joined;
          work.insert(succ);
        }
      }
    }
    State exit;
    for (Block &b : region) {
      // A block no path reaches has nothing to report.
      if (!in.lookup(&b).reachable)
        continue;
      State out = runBlock(b, in.lookup(&b), emit);
      if (b.getNumSuccessors() == 0)
        exit.join(out);
    }
    return exit;
  }
};

} // namespace

SmallVector<ProtocolViolation>
nvwgmma::analyzeProtocol(Operation *root, bool strict, bool reportUnchecked) {
  SmallVector<ProtocolViolation> out;
  root->walk([&](FunctionOpInterface fn) {
    if (fn.isExternal())
      return;
    // Always analysed strictly; in normal mode what could not be decided
    // becomes one warning for the function, so that no diagnostic means
    // checked and clean, never silently skipped.
    SmallVector<ProtocolViolation> found;
    Analysis(fn).run(found);
    std::map<std::string, int> unchecked;
    for (ProtocolViolation &v : found) {
      if (strict || !v.unproven) {
        out.push_back(std::move(v));
        continue;
      }
      ++unchecked[v.label()];
    }
    if (unchecked.empty() || !reportUnchecked)
      return;
    std::string counts;
    for (const auto &[label, n] : unchecked)
      counts +=
          llvm::formatv("{0}{1} x {2}", counts.empty() ? "" : ", ", n, label)
              .str();
    ProtocolViolation v{ProtocolViolation::Unchecked, fn, nullptr};
    v.text = "every pipeline rule must be checked in this function, but got "
             "places the checker cannot relate (" +
             counts +
             "); strict mode (--nvwgmma-check-protocol=strict=true) names "
             "each (protocol_unchecked)";
    out.push_back(std::move(v));
  });
  return out;
}
