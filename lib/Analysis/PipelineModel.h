//===- PipelineModel.h - rings, barriers and who guards what ---*- C++ -*-===//
//
// The flow-insensitive half of the pipeline checker. From the TMA loads of a
// function it learns the shared-memory rings (stride, stage count, base),
// the mbarrier each ring's loads complete on (its full barrier) and the one
// its producer waits on before refilling a stage (its empty barrier). The
// dataflow in ProtocolAnalysis.cpp asks it which ring slot a wgmma reads and
// which slot a wait or a release names. The rules that need no dataflow
// (expect_tx byte counts, wait parities) are checked here. Private to
// lib/Analysis.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_LIB_ANALYSIS_PIPELINEMODEL_H
#define NVWGMMA_LIB_ANALYSIS_PIPELINEMODEL_H

#include "AddressModel.h"
#include "ProtocolEvents.h"
#include "TensorMaps.h"
#include "nvwgmma/Analysis/ProtocolAnalysis.h"

#include "mlir/Analysis/CFGLoopInfo.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <map>
#include <string>

namespace mlir {
namespace nvwgmma {

/// A slot of a ring or of a barrier array: which one, and which stage.
struct SlotRef {
  int id = -1;
  StageExpr stage;
  bool operator==(const SlotRef &o) const {
    return id == o.id && stage == o.stage;
  }
};

struct Ring {
  int64_t stride = 0;
  int64_t stages = 1;
  Linear base; // the lowest TMA destination of stage 0
  llvm::SmallVector<int> full, empty;
  Operation *firstWrite = nullptr;
};

/// A TMA load into shared memory outside any ring (FlashAttention's Q,
/// loaded once): the bytes [dest, dest + bytes) complete on `barrier`.
struct OneShotFill {
  Linear dest;
  int64_t bytes = 0;
  int barrier = -1;
  Operation *load = nullptr;
  /// Arrives (and their barriers) seen after an mma_async read it: where
  /// its readers release it for a refill (a persistent kernel's next Q).
  llvm::SmallVector<std::pair<Operation *, int>, 2> releases;
};

class PipelineModel {
public:
  explicit PipelineModel(FunctionOpInterface fn);

  /// The ring slots a wgmma reads through its descriptors.
  llvm::SmallVector<SlotRef, 2> readsOf(Operation *mma);
  /// The one-shot fills a wgmma's descriptors (outside every ring) may
  /// read: same base, start inside the filled bytes.
  llvm::SmallVector<const OneShotFill *, 1> oneShotReadsOf(Operation *mma);
  void oneShotReadsOf(Value descriptor,
                      llvm::SmallVectorImpl<const OneShotFill *> &found);
  /// The one-shot fill a shared-memory byte address falls in, if any.
  const OneShotFill *oneShotAt(Value address);
  /// Whether a generic shared-memory store may write bytes `mma` reads
  /// (its rings and one-shot fills; anything, where a descriptor is
  /// related to neither or the store's address is not a constant offset
  /// from the same base).
  bool mayFeed(Operation *store, Operation *mma);
  /// The ring slot a shared-memory address falls in, if any.
  std::optional<SlotRef> ringAt(Value address, bool descriptor = false);
  /// The barrier slot an mbarrier address (or nvgpu group and index) names.
  std::optional<SlotRef> barrierAt(Value address, Value index = Value());
  /// The barrier slot a barrier event names.
  std::optional<SlotRef> barrierOf(Operation *op) {
    const ProtocolEvent &e = events.of(op);
    return barrierAt(e.barrier, e.barrierIndex);
  }
  const Ring &ring(int id) const { return rings[id]; }
  bool hasTmaLoads() const { return !tmaLoads.empty(); }
  int numRings() const { return static_cast<int>(rings.size()); }
  bool isFull(int barrier) const;
  bool isEmpty(int barrier) const;
  /// Whether some mbarrier.arrive names this barrier.
  bool isArrivedOn(int barrier);
  /// A single barrier (not an array): as a ring's empty barrier, one for
  /// every stage, completing one phase per round.
  static bool isShared(const SlotRef &barrier) {
    return barrier.stage.isFixed() && barrier.stage.stages == 1;
  }
  /// Whether threads that arrive on `barrier` then wait on it themselves
  /// (an arrive dominates a wait on it): a rendezvous of warpgroups
  /// (Mosaic's schedule barrier), no ring's release.
  bool isRendezvous(int barrier);
  /// Whether the round (innermost loop) holding `op` waits on a
  /// rendezvous barrier: what some warpgroups waited for there reaches the
  /// others through it (Mosaic's ping-pong schedule, where one warpgroup
  /// waits for a stage the other reads after their next rendezvous).
  bool rendezvousInRound(Operation *op);
  /// Whether a TMA load at `stage` fills the ring's first round only (a
  /// warmup loop of at most one trip per stage, in no other loop).
  bool fillsFirstRound(Operation *load, const StageExpr &stage);
  /// The stage of ring `ring` an arrive on a shared empty barrier
  /// releases: the one its threads read last before it.
  std::optional<StageExpr> sharedReleaseStage(Operation *arrive, int ring);

  /// protocol_c8 and protocol_c9, and what they could not decide (marked
  /// `unproven`).
  void check(llvm::SmallVectorImpl<ProtocolViolation> &out);

