//===- ProtocolEvents.h - what an op means to the wgmma protocol -*- C++
//-*-===//
//
// The front-end layer of the protocol checker: every form an operation can
// take — nvwgmma ops, upstream nvvm ops, llvm.inline_asm by its PTX
// mnemonic and operand constraints (upstream's convert-nvvm-to-llvm output,
// Triton's) — becomes one protocol event. The rules (PipelineModel,
// ProtocolAnalysis) read events, never op classes. Private to lib/Analysis.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_LIB_ANALYSIS_PROTOCOLEVENTS_H
#define NVWGMMA_LIB_ANALYSIS_PROTOCOLEVENTS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include <array>
#include <optional>

namespace mlir {
namespace nvwgmma {

enum class EventKind {
  None,
  Fence,         // wgmma.fence
  Mma,           // wgmma.mma_async[.sp]
  Commit,        // wgmma.commit_group
  WaitGroup,     // wgmma.wait_group N
  TmaLoad,       // cp.async.bulk[.tensor] global -> shared, complete_tx
  ExpectTx,      // mbarrier[.arrive].expect_tx
  ParityWait,    // mbarrier.try_wait.parity / test_wait.parity
  Arrive,        // mbarrier.arrive (a release)
  ProxyFence,    // fence.proxy.async
  ThreadBarrier, // bar.sync / barrier.sync
  Unrecognised,  // an inline asm this layer does not understand
};

struct ProtocolEvent {
  EventKind kind = EventKind::None;
  /// Mma: the registers it reads (accumulator, A fragment) and the
  /// shared-memory descriptors (A unless from registers, B); its shape.
  llvm::SmallVector<Value, 4> registers;
  llvm::SmallVector<Value, 2> descriptors;
  std::array<int64_t, 3> shape{0, 0, 0};
  /// WaitGroup: N.
  int64_t depth = 0;
  /// Operands a wait_group asm hands back unchanged, by output: element i
  /// is the operand tied to result member i, or null (Triton's wait returns
  /// the accumulator registers it waited for, and others it keeps alive).
  llvm::SmallVector<Value, 4> passedThrough;
  /// Mma: what the op does around the instructions (nvgpu.warpgroup.mma is
  /// a whole fence, mma_async..., commit_group[, wait_group N] sequence).
  bool fences = false, commits = false;
  std::optional<int64_t> waits;
  /// TmaLoad, ExpectTx, ParityWait, Arrive: the mbarrier's address, or an
  /// nvgpu barrier group and the index into it.
  Value barrier, barrierIndex;
  /// TmaLoad: where it writes, and a tensor load's tensor map.
  Value destination, tensorMap;
  /// TmaLoad: bytes it brings, when the IR says (nvwgmma.tx_bytes, a bulk
  /// copy's size, times the multicast fan-in); ExpectTx: a literal count.
  std::optional<int64_t> bytes;
  /// TmaLoad: a bulk copy's size or the multicast mask; ExpectTx: the count.
  Value bytesValue, multicastMask;
  /// ParityWait: the parity operand.
  Value parity;
  /// ParityWait: a probe (nvvm.mbarrier.try_wait / test.wait, or an asm
  /// returning the predicate) waits only where its i1 result is true; a
  /// wait without a result blocks until the phase completes.
  Value probe;
  /// Unrecognised: why (the asm's first instruction).
  std::string text;
};

/// Recognises ops once each (inline asm is parsed).
class ProtocolEvents {
public:
  const ProtocolEvent &of(Operation *op);
  EventKind kind(Operation *op) { return of(op).kind; }

private:
  llvm::DenseMap<Operation *, ProtocolEvent> cache;
};

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_LIB_ANALYSIS_PROTOCOLEVENTS_H
