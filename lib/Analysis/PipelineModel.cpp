//===- PipelineModel.cpp - rings, barriers and who guards what ------------===//

#include "PipelineModel.h"

#include "nvwgmma/IR/NVWGMMAOps.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/Support/FormatVariadic.h"
#include <set>

using namespace mlir;
using namespace mlir::nvwgmma;

namespace {

std::string termsKey(const Linear &l) {
  std::vector<std::pair<uintptr_t, int64_t>> terms;
  for (auto &[atom, coeff] : l.terms)
    terms.push_back(
        {reinterpret_cast<uintptr_t>(atom.getAsOpaquePointer()), coeff});
  llvm::sort(terms);
  std::string key;
  for (auto &[atom, coeff] : terms)
    key += llvm::formatv("{0}*{1};", coeff, atom).str();
  return key;
}

/// Whether every term of `base` appears in `l` with the same coefficient
/// (extra terms, e.g. a consumer's sub-tile offset, are allowed).
bool contains(const Linear &l, const Linear &base) {
  return llvm::all_of(base.terms, [&](const auto &t) {
    auto it = l.terms.find(t.first);
    return it != l.terms.end() && it->second == t.second;
  });
}

std::string signedOffset(int64_t offset) {
  if (offset == 0)
    return "k";
  return llvm::formatv("k {0} {1}", offset < 0 ? "-" : "+",
                       offset < 0 ? -offset : offset)
      .str();
}

} // namespace

std::optional<int64_t> PipelineModel::statedBytes(Operation *op) {
  const ProtocolEvent &e = events.of(op);
  if (e.bytes)
    return e.bytes;
  if (std::optional<int64_t> c = addresses.constant(e.bytesValue))
    return c;
  if (std::optional<int64_t> box = tensorMaps.boxBytes(e.tensorMap))
    return box;
  // A front end that names a TMA load's destination by a memref (Mosaic
  // GPU) copies the whole memref: its shape is the box.
  if (e.kind == EventKind::TmaLoad && e.destination)
    return addresses.memrefBytesAt(e.destination);
  return std::nullopt;
}

std::optional<int64_t> PipelineModel::tmaBytes(Operation *load) {
  const ProtocolEvent &e = events.of(load);
  std::optional<int64_t> bytes = statedBytes(load);
  if (!bytes || !e.multicastMask)
    return bytes;
  // Multicast is used symmetrically: every CTA of the mask multicasts its
  // own slice, so each CTA's barrier receives popcount(mask) of them.
  std::optional<int64_t> m = addresses.constant(e.multicastMask);
  if (!m)
    return std::nullopt;
  return *bytes * llvm::popcount(static_cast<uint64_t>(*m) & 0xffff);
}

std::string mlir::nvwgmma::describeStage(const StageExpr &stage) {
  if (stage.isConstant())
    return llvm::formatv("{0} of {1}", stage.offset, stage.stages).str();
  if (stage.isFixed())
    return "a fixed slot";
  if (stage.offset == 0)
    return llvm::formatv("k mod {0}", stage.stages).str();
  return llvm::formatv("({0}) mod {1}", signedOffset(stage.offset),
                       stage.stages)
      .str();
}

std::string mlir::nvwgmma::describePhase(const PhaseExpr &phase) {
  std::string round =
      phase.round.offset == 0
          ? llvm::formatv("(k / {0}) & 1", phase.round.stages).str()
          : llvm::formatv("(({0}) / {1}) & 1", signedOffset(phase.round.offset),
                          phase.round.stages)
                .str();
  return phase.flipped ? round + " ^ 1" : round;
}

PipelineModel::PipelineModel(FunctionOpInterface fn)
    : tensorMaps(fn, addresses), fn(fn) {
  fn->walk([&](Operation *op) {
    if (events.kind(op) == EventKind::TmaLoad)
      tmaLoads.push_back(op);
  });
  learnRings();
  learnOneShotFills();
  learnReleases();
  learnEmptyBarriers();
}

std::optional<SlotRef> PipelineModel::barrierAt(Value address, Value index) {
  std::optional<StagedAddress> a = addresses.barrier(address, index);
  if (!a)
    return std::nullopt;
  if (a->stride == 0 && a->stage.isFixed()) {
    // A fixed address inside a staged barrier array is one of its slots (a
    // wait for stage 1 before the loop that walks the array).
    std::string terms = termsKey(a->rest);
    for (const BarrierArray &array : barrierArrays) {
      int64_t delta = a->rest.constant - array.base;
      if (array.terms == terms && delta >= 0 && delta % array.stride == 0 &&
          delta / array.stride < array.stages)
        return SlotRef{array.id,
                       StageExpr{Value(), delta / array.stride, array.stages}};
    }
  }
  return SlotRef{barrierId(a->rest, a->stride, a->stage.stages), a->stage};
}

int PipelineModel::barrierId(const Linear &base, int64_t stride,
                             int64_t stages) {
  std::array<int64_t, 3> shape{stride, stages, base.constant};
  auto key = std::make_pair(termsKey(base), shape);
  auto [it, added] = barrierIds.try_emplace(key, barrierIds.size());
  if (added && stride > 0 && stages > 1)
    barrierArrays.push_back(
        {key.first, base.constant, stride, stages, it->second});
  return it->second;
}

std::optional<SlotRef> PipelineModel::ringAt(Value address, bool descriptor) {
  std::optional<StagedAddress> a = addresses.staged(address, descriptor);
  if (!a)
    return std::nullopt;
  for (auto [id, ring] : llvm::enumerate(rings)) {
    int64_t lo = ring.base.constant;
    if (a->stride != 0 && ring.stride == a->stride &&
        ring.stages == a->stage.stages && contains(a->rest, ring.base) &&
        a->rest.constant >= lo && a->rest.constant < lo + ring.stride)
      return SlotRef{static_cast<int>(id), a->stage};
  }
  // Not indexed by a ring's stage: an address inside one stage, whose
  // varying part (a k-block or an M-half loop within the stage) stays in
  // it, reads that stage (CuTe's first k-tile, read before the main loop).
  int64_t span = 0;
  if (!a->stage.isFixed() &&
      (a->stride < 0 || a->stage.stages <= 0 ||
       llvm::MulOverflow(a->stride, a->stage.stages - 1, span)))
    return std::nullopt;
  for (auto [id, ring] : llvm::enumerate(rings)) {
    int64_t delta = a->rest.constant - ring.base.constant;
    if (ring.stride <= 0 || !contains(a->rest, ring.base) || delta < 0 ||
        delta / ring.stride >= ring.stages ||
        delta % ring.stride + span >= ring.stride)
      continue;
    return SlotRef{static_cast<int>(id),
                   StageExpr{Value(), delta / ring.stride, ring.stages}};
  }
  return std::nullopt;
}

