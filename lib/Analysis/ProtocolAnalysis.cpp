//===- ProtocolAnalysis.cpp - wgmma protocol dataflow ---------------------===//
//
// A forward dataflow over each function. The state at a program point:
//   everFenced  - a wgmma.fence ran at all (required before the first mma);
//   dirty       - register values (SSA values flowing into an mma_async's
//                 accumulator or A fragment) that a non-wgmma op accessed
//                 since the last wgmma.fence;
//   proxyStore  - a generic-proxy shared store not yet followed by
//                 fence.proxy.async (the store, or null);
//   uncommitted - mma_async ops issued since the last commit_group;
//   groups      - committed groups not known to be complete, oldest first.
// Structured loops iterate to a fixpoint (states only grow, groups are
// capped), then run once more to report; multi-block regions use a
// worklist. Values are tracked through forwarding (scf.for/if/yield, branch
// operands) and register plumbing (llvm.insertvalue/extractvalue/bitcast).
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/Analysis/ProtocolAnalysis.h"

#include "nvwgmma/IR/NVWGMMAOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

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
  }
  return "protocol";
}

std::string ProtocolViolation::message() const {
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
                         "got {1} (protocol_c4)",
                         waitDepth,
                         uncommitted ? "the mma_async not even committed"
                                     : "its group still pending")
        .str();
  case MissingProxyFence:
    return "a fence.proxy.async must separate a generic-proxy write to shared "
           "memory from this mma_async, but got none (protocol_c5)";
  }
  return "";
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

bool sameSet(const llvm::DenseSet<Value> &a, const llvm::DenseSet<Value> &b) {
  return a.size() == b.size() &&
         llvm::all_of(a, [&](Value v) { return b.contains(v); });
}

struct State {
  bool reachable = false;
  bool everFenced = false;
  llvm::DenseSet<Value> dirty;
  Operation *proxyStore = nullptr;
  Operation *lastAccess = nullptr;
  /// A fence ran since the last mma_async (orders a change of shape).
  bool fencedSinceMma = false;
  OpSet uncommitted;
  SmallVector<OpSet> groups;

  bool operator==(const State &o) const {
    return reachable == o.reachable && everFenced == o.everFenced &&
           sameSet(dirty, o.dirty) && proxyStore == o.proxyStore &&
           lastAccess == o.lastAccess && fencedSinceMma == o.fencedSinceMma &&
           uncommitted == o.uncommitted && groups == o.groups;
  }

  void join(const State &o) {
    if (!o.reachable)
      return;
    if (!reachable) {
      *this = o;
      return;
    }
    everFenced = everFenced && o.everFenced;
    fencedSinceMma = fencedSinceMma && o.fencedSinceMma;
    dirty.insert(o.dirty.begin(), o.dirty.end());
    proxyStore = proxyStore ? proxyStore : o.proxyStore;
    lastAccess = lastAccess ? lastAccess : o.lastAccess;
    uncommitted.insert(o.uncommitted.begin(), o.uncommitted.end());
    // Align at the most recent group: wait_group counts from the end.
    size_t n = std::max(groups.size(), o.groups.size());
    SmallVector<OpSet> merged(n);
    for (size_t i = 0; i < n; ++i) {
      if (i < groups.size())
        merged[n - 1 - i].insert(groups[groups.size() - 1 - i].begin(),
                                 groups[groups.size() - 1 - i].end());
      if (i < o.groups.size())
        merged[n - 1 - i].insert(o.groups[o.groups.size() - 1 - i].begin(),
                                 o.groups[o.groups.size() - 1 - i].end());
    }
    groups = std::move(merged);
  }

  void capGroups() {
    while (groups.size() > kMaxGroups) {
      groups[1].insert(groups[0].begin(), groups[0].end());
      groups.erase(groups.begin());
    }
  }

  /// Whether `mma` may still be running, and the wait depth completing it.
  bool pending(Operation *mma, bool &isUncommitted, int64_t &depth) const {
    if (uncommitted.contains(mma)) {
      isUncommitted = true;
      depth = 0;
      return true;
    }
    for (size_t i = groups.size(); i-- > 0;)
      if (groups[i].contains(mma)) {
        isUncommitted = false;
        depth = static_cast<int64_t>(groups.size() - 1 - i);
        return true;
      }
    return false;
  }
};

bool isMma(Operation *op) { return isa<MmaAsyncOp, MmaAsyncSpOp>(op); }

/// Ops that only move registers around.
bool isPlumbing(Operation *op) {
  return isa<LLVM::InsertValueOp, LLVM::ExtractValueOp, LLVM::BitcastOp>(op);
}

/// Ops whose operands flow unchanged into region arguments or results.
bool isForwarding(Operation *op) {
  return isa<scf::YieldOp, scf::ForOp, scf::IfOp, scf::WhileOp,
             scf::ConditionOp>(op) ||
         isa<BranchOpInterface>(op);
}

