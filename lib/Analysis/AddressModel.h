//===- AddressModel.h - symbolic shared-memory addresses -------*- C++ -*-===//
//
// What the pipeline rules need to know about a value: its linear form over
// opaque SSA atoms (so a TMA destination, a wgmma descriptor and an mbarrier
// address can be compared), and, for atoms that are ring-stage indices,
// which loop counter they follow ((counter + offset) mod stages). Private to
// lib/Analysis.
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_LIB_ANALYSIS_ADDRESSMODEL_H
#define NVWGMMA_LIB_ANALYSIS_ADDRESSMODEL_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"
#include <optional>

namespace mlir {
namespace nvwgmma {

/// The operands of an integer comparison (arith.cmpi or llvm.icmp) whose
/// predicate is one of `predicates`.
std::optional<std::pair<Value, Value>>
comparedBy(Value cond, std::initializer_list<arith::CmpIPredicate> predicates);
/// The condition of a conditional branch (llvm.cond_br, cf.cond_br), or null.
Value branchCondition(Operation *terminator);

/// The deepest ring the checker relates stages of: a symbolic index mod
/// more (a thread index mod 128 or 32) names no stage, nor does the counter
/// of a longer loop or a wider array of fixed barriers.
constexpr int64_t kMaxRingStages = 16;

/// (counter + offset) mod stages, where `counter` is a loop counter (an
/// scf.for body argument or a CFG loop header argument) that advances by
/// `step` per iteration, or any other value (a symbolic index: the same
/// value names the same slot). A null counter with stages == 1 is a fixed
/// slot (no staging); with stages > 1, the constant slot `offset`.
struct StageExpr {
  Value counter;
  int64_t offset = 0;
  int64_t stages = 1;