void PipelineModel::learnRings() {
  // Stage 0 of each ring starts at its lowest destination; a destination
  // a whole stride or more further up belongs to another ring.
  SmallVector<std::pair<Operation *, StagedAddress>> writes;
  for (Operation *load : tmaLoads)
    if (std::optional<StagedAddress> a =
            addresses.staged(events.of(load).destination);
        a && a->stride > 0)
      writes.push_back({load, *a});
  llvm::stable_sort(writes, [](const auto &x, const auto &y) {
    return x.second.rest.constant < y.second.rest.constant;
  });
  for (auto &[load, a] : writes) {
    std::optional<SlotRef> slot = ringAt(events.of(load).destination);
    if (!slot) {
      Ring ring;
      ring.stride = a.stride;
      ring.stages = a.stage.stages;
      ring.base = a.rest;
      ring.firstWrite = load;
      rings.push_back(ring);
      slot = SlotRef{static_cast<int>(rings.size() - 1), a.stage};
    }
    std::optional<SlotRef> barrier = barrierOf(load);
    if (barrier && barrier->stage.sameSlot(slot->stage) &&
        !llvm::is_contained(rings[slot->id].full, barrier->id))
      rings[slot->id].full.push_back(barrier->id);
  }
  learnPrologueRings();
}

void PipelineModel::learnPrologueRings() {
  // Loads at fixed addresses, each completing on a fixed mbarrier of one
  // array: slot c of the array gets the c-th stage of every ring. Grouped
  // by array (the barrier address's non-constant terms), then by slot.
  struct Fill {
    Operation *load;
    Linear dest;
  };
  // Per barrier array: its address terms, and per slot address the loads.
  struct Array {
    Linear base;
    std::map<int64_t, SmallVector<Fill>> slots;
  };
  std::map<std::string, Array> byArray;
  for (Operation *load : tmaLoads) {
    const ProtocolEvent &e = events.of(load);
    std::optional<StagedAddress> dest = addresses.staged(e.destination);
    std::optional<StagedAddress> bar =
        addresses.barrier(e.barrier, e.barrierIndex);
    if (!dest || dest->stride != 0 || !bar || bar->stride != 0 ||
        bar->rest.terms.empty())
      continue;
    Array &array = byArray[termsKey(bar->rest)];
    array.base = bar->rest;
    array.slots[bar->rest.constant].push_back({load, dest->rest});
  }
  for (auto &[key, array] : byArray) {
    auto &slots = array.slots;
    // Slots 8 bytes apart from the lowest, each with as many loads.
    int64_t first = slots.begin()->first;
    int64_t stages = static_cast<int64_t>(slots.size());
    size_t perSlot = slots.begin()->second.size();
    bool regular = stages > 1 && stages <= kMaxRingStages;
    for (auto &[at, fills] : slots) {
      regular &= fills.size() == perSlot && (at - first) % 8 == 0 &&
                 (at - first) / 8 < stages;
      llvm::stable_sort(fills, [](const Fill &x, const Fill &y) {
        return x.dest.constant < y.dest.constant;
      });
    }
    if (!regular)
      continue;
    // The full barrier as a staged wait names it: base + 8 * stage.
    Linear base = array.base;
    base.constant = first;
    int full = barrierId(base, /*stride=*/8, stages);
    const SmallVector<Fill> &stage0 = slots.begin()->second;
    for (size_t j = 0; j < perSlot; ++j) {
      // The j-th load of every slot: one ring, if evenly strided.
      const Fill &lo = stage0[j];
      int64_t stride = 0;
      bool even = true;
      for (auto &[at, fills] : slots) {
        const Fill &f = fills[j];
        int64_t c = (at - first) / 8;
        even &= termsKey(f.dest) == termsKey(lo.dest);
        if (c == 0)
          continue;
        int64_t delta = f.dest.constant - lo.dest.constant;
        even &= delta > 0 && delta % c == 0 && (!stride || delta / c == stride);
        stride = delta / c;
      }
      if (!even || stride <= 0)
        continue;
      Ring ring;
      ring.stride = stride;
      ring.stages = stages;
      ring.base = lo.dest;
      ring.firstWrite = lo.load;
      ring.full.push_back(full);
      rings.push_back(ring);
      for (auto &[at, fills] : slots)
        prologueFills.insert(fills[j].load);
    }
  }
}

/// How far an unknown index term may move a read (warpgroups of a CTA).
constexpr int64_t kSmallIndex = 4;

void PipelineModel::learnOneShotFills() {
  for (Operation *load : tmaLoads) {
    std::optional<StagedAddress> a =
        addresses.staged(events.of(load).destination);
    std::optional<SlotRef> barrier = barrierOf(load);
    std::optional<int64_t> bytes = statedBytes(load);
    if (!a || a->stride != 0 || !barrier || !barrier->stage.isFixed() ||
        barrier->stage.stages != 1 || !bytes || *bytes <= 0 ||
        prologueFills.contains(load))
      continue;
    oneShotFills.push_back({a->rest, *bytes, barrier->id, load});
  }
}

SmallVector<const OneShotFill *, 1>
PipelineModel::oneShotReadsOf(Operation *mma) {
  SmallVector<const OneShotFill *, 1> found;
  for (Value d : events.of(mma).descriptors)
    oneShotReadsOf(d, found);
  return found;
}