SmallVector<Value> mmaRegisterOperands(Operation *op) {
  SmallVector<Value> regs;
  auto add = [&](auto mma) {
    regs.push_back(mma.getAcc());
    if (mma.isAFromRegisters())
      regs.push_back(mma.getA());
  };
  if (auto mma = dyn_cast<MmaAsyncOp>(op))
    add(mma);
  else if (auto mma = dyn_cast<MmaAsyncSpOp>(op))
    add(mma);
  return regs;
}

std::tuple<int64_t, int64_t, int64_t> mmaShape(Operation *op) {
  MmaAsyncConfig c = *getMmaAsyncConfig(op);
  return {c.m, c.n, c.k};
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

bool isProxyFence(Operation *op) {
  if (auto fence = dyn_cast<NVVM::FenceProxyOp>(op)) {
    NVVM::ProxyKind kind = fence.getKind();
    return kind == NVVM::ProxyKind::async ||
           kind == NVVM::ProxyKind::async_shared;
  }
  if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op))
    return asmOp.getAsmString().contains("fence.proxy.async");
  return false;
}

class Analysis {
public:
  explicit Analysis(FunctionOpInterface fn) : fn(fn) { precompute(); }

  void run(SmallVectorImpl<ProtocolViolation> &out) {
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
  FunctionOpInterface fn;
  /// Value -> mma ops whose registers it may carry.
  DenseMap<Value, OpSet> carries;
  /// Values whose registers an mma_async reads (acc / A fragment), with
  /// everything forwarded or plumbed into them.
  llvm::DenseSet<Value> mmaInputs;
  /// Per mma_async: the values its register operands are made of.
  DenseMap<Operation *, llvm::DenseSet<Value>> closure;
  SmallVectorImpl<ProtocolViolation> *report = nullptr;
  llvm::DenseSet<std::pair<Operation *, int>> reported;

  void precompute() {
    // carries: forward from mma results through forwarding and plumbing.
    bool changed = true;
    auto merge = [&](Value to, Value from) {
      auto it = carries.find(from);
      if (it == carries.end())
        return;
      OpSet src = it->second;
      OpSet &dst = carries[to];
      size_t before = dst.size();
      dst.insert(src.begin(), src.end());
      changed |= dst.size() != before;
    };
    fn->walk([&](Operation *op) {
      if (isMma(op))
        carries[op->getResult(0)].insert(op);
    });
    while (changed) {
      changed = false;
      fn->walk([&](Operation *op) {
        // An extracted register is a read, reported where it happens; what
        // it flows into afterwards is an ordinary value.
        if (isPlumbing(op) && !isa<LLVM::ExtractValueOp>(op))
          for (Value v : op->getOperands())
            merge(op->getResult(0), v);
        if (auto forOp = dyn_cast<scf::ForOp>(op)) {
          auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
          for (auto [i, arg] : llvm::enumerate(forOp.getRegionIterArgs())) {
            merge(arg, forOp.getInitArgs()[i]);
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
            OperandRange fwd =
                br.getSuccessorOperands(s).getForwardedOperands();
            Block *dest = op->getSuccessor(s);
            unsigned offset = dest->getNumArguments() - fwd.size();
            for (auto [i, v] : llvm::enumerate(fwd))
              merge(dest->getArgument(offset + i), v);
          }
      });
    }
    // Closures: backward from each mma's register operands.
    fn->walk([&](Operation *op) {
      if (!isMma(op))
        return;
      llvm::DenseSet<Value> &seen = closure[op];
      SmallVector<Value> work(mmaRegisterOperands(op));
      while (!work.empty()) {
        Value v = work.pop_back_val();
        if (!seen.insert(v).second)
          continue;
        mmaInputs.insert(v);
        if (Operation *def = v.getDefiningOp()) {
          if (isPlumbing(def))
            for (Value o : def->getOperands())
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
    if (!emit || !reported.insert({v.at, v.kind}).second)
      return;
    report->push_back(v);
  }

  /// A use of a pending result is harmless when the using op only
  /// re-bundles registers that end up in mma_async operands.
  bool onlyFeedsMma(Operation *op) {
    return isPlumbing(op) && llvm::all_of(op->getResults(), [&](Value r) {
             return mmaInputs.contains(r);
           });
  }

  void transferMma(Operation *op, State &s, bool emit) {
    if (s.proxyStore)
      emitOnce({ProtocolViolation::MissingProxyFence, op, s.proxyStore}, emit);
    // mma_async ops never mark registers dirty, so chaining accumulators
    // needs no fence; what does is a non-wgmma access since the last fence,
    // or a chain that changes shape (outside the ISA's exception).
    bool dirty =
        llvm::any_of(closure[op], [&](Value v) { return s.dirty.contains(v); });
    bool shapeChange = false;
    if (auto it = carries.find(mmaRegisterOperands(op).front());
        it != carries.end())
      shapeChange = llvm::any_of(it->second, [&](Operation *prev) {
        return prev != op && mmaShape(prev) != mmaShape(op);
      });
    if (!s.everFenced || dirty || (shapeChange && !s.fencedSinceMma))
      emitOnce({ProtocolViolation::MissingFence, op, s.lastAccess}, emit);
    s.fencedSinceMma = false;
    s.uncommitted.insert(op);
  }

  void transferOp(Operation *op, State &s, bool emit) {
    if (isa<FenceOp>(op)) {
      s.everFenced = true;
      s.fencedSinceMma = true;
      s.dirty.clear();
      s.lastAccess = nullptr;
      return;
    }
    if (isa<CommitGroupOp>(op)) {
      s.groups.push_back(s.uncommitted);
      s.uncommitted.clear();
      s.capGroups();
      return;
    }
    if (auto wait = dyn_cast<WaitGroupOp>(op)) {
      uint64_t keep = static_cast<uint64_t>(wait.getGroup());
      if (s.groups.size() > keep)
        s.groups.erase(s.groups.begin(), s.groups.end() - keep);
      return;
    }
    if (isMma(op)) {
      transferMma(op, s, emit);
      return;
    }
    if (isProxyFence(op)) {
      s.proxyStore = nullptr;
      return;
    }
    if (isGenericSharedStore(op))
      s.proxyStore = op;
    if (isForwarding(op))
      return;
    // A non-wgmma op: early uses of pending results, register accesses.
    bool touches = false;
    for (Value v : op->getOperands()) {
      if (mmaInputs.contains(v)) {
        s.dirty.insert(v);
        touches = true;
      }
      auto it = carries.find(v);
      if (it == carries.end() || onlyFeedsMma(op))
        continue;
      for (Operation *mma : it->second) {
        bool isUncommitted = false;
        int64_t depth = 0;
        if (s.pending(mma, isUncommitted, depth)) {
          ProtocolViolation v{ProtocolViolation::EarlyUse, op, mma};
          v.uncommitted = isUncommitted;
          v.waitDepth = depth;
          emitOnce(v, emit);
        }
      }
    }
    for (Value r : op->getResults())
      if (mmaInputs.contains(r)) {
        s.dirty.insert(r);
        touches = true;
      }
    if (touches)
      s.lastAccess = op;
  }

  void checkReturn(Operation *term, const State &s, bool emit) {
    for (Operation *mma : s.uncommitted) {
      ProtocolViolation v{ProtocolViolation::NotCommitted, term, mma};
      v.uncommitted = true;
      emitOnce(v, emit);
      break;
    }
    for (size_t i = 0; i < s.groups.size(); ++i)
      if (!s.groups[i].empty()) {
        ProtocolViolation v{ProtocolViolation::NotWaited, term,
                            s.groups[i].front()};
        emitOnce(v, emit);
        break;
      }
  }

  State runBlock(Block &block, State s, bool emit) {
    for (Operation &op : block) {
      if (auto forOp = dyn_cast<scf::ForOp>(&op)) {
        s = runFor(forOp, s, emit);
        continue;
      }
      if (auto ifOp = dyn_cast<scf::IfOp>(&op)) {
        State then = runRegion(ifOp.getThenRegion(), s, emit);
        State other = ifOp.getElseRegion().empty()
                          ? s
                          : runRegion(ifOp.getElseRegion(), s, emit);
        then.join(other);
        s = then;
        continue;
      }
      transferOp(&op, s, emit);
      for (Region &r : op.getRegions())
        if (!r.empty() && !isa<FunctionOpInterface>(op))
          s = runRegion(r, s, emit);
      if (op.hasTrait<OpTrait::ReturnLike>() && op.getParentOp() == fn)
        checkReturn(&op, s, emit);
    }
    return s;
  }

  State runFor(scf::ForOp forOp, State s, bool emit) {
    // Iterate the body from the join of the entry and the back edge.
    State head = s;
    for (int i = 0; i < 64; ++i) {
      State out = runRegion(forOp.getRegion(), head, /*emit=*/false);
      State next = s;
      next.join(out);
      if (next == head)
        break;
      head = next;
    }
    State out = runRegion(forOp.getRegion(), head, emit);
    State exit = s; // zero trips
    exit.join(out);
    exit.join(head);
    return exit;
  }

  State runRegion(Region &region, State s, bool emit) {
    if (region.hasOneBlock())
      return runBlock(region.front(), s, emit);
    // Plain CFG: worklist over blocks; the exit state joins every block that
    // leaves the region.
    DenseMap<Block *, State> in;
    in[&region.front()] = s;
    SmallVector<Block *> work{&region.front()};
    for (int iterations = 0; !work.empty() && iterations < 4096; ++iterations) {
      Block *b = work.pop_back_val();
      State out = runBlock(*b, in[b], /*emit=*/false);
      for (Block *succ : b->getSuccessors()) {
        State joined = in.lookup(succ);
        joined.join(out);
        if (!(joined == in.lookup(succ))) {
          in[succ] = joined;
          work.push_back(succ);
        }
      }
    }
    State exit;
    for (Block &b : region) {
      State out = runBlock(b, in.lookup(&b), emit);
      if (b.getNumSuccessors() == 0)
        exit.join(out);
    }
    return exit;
  }
};

} // namespace

SmallVector<ProtocolViolation> nvwgmma::analyzeProtocol(Operation *root) {
  SmallVector<ProtocolViolation> out;
  root->walk([&](FunctionOpInterface fn) {
    if (fn.isExternal())
      return;
    Analysis(fn).run(out);
  });
  return out;
}