  /// No counter: a fixed slot or a constant one.
  bool isFixed() const { return !counter; }
  bool isConstant() const { return !counter && stages > 1; }
  /// Whether both name the same slot in every iteration.
  bool sameSlot(const StageExpr &o) const;
  /// Whether the two slots are related at all (same counter and ring size).
  bool comparable(const StageExpr &o) const {
    return counter == o.counter && stages == o.stages;
  }
  bool operator==(const StageExpr &o) const {
    return counter == o.counter && offset == o.offset && stages == o.stages;
  }
};

/// ((counter + offset) / stages) & 1, complemented when `flipped`.
struct PhaseExpr {
  StageExpr round;
  bool flipped = false;
};

/// value = (sum(coeff * atom) + constant) / 2^shift. Exact for the
/// add/sub/mul/shift/GEP/cast chains that build addresses and descriptors.
struct Linear {
  llvm::SmallMapVector<Value, int64_t, 4> terms;
  int64_t constant = 0;
  unsigned shift = 0;
};

/// A shared-memory access resolved against ring stages: byte address =
/// rest + stride * stage.
struct StagedAddress {
  Linear rest;
  int64_t stride = 0;
  StageExpr stage;
  /// The value the stage was read from (before naming it canonically).
  Value index;
};

/// A loop-carried value: the loop's header block (an scf.for body or a CFG
/// loop header), its value on entry and the one the back edge carries.
struct IterArg {
  Block *header;
  Value init, next;
};

/// A CFG loop header's test `index < bound` of one of its arguments.
struct LoopTest {
  BlockArgument index;
  IterArg counter;
  Value bound;
};

/// A shared-memory address known as base + an offset in [lo, hi] (a
/// swizzled scratch address built from thread bits).
struct BoundedAddress {
  Linear base;
  int64_t lo = 0, hi = 0;
};

class AddressModel {
public:
  /// `address` as a linear base plus a bounded offset: GEPs whose indices
  /// are not linear contribute the range of their bit operations.
  std::optional<BoundedAddress> bounded(Value address, int depth = 0);
  /// The values an integer can take, from constants, masks, shifts, thread
  /// indices and selects; nullopt where unknown.
  std::optional<std::pair<int64_t, int64_t>> range(Value v, int depth = 0);
  /// For an scf.for iteration argument or a CFG loop header's argument.
  std::optional<IterArg> iterArg(Value v);
  /// Whether the CFG edge from -> header closes a loop (header dominates
  /// from). One dominance tree per function, built on first use.
  bool isBackEdge(Block *from, Block *header);
  /// Whether `a` runs before `b` on every path to `b` (in b's region or one
  /// enclosing it).
  bool properlyDominates(Operation *a, Operation *b);
  /// The nearest block dominating both (in one region), or null.
  Block *nearestCommonDominator(Block *a, Block *b);
  /// The function's dominance trees, built on first use.
  DominanceInfo &dominanceInfo();
  /// The linear form of `v`, or nullopt when it is not linear.
  std::optional<Linear> linear(Value v);
  /// For a stage atom, its expression; nullopt for any other value.
  std::optional<StageExpr> stageOf(Value atom);
  /// The value a parity operand has the first time it is computed: a
  /// constant, its complement, or a bit of a phase mask at its initial
  /// value.
  std::optional<int64_t> firstParity(Value v);
  /// For a parity carried by a loop beside the stage index of `stage`: the
  /// round it follows, when the (index, phase) pair keeps the pipeline
  /// state's invariant through every loop that carries it (CuTe hands its
  /// state from a tile loop to a prologue loop to its main loop).
  std::optional<PhaseExpr> pairedPhase(Value parity, const StageExpr &stage,
                                       Value index = Value());
  /// The round parity a try_wait.parity operand follows, if recognised.
  std::optional<PhaseExpr> phaseOf(Value v);
  /// A byte address (pointer or integer) split into rest + stride * stage;
  /// `descriptor` reads a wgmma matrix descriptor's start-address field.
  std::optional<StagedAddress> staged(Value v, bool descriptor = false);
  std::optional<StagedAddress> staged(std::optional<Linear> l,
                                      bool descriptor = false);
  /// The bytes of a statically shaped memref whose first element `address`
  /// is (a pointer built from its descriptor's aligned pointer and offset,
  /// as Mosaic GPU addresses a TMA destination); nullopt otherwise.
  std::optional<int64_t> memrefBytesAt(Value address);
  /// An mbarrier's address: a pointer, or an nvgpu group and an index.
  std::optional<StagedAddress> barrier(Value base, Value index = Value());
  /// For an index advanced mod S, select(x + 1 == S, 0, x + 1) (or >= S):
  /// (x, S).
  std::optional<std::pair<Value, int64_t>> advanceOf(Value v);
  /// For a phase flipped where `cond` holds, p ^ 1 or p as a select or as
  /// a branch: (cond, p).
  std::optional<std::pair<Value, Value>> flipOf(Value v);
  /// S, for a loop-carried index advanced as (x + 1) mod S.
  std::optional<int64_t> wrapsAt(Value v) { return modularCounter(v); }
  /// The step of a loop counter (an scf.for body argument), or nullopt.
  std::optional<int64_t> counterStep(Value counter);
  /// N, for a counter that takes the values 0, 1, ..., N - 1 (from 0 by 1
  /// below a constant bound: an scf.for, or a CFG loop whose header tests
  /// counter < N), with N at most kMaxRingStages; nullopt otherwise.
  std::optional<int64_t> shortTripCount(Value counter);
  /// v = counter + offset (through casts and constant adds).
  std::optional<std::pair<Value, int64_t>> counterPlus(Value v);
  /// Constant integer value, through casts, and for a kernel parameter the
  /// constant every gpu.launch_func of the kernel passes.
  std::optional<int64_t> constant(Value v);

private:
  llvm::DenseMap<Value, std::optional<Linear>> cache;
  llvm::DenseMap<Value, std::optional<int64_t>> launchConstants;
  std::optional<int64_t> launchedConstant(BlockArgument arg);
  std::optional<int64_t> foldConstant(Operation *def);
  /// Element 0 of a vector of i32 (a descriptor's low word).
  std::optional<Linear> lowWord(Value vector);
  std::optional<int64_t> modularCounter(Value v);
  /// S, for a loop-carried index advanced mod S on some iterations only.
  std::optional<int64_t> conditionalCounter(Value v);
  /// S, for a value that is always a pipeline index of S stages: a start
  /// in range, advanced as (x + 1) mod S, handed between loops (0 while
  /// no wrap has said S).
  std::optional<int64_t> stateModulus(Value v, llvm::DenseSet<Value> &assumed,
                                      int depth);
  std::optional<PhaseExpr> carriedPhase(Value v);
  /// a - b (mod S) for two pipeline indices of S stages, as a linear form
  /// over loop trip counts: through steps mod S, blocks both are arguments
  /// of (loop headers assume it of themselves: inductive), and an index
  /// leaving a loop that steps it once a trip (its entry value plus the
  /// trip count).
  std::optional<Linear>
  lagOf(Value a, Value b, int64_t S,
        llvm::DenseMap<std::pair<Value, Value>, Linear> &assumed, int depth);
  /// The header's test of one of its arguments against a bound (a
  /// `predicates` compare), for tripCount and lagInLoop.
  std::optional<LoopTest>
  loopTest(Block *header,
           std::initializer_list<arith::CmpIPredicate> predicates);
  /// ub - lb of a CFG loop whose header tests i < ub for i from lb by 1.
  std::optional<Linear> tripCount(Block *header);
  /// `lag` with every trip count that is `header`'s loop's own lower bound
  /// min(ub, c) read as c: the loop runs only where c < ub (CUTLASS-style
  /// prologues of min(k_tiles, c) steps before the main loop).
  std::optional<int64_t> lagInLoop(Linear lag, Block *header);
  /// The polarity of a pipeline-state pair (index, phase) of S stages:
  /// whether the phase is the complement of the index's round parity.
  std::optional<bool>
  pairPolarity(Value index, Value phase, int64_t S,
               llvm::DenseMap<std::pair<Value, Value>, bool> &assumed,
               int depth);
  std::optional<PhaseExpr> maskPhase(Operation *def);
  /// For `x remui S` / `x divui S` with x = counter + c: (counter, c, S).
  std::optional<StageExpr> counterBy(Operation *op);
  std::optional<Linear> compute(Value v);
  /// c, when x is select(c, p ^ 1, p): p flipped when c holds.
  Value selectFlip(Value x, Value p);
  /// For a wrap condition, cmp eq|sge|uge (x + 1), S: (x, S).
  std::optional<std::pair<Value, int64_t>> wrapOf(Value cond);
  /// A stage of a modular counter named by its loop's first one.
  StageExpr canonical(StageExpr stage);
  /// stageOf before modular counters are named by their loop's first one.
  std::optional<StageExpr> rawStageOf(Value atom);
  /// stageOf through casts.
  std::optional<StageExpr> stageOfValue(Value v);
  /// Whether a loop counter starts at 0.
  bool startsAtZero(Value counter);
  /// A value that is never negative: a constant, or a loop counter (plus a
  /// non-negative constant) counting up from a non-negative start.
  bool nonNegative(Value v);
  bool nonNegative(Value v, llvm::DenseSet<Value> &assumed, int depth);
  /// Whether `v` (a counter minus a constant) is non-negative where `at`
  /// runs because a branch on the counter guards it (Gluon's release of
  /// stage (k - 1) mod S under `if k > 0`).
  bool guardedNonNegative(Value v, Operation *at);
  /// Whether branch condition `cond` being `taken` proves `x >= least`.
  bool provesAtLeast(Value cond, bool taken, Value x, int64_t least);
  /// x mod S and x / S, unsigned or signed of a non-negative x.
  bool isRemainder(Operation *op);
  bool isQuotient(Operation *op);
  /// Constant 1 (or i1 true).
  bool isOne(Value v);
  /// The aligned pointer of the memref `def` defines.
  std::optional<Linear> memrefAddress(Operation *def);
  /// The byte address of a memref's first element.
  std::optional<Linear> memrefStart(Value memref);
  /// The element offset of a memref.
  std::optional<Linear> memrefOffset(Value memref);
  /// A field of an LLVM struct: through insertvalue chains and memref
  /// descriptor bridges.
  std::optional<Linear> extractedField(LLVM::ExtractValueOp op);
  /// One atom per global (and one for dynamic shared memory).
  llvm::StringMap<Value> globals;
  /// Which predecessors of a CFG loop header are back edges.
  std::unique_ptr<DominanceInfo> dominance;
};

} // namespace nvwgmma
} // namespace mlir

#endif // NVWGMMA_LIB_ANALYSIS_ADDRESSMODEL_H