const OneShotFill *PipelineModel::oneShotAt(Value address) {
  std::optional<StagedAddress> a = addresses.staged(address);
  if (!a || a->stride != 0)
    return nullptr;
  for (const OneShotFill &fill : oneShotFills)
    if (!fill.dest.terms.empty() && contains(a->rest, fill.dest) &&
        a->rest.terms.size() == fill.dest.terms.size() &&
        a->rest.constant >= fill.dest.constant &&
        a->rest.constant < fill.dest.constant + fill.bytes)
      return &fill;
  return nullptr;
}

void PipelineModel::oneShotReadsOf(
    Value d, SmallVectorImpl<const OneShotFill *> &found) {
  if (ringAt(d, /*descriptor=*/true))
    return;
  std::optional<StagedAddress> a = addresses.staged(d, /*descriptor=*/true);
  if (!a || a->stride != 0)
    return;
  for (const OneShotFill &fill : oneShotFills) {
    if (fill.dest.terms.empty() || !contains(a->rest, fill.dest) ||
        llvm::is_contained(found, &fill))
      continue;
    // The read may carry one term the fill lacks: a warpgroup's own part,
    // index * bytes, with a small index (FlashAttention's consumers read
    // Q's halves at (warpgroup - 1) * bytes).
    SmallVector<int64_t, 1> extra;
    for (auto &[atom, coeff] : a->rest.terms)
      if (fill.dest.terms.lookup(atom) != coeff)
        extra.push_back(coeff);
    if (extra.size() > 1)
      continue;
    int64_t step = extra.empty() ? 0 : extra.front();
    for (int64_t t = extra.empty() ? 0 : -kSmallIndex;
         t <= (extra.empty() ? 0 : kSmallIndex); ++t) {
      int64_t at = a->rest.constant + t * step;
      if (at >= fill.dest.constant && at < fill.dest.constant + fill.bytes) {
        found.push_back(&fill);
        break;
      }
    }
  }
}

/// Whether bytes [to + from, to + until) can meet [base, base + extent):
/// only a store at a constant offset (or offset range) from exactly
/// `base`'s atoms is known apart.
static bool mayOverlap(const StagedAddress &to, int64_t from, int64_t until,
                       const Linear &base, int64_t extent) {
  if (to.stride != 0 || to.rest.terms.size() != base.terms.size() ||
      !contains(to.rest, base))
    return true;
  int64_t lo = base.constant, at = to.rest.constant;
  return at + from < lo + extent && at + until > lo;
}

bool PipelineModel::mayFeed(Operation *store, Operation *mma) {
  auto write = dyn_cast<LLVM::StoreOp>(store);
  if (!write)
    return true;
  // A base and an offset range where the address has one (a swizzled
  // scratch address from thread bits, as Triton's layout conversions
  // write), else its staged linear form.
  std::optional<StagedAddress> to;
  std::optional<BoundedAddress> range = addresses.bounded(write.getAddr());
  int64_t lo = 0, hi = 0;
  if (range && (range->lo != 0 || range->hi != 0)) {
    to = StagedAddress();
    to->rest = range->base;
    lo = range->lo;
    hi = range->hi;
  } else {
    to = addresses.staged(write.getAddr());
  }
  if (!to)
    return true;
  Type type = write.getValue().getType();
  int64_t bytes = 16;
  if (type.isIntOrFloat())
    bytes = std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
  else if (auto vector = dyn_cast<VectorType>(type);
           vector && vector.getElementType().isIntOrFloat())
    bytes = vector.getNumElements() *
            std::max<int64_t>(1, vector.getElementTypeBitWidth() / 8);
  // What each descriptor can read: its ring (every stage) or the one-shot
  // fill it starts in; a descriptor related to neither may read anything.
  for (Value d : events.of(mma).descriptors) {
    if (std::optional<SlotRef> slot = ringAt(d, /*descriptor=*/true)) {
      const Ring &ring = rings[slot->id];
      if (mayOverlap(*to, lo, hi + bytes, ring.base, ring.stride * ring.stages))
        return true;
      continue;
    }
    SmallVector<const OneShotFill *, 1> fills;
    oneShotReadsOf(d, fills);
    if (fills.empty())
      return true;
    for (const OneShotFill *fill : fills)
      if (mayOverlap(*to, lo, hi + bytes, fill->dest, fill->bytes))
        return true;
  }
  return false;
}

/// Ops before `op` in its block and every enclosing one, innermost first.
static void forEachEarlier(Operation *op, Operation *fn,
                           llvm::function_ref<void(Operation *)> visit) {
  for (Operation *at = op; at && at != fn; at = at->getParentOp())
    for (Operation *prev = at->getPrevNode(); prev; prev = prev->getPrevNode())
      visit(prev);
}

void PipelineModel::forEachEarlierEvent(
    Operation *op, EventKind kind,
    llvm::function_ref<void(Operation *)> visit) {
  forEachEarlier(op, fn.getOperation(), [&](Operation *prev) {
    prev->walk([&](Operation *inner) {
      if (events.kind(inner) == kind)
        visit(inner);
    });
  });
}

void PipelineModel::forEachEarlierMma(
    Operation *op, llvm::function_ref<void(Operation *)> visit) {
  // Structured: earlier in its block and every enclosing one, innermost
  // first; then CFG: ops in blocks that dominate its own (a release after
  // the join of a conditional wait, in lowered IR).
  llvm::SmallPtrSet<Operation *, 16> seen;
  forEachEarlierEvent(op, EventKind::Mma, [&](Operation *mma) {
    if (seen.insert(mma).second)
      visit(mma);
  });
  if (!mmaOps) {
    mmaOps.emplace();
    fn->walk([&](Operation *mma) {
      if (events.kind(mma) == EventKind::Mma)
        mmaOps->push_back(mma);
    });
  }
  for (Operation *mma : *mmaOps)
    if (!seen.contains(mma) && addresses.properlyDominates(mma, op))
      visit(mma);
}