  AddressModel addresses;
  ProtocolEvents events;
  TensorMaps tensorMaps;

  /// The bytes a TMA load brings to its barrier, when the IR says.
  std::optional<int64_t> tmaBytes(Operation *load);
  /// The byte count an event states (an expect_tx's count, a load's bytes
  /// before multicast), literal or constant, when the IR says.
  std::optional<int64_t> statedBytes(Operation *op);

private:
  FunctionOpInterface fn;
  llvm::SmallVector<Ring, 4> rings;
  std::map<std::pair<std::string, std::array<int64_t, 3>>, int> barrierIds;
  /// The staged barrier arrays among them: slot i at base + i * stride.
  struct BarrierArray {
    std::string terms;
    int64_t base, stride, stages;
    int id;
  };
  llvm::SmallVector<BarrierArray, 4> barrierArrays;
  std::optional<llvm::DenseSet<int>> arrivedOn;
  llvm::DenseMap<int, bool> rendezvous;               // isRendezvous's
  llvm::DenseMap<const void *, bool> roundRendezvous; // rendezvousInRound's
  std::optional<llvm::SmallVector<Operation *>> mmaOps;
  llvm::SmallVector<Operation *> tmaLoads;
  llvm::SmallVector<OneShotFill, 2> oneShotFills;

  /// For each barrier the consumers arrive on: the rings whose slots they
  /// read just before (see learnReleases).
  std::map<int, llvm::SmallVector<int, 2>> releasedAfter;
  /// For each arrive on a single barrier: ring -> the stage read before it.
  llvm::DenseMap<Operation *, std::map<int, StageExpr>> sharedReleaseStages;

  /// The bytes the mma_async ops read from one stage of the rings whose
  /// full barrier is `barrier`: a lower bound of what its TMA loads must
  /// bring, where their boxes are not in the IR. Distinct descriptor
  /// starts read distinct elements (k-slices, warpgroups' rows); each
  /// reads its operand's rows x 32 bytes (a dense k-slice).
  std::optional<int64_t> bytesReadThrough(int barrier);
  std::map<int, std::optional<int64_t>> bytesRead; // bytesReadThrough's
  /// Whether `expect` is the only expect_tx on `barrier` of its innermost
  /// loop (outside its block): one round's count, not one of several.
  /// Whether a wait on a slot `onSlot` accepts runs before `op` on every
  /// path to it.
  bool waitedEarlier(Operation *op,
                     llvm::function_ref<bool(const SlotRef &)> onSlot);
  /// The TMA loads completing on `barrier` in the round `expect` opens.
  llvm::SmallVector<Operation *> loadsOfRound(Operation *expect,
                                              const SlotRef &barrier);
  bool soleExpectOfItsLoop(Operation *expect, int barrier);
  /// The innermost loop holding `op`: a natural loop of its region's CFG
  /// or a loop op; null outside loops.
  const void *innermostLoop(Operation *op);
  llvm::DenseMap<Region *, std::unique_ptr<CFGLoopInfo>> loopInfos;
  /// The natural loops of a multi-block region, built once.
  CFGLoopInfo &loopInfoOf(Region *region);

  /// One id per barrier array shape: its base, slot stride and slots.
  int barrierId(const Linear &base, int64_t stride, int64_t stages);
  /// Every event of `kind` before `op` (nested ops included), in its block
  /// and each enclosing one, innermost first.
  void forEachEarlierEvent(Operation *op, EventKind kind,
                           llvm::function_ref<void(Operation *)> visit);
  /// Every mma_async that runs before `op` in its round: earlier in its
  /// block or an enclosing one, or in a block dominating its own.
  void forEachEarlierMma(Operation *op,
                         llvm::function_ref<void(Operation *)> visit);
  void learnRings();
  /// Rings filled only before their loop, one fixed mbarrier per stage.
  void learnPrologueRings();
  llvm::SmallPtrSet<Operation *, 8> prologueFills;
  void learnOneShotFills();
  void learnReleases();
  void learnEmptyBarriers();
  /// protocol_c6, producer side: refills wait for the consumers' release.
  void checkRefillsWait(llvm::SmallVectorImpl<ProtocolViolation> &out);
  void checkOneShotRefills(llvm::SmallVectorImpl<ProtocolViolation> &out);
  void checkExpectTx(Operation *expect,
                     llvm::SmallVectorImpl<ProtocolViolation> &out);
  void checkFirstRoundParity(Operation *wait, const SlotRef &slot,
                             llvm::SmallVectorImpl<ProtocolViolation> &out);
  void checkOneShotParity(Operation *wait, int barrier,
                          llvm::SmallVectorImpl<ProtocolViolation> &out);
  /// Whether `a` (or a loop holding it, entered before `b`) runs before
  /// `b` on every path.
  bool runsBefore(Operation *a, Operation *b);
  void checkSharedReleaseParity(Operation *wait, int barrier,
                                llvm::SmallVectorImpl<ProtocolViolation> &out);
  void checkParity(Operation *wait,
                   llvm::SmallVectorImpl<ProtocolViolation> &out);
};

/// "k mod 3", "(k - 1) mod 3": how diagnostics name a stage.
std::string describeStage(const StageExpr &stage);
std::string describePhase(const PhaseExpr &phase);

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_LIB_ANALYSIS_PIPELINEMODEL_H