void PipelineModel::learnReleases() {
  // Consumers release a stage once they have read it: an arrive on a
  // barrier slot after an mma_async that read the same slot of a ring
  // makes the barrier that ring's release (its empty barrier).
  fn->walk([&](Operation *op) {
    if (events.kind(op) != EventKind::Arrive)
      return;
    std::optional<SlotRef> slot = barrierOf(op);
    if (!slot || isFull(slot->id))
      return;
    if (slot->stage.isFixed() && slot->stage.stages == 1) {
      // A fixed barrier arrived on after reading a one-shot tile releases it;
      // after reading a ring's stage, it may release that ring one round at
      // a time (Mosaic's consumed barriers: one phase per round, whatever
      // the stage). The newest read of each ring names the stage released.
      SmallVector<int, 2> &read = releasedAfter[slot->id];
      auto &stages = sharedReleaseStages[op];
      forEachEarlierMma(op, [&](Operation *mma) {
        for (const OneShotFill *fill : oneShotReadsOf(mma)) {
          auto &releases = oneShotFills[fill - oneShotFills.data()].releases;
          if (llvm::none_of(releases,
                            [&](const auto &r) { return r.first == op; }))
            releases.push_back({op, slot->id});
        }
        for (const SlotRef &r : readsOf(mma)) {
          if (r.stage.isFixed())
            continue;
          if (!llvm::is_contained(read, r.id))
            read.push_back(r.id);
          stages.try_emplace(r.id, r.stage);
        }
      });
      return;
    }
    if (slot->stage.stages <= 1)
      return;
    SmallVector<int, 2> &read = releasedAfter[slot->id];
    forEachEarlierMma(op, [&](Operation *mma) {
      for (const SlotRef &r : readsOf(mma))
        if (r.stage.sameSlot(slot->stage) && !llvm::is_contained(read, r.id))
          read.push_back(r.id);
    });
  });
}

void PipelineModel::learnEmptyBarriers() {
  // A producer waits on the empty barrier of a stage before refilling it:
  // a wait on the same slot that runs before the load on every path to it
  // (its block, or any block dominating the load's, at any depth) -- unless
  // the consumers are seen releasing that barrier only after reading other
  // rings (FlashAttention's K and V rings: the wait before the V load in one
  // block is K's).
  SmallVector<Operation *> waits;
  fn->walk([&](Operation *op) {
    if (events.kind(op) == EventKind::ParityWait)
      waits.push_back(op);
  });
  for (Operation *load : tmaLoads) {
    std::optional<SlotRef> slot = ringAt(events.of(load).destination);
    if (!slot)
      continue;
    Ring &ring = rings[slot->id];
    for (Operation *prev : waits) {
      if (!addresses.properlyDominates(prev, load))
        continue;
      std::optional<SlotRef> barrier = barrierOf(prev);
      if (!barrier || llvm::is_contained(ring.full, barrier->id) ||
          llvm::is_contained(ring.empty, barrier->id))
        continue;
      auto released = releasedAfter.find(barrier->id);
      bool releasesRing = released != releasedAfter.end() &&
                          llvm::is_contained(released->second, slot->id);
      // One barrier for every stage is the ring's release only where the
      // consumers are seen arriving on it after reading the ring.
      bool shared = isShared(*barrier) && !isFull(barrier->id) &&
                    !slot->stage.isFixed() && releasesRing &&
                    !isRendezvous(barrier->id);
      if (!shared && !barrier->stage.sameSlot(slot->stage))
        continue;
      if (!shared && released != releasedAfter.end() &&
          !released->second.empty() && !releasesRing)
        continue;
      ring.empty.push_back(barrier->id);
    }
  }
}

bool PipelineModel::isFull(int barrier) const {
  return llvm::any_of(rings, [&](const Ring &r) {
    return llvm::is_contained(r.full, barrier);
  });
}

bool PipelineModel::isArrivedOn(int barrier) {
  if (!arrivedOn) {
    arrivedOn.emplace();
    fn->walk([&](Operation *op) {
      if (events.kind(op) == EventKind::Arrive)
        if (std::optional<SlotRef> slot = barrierOf(op))
          arrivedOn->insert(slot->id);
    });
  }
  return arrivedOn->contains(barrier);
}

bool PipelineModel::isRendezvous(int barrier) {
  auto [it, added] = rendezvous.try_emplace(barrier, false);
  if (!added)
    return it->second;
  SmallVector<Operation *> arrives, waits;
  fn->walk([&](Operation *op) {
    EventKind kind = events.kind(op);
    if (kind != EventKind::Arrive && kind != EventKind::ParityWait)
      return;
    if (std::optional<SlotRef> slot = barrierOf(op);
        slot && slot->id == barrier)
      (kind == EventKind::Arrive ? arrives : waits).push_back(op);
  });
  bool found = llvm::any_of(arrives, [&](Operation *arrive) {
    return llvm::any_of(waits, [&](Operation *wait) {
      return addresses.properlyDominates(arrive, wait);
    });
  });
  return rendezvous[barrier] = found;
}

bool PipelineModel::rendezvousInRound(Operation *op) {
  const void *loop = innermostLoop(op);
  if (!loop)
    return false;
  auto [known, added] = roundRendezvous.try_emplace(loop, false);
  if (!added)
    return known->second;
  bool found = false;
  fn->walk([&](Operation *wait) {
    if (found || events.kind(wait) != EventKind::ParityWait ||
        innermostLoop(wait) != loop)
      return;
    std::optional<SlotRef> slot = barrierOf(wait);
    found = slot && !isFull(slot->id) && !isEmpty(slot->id) &&
            isRendezvous(slot->id);
  });
  return roundRendezvous[loop] = found;
}

std::optional<StageExpr> PipelineModel::sharedReleaseStage(Operation *arrive,
                                                           int ring) {
  auto stages = sharedReleaseStages.find(arrive);
  if (stages == sharedReleaseStages.end())
    return std::nullopt;
  auto stage = stages->second.find(ring);
  if (stage == stages->second.end())
    return std::nullopt;
  return stage->second;
}

bool PipelineModel::isEmpty(int barrier) const {
  return llvm::any_of(rings, [&](const Ring &r) {
    return llvm::is_contained(r.empty, barrier);
  });
}

SmallVector<SlotRef, 2> PipelineModel::readsOf(Operation *mma) {
  const SmallVector<Value, 2> &descriptors = events.of(mma).descriptors;
  SmallVector<SlotRef, 2> reads;
  for (Value d : descriptors)
    if (std::optional<SlotRef> slot = ringAt(d, /*descriptor=*/true))
      reads.push_back(*slot);
  return reads;
}

void PipelineModel::checkOneShotRefills(
    SmallVectorImpl<ProtocolViolation> &out) {
  // A one-shot tile its readers release, loaded again in a loop (the next
  // persistent tile's Q), must first wait on that release.
  for (const OneShotFill &fill : oneShotFills) {
    if (fill.releases.empty() ||
        !fill.load->getParentOfType<LoopLikeOpInterface>())
      continue;
    bool waited = false;
    forEachEarlierEvent(fill.load, EventKind::ParityWait, [&](Operation *wait) {
      std::optional<SlotRef> barrier = barrierOf(wait);
      waited |= barrier && llvm::any_of(fill.releases, [&](const auto &r) {
                  return r.second == barrier->id;
                });
    });
    if (waited)
      continue;
    ProtocolViolation v{ProtocolViolation::ReadBeforeFilled, fill.load,
                        nullptr};
    v.text = "a TMA load must refill a one-shot tile only after a wait on the "
             "barrier its readers release it on, but got no such wait "
             "(protocol_c6)";
    v.notes.push_back({fill.releases.front().first,
                       "the readers release the tile on this barrier"});
    out.push_back(v);
  }
}

void PipelineModel::checkRefillsWait(SmallVectorImpl<ProtocolViolation> &out) {
  // Consumers release stages by arriving on an array of barriers no ring
  // fills; a ring of that many stages whose producer never waits on an
  // empty barrier refills stages the consumers may still read.
  SmallVector<std::pair<Operation *, SlotRef>> releases;
  SmallVector<Operation *> waits;
  fn->walk([&](Operation *op) {
    if (events.kind(op) == EventKind::ParityWait)
      waits.push_back(op);
  });
  fn->walk([&](Operation *op) {
    if (events.kind(op) != EventKind::Arrive)
      return;
    std::optional<SlotRef> slot = barrierOf(op);
    if (!slot || isFull(slot->id))
      return;
    if (!slot->stage.isFixed()) {
      releases.push_back({op, *slot});
      return;
    }
    // A single barrier arrived on after a ring's read releases it where
    // other threads wait on it: a wait neither before nor after the arrive
    // on any path (another partition's). One the arriving threads wait on
    // themselves is a rendezvous (Mosaic's schedule barrier).
    if (!isShared(*slot) || !sharedReleaseStages.count(op) ||
        isRendezvous(slot->id))
      return;
    bool elsewhere = llvm::any_of(waits, [&](Operation *wait) {
      std::optional<SlotRef> w = barrierOf(wait);
      return w && w->id == slot->id && !addresses.properlyDominates(op, wait) &&
             !addresses.properlyDominates(wait, op);
    });
    if (elsewhere)
      releases.push_back({op, *slot});
  });
  for (auto [id, ring] : llvm::enumerate(rings)) {
    if (!ring.empty.empty() || ring.full.empty())
      continue;
    // The release seen after a read of this ring, else any of its size.
    auto release = llvm::find_if(releases, [&](const auto &r) {
      auto read = releasedAfter.find(r.second.id);
      return read != releasedAfter.end() &&
             llvm::is_contained(read->second, static_cast<int>(id));
    });
    if (release == releases.end())
      release = llvm::find_if(releases, [&](const auto &r) {
        return !r.second.stage.isFixed() &&
               r.second.stage.stages == ring.stages;
      });
    if (release == releases.end())
      continue;
    // Reported at a refill: a load at a varying stage past the first round.
    Operation *at = ring.firstWrite;
    for (Operation *load : tmaLoads) {
      std::optional<SlotRef> slot = ringAt(events.of(load).destination);
      if (slot && slot->id == static_cast<int>(id) && !slot->stage.isFixed() &&
          !fillsFirstRound(load, slot->stage)) {
        at = load;
        break;
      }
    }
    ProtocolViolation v{ProtocolViolation::ReadBeforeFilled, at, nullptr};
    v.text = llvm::formatv("a TMA load must refill a stage of this {0}-stage "
                           "ring only after a wait on that stage's empty "
                           "barrier, but got no such wait (protocol_c6)",
                           ring.stages)
                 .str();
    v.notes.push_back({release->first, "the consumers release the ring's "
                                       "stages on this barrier"});
    out.push_back(v);
  }
}

void PipelineModel::check(SmallVectorImpl<ProtocolViolation> &out) {
  checkRefillsWait(out);
  checkOneShotRefills(out);
  fn->walk([&](Operation *op) {
    if (events.kind(op) == EventKind::ExpectTx)
      checkExpectTx(op, out);
    else if (events.kind(op) == EventKind::ParityWait)
      checkParity(op, out);
  });
}

std::optional<int64_t> PipelineModel::bytesReadThrough(int barrier) {
  // One walk over the function per barrier, however many expects name it.
  if (auto known = bytesRead.find(barrier); known != bytesRead.end())
    return known->second;
  std::optional<int64_t> &result = bytesRead[barrier];
  // Per ring: the descriptor starts (offset within the stage, symbolic
  // terms) already counted.
  std::map<int, std::set<std::pair<int64_t, std::string>>> seen;
  // Per ring and descriptor form (its symbolic terms: the loops stepping
  // it), the bytes read; two forms (a prologue's and the main loop's
  // descriptors) read the same stage, so the largest counts.
  std::map<int, std::map<std::string, int64_t>> byForm;
  fn->walk([&](Operation *op) {
    const ProtocolEvent &e = events.of(op);
    if (e.kind != EventKind::Mma)
      return;
    for (auto [i, d] : llvm::enumerate(e.descriptors)) {
      // Two descriptors are A and B; one is B (A in registers).
      bool isA = e.descriptors.size() == 2 && i == 0;
      std::optional<SlotRef> slot = ringAt(d, /*descriptor=*/true);
      std::optional<StagedAddress> a = addresses.staged(d, true);
      if (!slot || !a || !llvm::is_contained(rings[slot->id].full, barrier))
        continue;
      const Ring &ring = rings[slot->id];
      int64_t offset = a->rest.constant - ring.base.constant;
      if (!seen[slot->id].insert({offset, termsKey(a->rest)}).second)
        continue;
      // A descriptor stepped by a short loop inside the stage (k-blocks,
      // M halves) reads one operand tile per trip.
      int64_t trips = 1;
      auto times = [&](Value counter) {
        if (std::optional<int64_t> n = addresses.shortTripCount(counter))
          trips *= *n;
      };
      for (const auto &[atom, coeff] : a->rest.terms)
        if (coeff != 0)
          times(atom);
      if (a->stride != ring.stride && a->stage.counter)
        times(a->stage.counter);
      byForm[slot->id][termsKey(a->rest)] +=
          trips * (isA ? e.shape[0] : e.shape[1]) * 32;
    }
  });
  std::map<int, int64_t> read;
  for (const auto &[id, forms] : byForm)
    for (const auto &[form, bytes] : forms)
      read[id] = std::max(read[id], bytes);
  int64_t total = 0;
  for (auto [id, bytes] : read) {
    // More than a stage holds: the reads are not what this model thinks.
    if (bytes > rings[id].stride * static_cast<int64_t>(read.size()))
      return result = std::nullopt;
    total += bytes;
  }
  if (total > 0)
    result = total;
  return result;
}

CFGLoopInfo &PipelineModel::loopInfoOf(Region *region) {
  std::unique_ptr<CFGLoopInfo> &info = loopInfos[region];
  if (!info)
    info = std::make_unique<CFGLoopInfo>(
        addresses.dominanceInfo().getDomTree(region));
  return *info;
}

const void *PipelineModel::innermostLoop(Operation *op) {
  for (; op; op = op->getParentOp()) {
    Region *region = op->getParentRegion();
    if (!region)
      return nullptr;
    if (!region->hasOneBlock()) {
      CFGLoopInfo &info = loopInfoOf(region);
      if (CFGLoop *loop = info.getLoopFor(op->getBlock()))
        return loop;
    }
    if (isa<LoopLikeOpInterface>(op->getParentOp()))
      return op->getParentOp();
  }
  return nullptr;
}

bool PipelineModel::fillsFirstRound(Operation *load, const StageExpr &stage) {
  // A loop of at most S trips that no other loop holds fills each stage
  // once: round 0, which no release precedes (a warmup loop).
  std::optional<int64_t> trips = addresses.shortTripCount(stage.counter);
  if (!stage.counter || !trips || *trips > stage.stages)
    return false;
  Block *header = Value(stage.counter).getParentBlock();
  Operation *loopOp = header->getParentOp();
  if (isa<LoopLikeOpInterface>(loopOp))
    return header->getParent()->isAncestor(load->getParentRegion()) &&
           !innermostLoop(loopOp);
  Region *region = header->getParent();
  CFGLoopInfo &info = loopInfoOf(region);
  CFGLoop *loop = info.getLoopFor(header);
  return loop && loop->getHeader() == header && !loop->getParentLoop() &&
         loop->contains(load->getBlock()) && !innermostLoop(loopOp);
}

SmallVector<Operation *> PipelineModel::loadsOfRound(Operation *expect,
                                                     const SlotRef &barrier) {
  // The loads on the slot in the expect's block; failing those, the ones
  // reachable from it within its round: not through its innermost loop's
  // header, nor past a wait or another expect on the slot (CuTe issues its
  // loads in blocks after the elected thread's expect).
  SmallVector<Operation *> found;
  auto onSlot = [&](Operation *op, EventKind kind) {
    if (events.kind(op) != kind)
      return false;
    std::optional<SlotRef> slot = barrierOf(op);
    return slot && slot->id == barrier.id &&
           slot->stage.sameSlot(barrier.stage);
  };
  // A loop nested in the block runs other rounds (a 1-stage ring's main
  // loop refills the slot the prologue's expect is for).
  Block *block = expect->getBlock();
  for (Operation &top : *block)
    top.walk<WalkOrder::PreOrder>([&](Operation *load) {
      if (isa<LoopLikeOpInterface>(load))
        return WalkResult::skip();
      if (onSlot(load, EventKind::TmaLoad))
        found.push_back(load);
      return WalkResult::advance();
    });
  Region *region = block->getParent();
  if (!found.empty() || region->hasOneBlock())
    return found;
  Block *header = nullptr;
  if (const void *loop = innermostLoop(expect)) {
    if (CFGLoop *cfg = loopInfoOf(region).getLoopFor(block); cfg && cfg == loop)
      header = cfg->getHeader();
  }
  SmallVector<Block *> work(block->getSuccessors());
  llvm::SmallPtrSet<Block *, 32> seen{block};
  while (!work.empty() && seen.size() < 256) {
    Block *b = work.pop_back_val();
    if (b == header || !seen.insert(b).second)
      continue;
    bool ends = false;
    for (Operation &top : *b)
      top.walk([&](Operation *op) {
        if (onSlot(op, EventKind::TmaLoad))
          found.push_back(op);
        ends |= onSlot(op, EventKind::ParityWait) ||
                onSlot(op, EventKind::ExpectTx);
      });
    if (!ends)
      llvm::append_range(work, b->getSuccessors());
  }
  return found;
}

bool PipelineModel::soleExpectOfItsLoop(Operation *expect, int barrier) {
  const void *loop = innermostLoop(expect);
  bool sole = true;
  fn->walk([&](Operation *other) {
    if (other == expect || other->getBlock() == expect->getBlock() ||
        events.kind(other) != EventKind::ExpectTx)
      return;
    std::optional<SlotRef> slot = barrierOf(other);
    if (slot && slot->id == barrier && innermostLoop(other) == loop)
      sole = false;
  });
  return sole;
}

void PipelineModel::checkExpectTx(Operation *expect,
                                  SmallVectorImpl<ProtocolViolation> &out) {
  std::optional<SlotRef> barrier = barrierOf(expect);
  std::optional<int64_t> expected = statedBytes(expect);
  if (!barrier || !expected)
    return;
  // Every expect on this slot in the block counts; the first reports.
  Block *block = expect->getBlock();
  int64_t total = 0;
  for (Operation &op : *block)
    if (events.kind(&op) == EventKind::ExpectTx) {
      std::optional<SlotRef> other = barrierOf(&op);
      if (!other || other->id != barrier->id ||
          !other->stage.sameSlot(barrier->stage))
        continue;
      if (&op != expect && op.isBeforeInBlock(expect))
        return;
      std::optional<int64_t> c = statedBytes(&op);
      if (!c)
        return;
      total += *c;
    }
  int64_t brought = 0;
  bool unknown = false;
  ProtocolViolation v{ProtocolViolation::ExpectTxMismatch, expect, nullptr};
  for (Operation *load : loadsOfRound(expect, *barrier)) {
    std::optional<int64_t> bytes = tmaBytes(load);
    if (!bytes) {
      unknown = true;
      continue;
    }
    brought += *bytes;
    v.notes.push_back(
        {load, llvm::formatv("TMA load of {0} bytes completing on the barrier",
                             *bytes)
                   .str()});
  }
  if (unknown ||
      (v.notes.empty() && soleExpectOfItsLoop(expect, barrier->id))) {
    // The boxes are not in the IR (or the loads are in other blocks), but
    // what the mma_async read from the stages these loads fill must
    // arrive: a count below that completes the phase before the data.
    std::optional<int64_t> read = bytesReadThrough(barrier->id);
    if (read && total < *read) {
      v.notes.clear();
      v.text = llvm::formatv("the expect_tx byte count must cover the bytes "
                             "the mma_async read from the stages the TMA "
                             "loads on this barrier fill, at least {0}, but "
                             "got {1} (protocol_c8)",
                             *read, total)
                   .str();
      out.push_back(v);
      return;
    }
  }
  if (unknown || v.notes.empty()) {
    v.unproven = true;
    v.notes.clear();
    v.text = unknown ? "the expect_tx byte count must be checked against the "
                       "TMA loads completing on this barrier, but got a load "
                       "whose size the IR does not say (nvwgmma.tx_bytes) "
                       "(protocol_c8, strict)"
                     : "the expect_tx byte count must be checked against the "
                       "TMA loads completing on this barrier, but got none "
                       "in the same round (protocol_c8, strict)";
    out.push_back(v);
    return;
  }
  if (brought == total)
    return;
  v.text = llvm::formatv("the expect_tx byte count must equal the bytes the "
                         "TMA loads completing on this barrier bring, {0}, "
                         "but got {1} (protocol_c8)",
                         brought, total)
               .str();
  out.push_back(v);
}

/// Whether `block` lies on a cycle of its region's CFG, or in a loop op.
static bool inLoop(Operation *op) {
  if (op->getParentOfType<LoopLikeOpInterface>())
    return true;
  Block *start = op->getBlock();
  SmallVector<Block *> work(start->getSuccessors());
  llvm::SmallPtrSet<Block *, 16> seen;
  while (!work.empty()) {
    Block *b = work.pop_back_val();
    if (b == start)
      return true;
    if (seen.insert(b).second)
      llvm::append_range(work, b->getSuccessors());
  }
  return false;
}

void PipelineModel::checkFirstRoundParity(
    Operation *op, const SlotRef &slot,
    SmallVectorImpl<ProtocolViolation> &out) {
  // A wait on one fixed slot of a ring's barriers, outside any loop, with no
  // earlier wait on that slot before it on every path: the slot's first
  // round, phase 0 for a filled stage (1 passes before the stage lands).
  if (!isFull(slot.id) || isEmpty(slot.id) || inLoop(op))
    return;
  bool earlier = waitedEarlier(op, [&](const SlotRef &s) { return s == slot; });
  std::optional<int64_t> parity = addresses.firstParity(events.of(op).parity);
  if (earlier || !parity || *parity == 0)
    return;
  ProtocolViolation v{ProtocolViolation::PhaseMismatch, op, nullptr};
  v.text = llvm::formatv("a first wait for stage {0} must use parity 0, the "
                         "phase its first fill completes, but got 1, which "
                         "passes before the stage is filled (protocol_c9)",
                         describeStage(slot.stage))
               .str();
  out.push_back(v);
}

void PipelineModel::checkParity(Operation *op,
                                SmallVectorImpl<ProtocolViolation> &out) {
  const ProtocolEvent &wait = events.of(op);
  std::optional<SlotRef> barrier = barrierOf(op);
  if (barrier && isShared(*barrier) && isEmpty(barrier->id)) {
    checkSharedReleaseParity(op, barrier->id, out);
    return;
  }
  if (barrier && barrier->stage.isFixed() && barrier->stage.stages == 1) {
    checkOneShotParity(op, barrier->id, out);
    return;
  }
  if (barrier && barrier->stage.isConstant()) {
    checkFirstRoundParity(op, *barrier, out);
    return;
  }
  if (!barrier || barrier->stage.isFixed() || barrier->stage.stages <= 0)
    return;
  bool full = isFull(barrier->id), empty = isEmpty(barrier->id);
  std::optional<PhaseExpr> phase = addresses.phaseOf(wait.parity);
  if (!phase) {
    std::optional<StagedAddress> at =
        addresses.barrier(wait.barrier, wait.barrierIndex);
    phase = addresses.pairedPhase(wait.parity, barrier->stage,
                                  at ? at->index : Value());
  }
  ProtocolViolation v{ProtocolViolation::PhaseMismatch, op, nullptr};
  std::string want =
      describePhase(PhaseExpr{barrier->stage, /*flipped=*/empty && !full});
  // A loop that runs once per stage stays in round 0: its parity is a
  // constant, 0 for a filled stage (1 waits for a phase that never comes).
  std::optional<int64_t> trips =
      addresses.shortTripCount(barrier->stage.counter);
  std::optional<int64_t> literal = addresses.constant(wait.parity);
  if (!phase && literal && trips && *trips <= barrier->stage.stages &&
      barrier->stage.offset == 0 && (full || empty)) {
    int64_t expected = full ? 0 : 1;
    if ((*literal & 1) != expected) {
      v.text =
          llvm::formatv("the parity waited on must be {0}: the loop runs "
                        "{1} times over {2} stages, so every wait is in "
                        "round 0, but got {3} (protocol_c9)",
                        expected, *trips, barrier->stage.stages, *literal & 1)
              .str();
      out.push_back(v);
    }
    return;
  }
  if (!phase) {
    v.unproven = true;
    v.text = llvm::formatv("the parity waited on must be proven to follow the "
                           "round of stage {0}, {1}, but got a value the "
                           "checker cannot relate (protocol_c9, strict)",
                           describeStage(barrier->stage), want)
                 .str();
    out.push_back(v);
    return;
  }
  if (!(phase->round == barrier->stage)) {
    v.text = llvm::formatv("the parity waited on must follow the round of "
                           "stage {0}, {1}, but got {2} (protocol_c9)",
                           describeStage(barrier->stage), want,
                           describePhase(*phase))
                 .str();
    out.push_back(v);
    return;
  }
  if (full && phase->flipped)
    v.text = llvm::formatv("a wait for a filled stage must use the round's "
                           "parity {0}, but got its complement, which passes "
                           "in the first round before the stage is filled "
                           "(protocol_c9)",
                           want)
                 .str();
  else if (empty && !full && !phase->flipped)
    v.text = llvm::formatv("a wait for a released stage must use the "
                           "complement of the round's parity, {0}, but got "
                           "the round's parity, which in the first round "
                           "waits for a release that never comes "
                           "(protocol_c9)",
                           want)
                 .str();
  if (!v.text.empty())
    out.push_back(v);
}

void PipelineModel::checkOneShotParity(
    Operation *op, int barrier, SmallVectorImpl<ProtocolViolation> &out) {
  // A barrier a TMA load fills once, waited for once: the fill completes
  // phase 0, so the wait must be for parity 0 (1 passes at once, before the
  // bytes land). A wait in a loop (a persistent kernel's next tile, a
  // 1-stage ring) is checked in its first iteration only: where a fill
  // before the loop dominates it and no earlier wait on the barrier does.
  auto filledBefore = [&](Operation *load) {
    std::optional<SlotRef> slot = barrierOf(load);
    return slot && slot->id == barrier && !isFull(barrier) && !inLoop(load);
  };
  if (llvm::none_of(tmaLoads, filledBefore))
    return;
  if (inLoop(op)) {
    bool first = llvm::any_of(tmaLoads, [&](Operation *load) {
      return filledBefore(load) && addresses.properlyDominates(load, op);
    });
    if (!first ||
        waitedEarlier(op, [&](const SlotRef &s) { return s.id == barrier; }))
      return;
  }
  std::optional<int64_t> parity = addresses.firstParity(events.of(op).parity);
  if (!parity || *parity == 0)
    return;
  ProtocolViolation v{ProtocolViolation::PhaseMismatch, op, nullptr};
  v.text = inLoop(op)
               ? "a first wait for a tile a TMA load refills each round must "
                 "use parity 0, the phase its first fill completes, but got "
                 "1, which passes before the bytes land (protocol_c9)"
               : "a wait for shared memory a TMA load fills once must use "
                 "parity 0, the phase the load completes, but got 1, which "
                 "passes before the bytes land (protocol_c9)";
  out.push_back(v);
}

bool PipelineModel::runsBefore(Operation *a, Operation *b) {
  // a's ancestor in a region holding b: before b on every path, or in a
  // loop (an op, or a natural loop of the CFG) whose entry is.
  Operation *at = a;
  while (at && !at->getParentRegion()->isAncestor(b->getParentRegion()))
    at = at->getParentOp();
  if (!at)
    return false;
  if (addresses.properlyDominates(at, b))
    return true;
  Region *region = at->getParentRegion();
  if (region->hasOneBlock())
    return false;
  CFGLoopInfo &info = loopInfoOf(region);
  CFGLoop *loop = info.getLoopFor(at->getBlock());
  Operation *bAt = b;
  while (bAt && bAt->getParentRegion() != region)
    bAt = bAt->getParentOp();
  return loop && bAt && !loop->contains(bAt->getBlock()) &&
         addresses.properlyDominates(&loop->getHeader()->front(), bAt);
}

void PipelineModel::checkSharedReleaseParity(
    Operation *op, int barrier, SmallVectorImpl<ProtocolViolation> &out) {
  // One barrier releases every stage, one phase per round (Mosaic's
  // consumed barriers): where the producer filled stages before its first
  // wait on it, that wait is for the consumers' first release, phase 0
  // (1 passes at once, before any stage is released). Checked in the
  // first wait only: no other wait on the barrier runs before it.
  auto ringOfBarrier = [&](Operation *load) {
    std::optional<SlotRef> slot = ringAt(events.of(load).destination);
    return slot && llvm::is_contained(rings[slot->id].empty, barrier);
  };
  bool filledBefore = llvm::any_of(tmaLoads, [&](Operation *load) {
    return ringOfBarrier(load) && runsBefore(load, op);
  });
  bool waitedBefore = false;
  fn->walk([&](Operation *other) {
    if (waitedBefore || other == op ||
        events.kind(other) != EventKind::ParityWait)
      return;
    std::optional<SlotRef> slot = barrierOf(other);
    waitedBefore = slot && slot->id == barrier && runsBefore(other, op);
  });
  if (!filledBefore || waitedBefore)
    return;
  std::optional<int64_t> parity = addresses.firstParity(events.of(op).parity);
  if (!parity || *parity == 0)
    return;
  ProtocolViolation v{ProtocolViolation::PhaseMismatch, op, nullptr};
  v.text = "a first wait on a barrier the consumers release every stage on, "
           "one phase per round, must use parity 0, the phase their first "
           "release completes, but got 1, which passes before any stage is "
           "released (protocol_c9)";
  out.push_back(v);
}

bool PipelineModel::waitedEarlier(
    Operation *op, llvm::function_ref<bool(const SlotRef &)> onSlot) {
  bool earlier = false;
  fn->walk([&](Operation *other) {
    if (earlier || other == op || events.kind(other) != EventKind::ParityWait)
      return;
    std::optional<SlotRef> s = barrierOf(other);
    earlier = s && onSlot(*s) && addresses.properlyDominates(other, op);
  });
  return earlier;
}
