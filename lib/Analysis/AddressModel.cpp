//===- AddressModel.cpp - symbolic shared-memory addresses ----------------===//
//
// Linear forms are built by walking definitions backwards; anything that is
// not add/sub/mul-by-constant/shift/GEP/cast becomes an opaque atom. Two
// liberties, both about how addresses and descriptors are built in practice:
// `and` with a low-bit mask is an identity (shared addresses fit 18 bits), and
// `or` with a constant only contributes its low 14 bits (the descriptor's
// start-address field; the rest are layout fields).
//
//===----------------------------------------------------------------------===//

#include "AddressModel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::nvwgmma;

namespace {

constexpr int64_t kStartAddressMask = (1 << 14) - 1;

/// Value-preserving casts, including the index <-> i64 and memref <-> LLVM
/// struct bridges a partial conversion leaves (unrealized_conversion_cast).
bool isCast(Operation *op) {
  if (auto bridge = dyn_cast<UnrealizedConversionCastOp>(op))
    return bridge->getNumOperands() == 1 && bridge->getNumResults() == 1;
  return isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtUIOp,
             arith::ExtSIOp, arith::TruncIOp, LLVM::ZExtOp, LLVM::SExtOp,
             LLVM::TruncOp, LLVM::PtrToIntOp, LLVM::IntToPtrOp,
             LLVM::AddrSpaceCastOp>(op);
}

/// Whether a memref type is a zero-sized workgroup buffer.
bool isEmptyWorkgroupMemRef(MemRefType type) {
  if (!type.hasStaticShape() || type.getNumElements() != 0)
    return false;
  Attribute space = type.getMemorySpace();
  if (auto gpuSpace = dyn_cast_or_null<gpu::AddressSpaceAttr>(space))
    return gpuSpace.getValue() == gpu::AddressSpace::Workgroup;
  auto intSpace = dyn_cast_or_null<IntegerAttr>(space);
  return intSpace && intSpace.getInt() == 3;
}

/// Whether a global is a zero-sized shared-memory array: in PTX an
/// `.extern .shared` array, which starts where dynamic shared memory does.
/// Upstream's kernels name dynamic shared memory this way as well as with
/// gpu.dynamic_shared_memory (which lowers to such a global), often both in
/// one kernel.
bool isDynamicSharedGlobal(Operation *op) {
  if (auto global = dyn_cast<memref::GetGlobalOp>(op))
    return isEmptyWorkgroupMemRef(global.getType());
  auto addr = dyn_cast<LLVM::AddressOfOp>(op);
  if (!addr)
    return false;
  auto global = SymbolTable::lookupNearestSymbolFrom<LLVM::GlobalOp>(
      addr, addr.getGlobalNameAttr());
  if (!global || global.getAddrSpace() != 3)
    return false;
  auto array = dyn_cast<LLVM::LLVMArrayType>(global.getType());
  return array && array.getNumElements() == 0;
}

/// The global a symbol-addressed pointer names (llvm.mlir.addressof,
/// memref.get_global), or "" for dynamic shared memory; nullopt otherwise.
/// Every use of one global is one atom, however many ops name it.
std::optional<std::string> globalName(Operation *op) {
  if (isa<gpu::DynamicSharedMemoryOp>(op) || isDynamicSharedGlobal(op))
    return std::string();
  if (auto addr = dyn_cast<LLVM::AddressOfOp>(op))
    return addr.getGlobalName().str();
  if (auto global = dyn_cast<memref::GetGlobalOp>(op))
    return global.getName().str();
  return std::nullopt;
}

/// A memref descriptor's fields as the LLVM lowering lays them out.
constexpr int64_t kAlignedPtrField = 1, kOffsetField = 2;

bool checkedMul(int64_t a, int64_t b, int64_t &out) {
  return !llvm::MulOverflow(a, b, out);
}

/// Scales every coefficient and the constant by `factor`.
bool scale(Linear &l, int64_t factor) {
  for (auto &term : l.terms)
    if (!checkedMul(term.second, factor, term.second))
      return false;
  return checkedMul(l.constant, factor, l.constant);
}

/// Brings `l` to `shift` (>= l.shift) without changing its value.
bool raiseShift(Linear &l, unsigned shift) {
  if (shift - l.shift >= 62)
    return false;
  if (!scale(l, int64_t(1) << (shift - l.shift)))
    return false;
  l.shift = shift;
  return true;
}

std::optional<Linear> addLinear(Linear a, Linear b, int64_t sign) {
  unsigned shift = std::max(a.shift, b.shift);
  if (!raiseShift(a, shift) || !raiseShift(b, shift))
    return std::nullopt;
  for (auto &[atom, coeff] : b.terms) {
    int64_t sum;
    if (llvm::AddOverflow(a.terms.lookup(atom), sign * coeff, sum))
      return std::nullopt;
    a.terms[atom] = sum;
  }
  if (llvm::AddOverflow(a.constant, sign * b.constant, a.constant))
    return std::nullopt;
  a.terms.remove_if([](const auto &t) { return t.second == 0; });
  return a;
}

Linear atomOf(Value v) {
  Linear l;
  l.terms[v] = 1;
  return l;
}

Linear constantOf(int64_t c) {
  Linear l;
  l.constant = c;
  return l;
}

std::optional<int64_t> elementBytes(Type t) {
  if (t.isIntOrFloat() && t.getIntOrFloatBitWidth() % 8 == 0)
    return t.getIntOrFloatBitWidth() / 8;
  if (auto array = dyn_cast<LLVM::LLVMArrayType>(t)) {
    std::optional<int64_t> element = elementBytes(array.getElementType());
    int64_t total;
    if (element && checkedMul(*element, array.getNumElements(), total))
      return total;
  }
  return std::nullopt;
}

// llvm.icmp's predicates number as arith.cmpi's (ArithToLLVM casts one to
// the other), so one list serves both.
static_assert(static_cast<int>(LLVM::ICmpPredicate::slt) ==
                  static_cast<int>(arith::CmpIPredicate::slt) &&
              static_cast<int>(LLVM::ICmpPredicate::uge) ==
                  static_cast<int>(arith::CmpIPredicate::uge));

} // namespace

std::optional<std::pair<Value, Value>> mlir::nvwgmma::comparedBy(
    Value cond, std::initializer_list<arith::CmpIPredicate> predicates) {
  Operation *cmp = cond ? cond.getDefiningOp() : nullptr;
  std::optional<arith::CmpIPredicate> predicate;
  if (auto a = dyn_cast_or_null<arith::CmpIOp>(cmp))
    predicate = a.getPredicate();
  else if (auto l = dyn_cast_or_null<LLVM::ICmpOp>(cmp))
    predicate = static_cast<arith::CmpIPredicate>(l.getPredicate());
  if (!predicate || !llvm::is_contained(predicates, *predicate))
    return std::nullopt;
  return std::make_pair(cmp->getOperand(0), cmp->getOperand(1));
}

static std::optional<std::tuple<Value, Value, Value>> branchChoice(Value x);
static Value forwardedFrom(Block *pred, BlockArgument arg);

Value mlir::nvwgmma::branchCondition(Operation *terminator) {
  if (auto br = dyn_cast_or_null<LLVM::CondBrOp>(terminator))
    return br.getCondition();
  if (auto br = dyn_cast_or_null<cf::CondBranchOp>(terminator))
    return br.getCondition();
  return Value();
}

bool StageExpr::sameSlot(const StageExpr &o) const {
  if (!comparable(o) || stages <= 0)
    return false;
  return ((offset - o.offset) % stages + stages) % stages == 0;
}

std::optional<int64_t> AddressModel::constant(Value v) {
  if (!v)
    return std::nullopt;
  while (Operation *def = v.getDefiningOp()) {
    if (isCast(def) && !isa<LLVM::PtrToIntOp, LLVM::AddrSpaceCastOp>(def)) {
      v = def->getOperand(0);
      continue;
    }
    Attribute attr;
    if (auto c = dyn_cast<arith::ConstantOp>(def))
      attr = c.getValue();
    else if (auto c = dyn_cast<LLVM::ConstantOp>(def))
      attr = c.getValue();
    // An i1 is a bit: true is 1 (a phase that starts at 1), not -1.
    if (auto i = dyn_cast_or_null<IntegerAttr>(attr))
      return i.getValue().getBitWidth() == 1 ? i.getValue().getZExtValue()
                                             : i.getValue().getSExtValue();
    return foldConstant(def);
  }
  if (auto arg = dyn_cast<BlockArgument>(v))
    return launchedConstant(arg);
  return std::nullopt;
}

/// Integer arithmetic on constants (a descriptor's layout fields, built
/// from constants at run time by CuTe: `(1 & 3) << 62`), folded.
std::optional<int64_t> AddressModel::foldConstant(Operation *def) {
  if (def->getNumOperands() != 2 || def->getNumResults() != 1 ||
      !def->getResult(0).getType().isIntOrIndex())
    return std::nullopt;
  if (!isa<arith::AndIOp, LLVM::AndOp, arith::OrIOp, LLVM::OrOp, arith::XOrIOp,
           LLVM::XOrOp, arith::ShLIOp, LLVM::ShlOp, arith::ShRUIOp,
           LLVM::LShrOp, arith::AddIOp, LLVM::AddOp, arith::SubIOp, LLVM::SubOp,
           arith::MulIOp, LLVM::MulOp>(def))
    return std::nullopt;
  std::optional<int64_t> a = constant(def->getOperand(0));
  std::optional<int64_t> b = a ? constant(def->getOperand(1)) : std::nullopt;
  if (!a || !b)
    return std::nullopt;
  uint64_t x = static_cast<uint64_t>(*a), y = static_cast<uint64_t>(*b);
  if (isa<arith::AndIOp, LLVM::AndOp>(def))
    return static_cast<int64_t>(x & y);
  if (isa<arith::OrIOp, LLVM::OrOp>(def))
    return static_cast<int64_t>(x | y);
  if (isa<arith::XOrIOp, LLVM::XOrOp>(def))
    return static_cast<int64_t>(x ^ y);
  if (isa<arith::AddIOp, LLVM::AddOp>(def))
    return static_cast<int64_t>(x + y);
  if (isa<arith::SubIOp, LLVM::SubOp>(def))
    return static_cast<int64_t>(x - y);
  if (isa<arith::MulIOp, LLVM::MulOp>(def))
    return static_cast<int64_t>(x * y);
  if (y >= 64)
    return std::nullopt;
  if (isa<arith::ShLIOp, LLVM::ShlOp>(def))
    return static_cast<int64_t>(x << y);
  // A logical shift of a narrower type's negative constant is not x >> y.
  if (*a < 0)
    return std::nullopt;
  return static_cast<int64_t>(x >> y);
}

/// The gpu.launch_func operand a kernel parameter receives: the same
/// position for a gpu.func; for a kernel lowered to llvm.func, memref
/// operands expanded to their descriptor fields (allocated and aligned
/// pointers, offset, sizes, strides).
static std::optional<Value> launchOperand(gpu::LaunchFuncOp launch,
                                          unsigned argNumber, bool expanded) {
  OperandRange operands = launch.getKernelOperands();
  if (!expanded)
    return argNumber < operands.size()
               ? std::optional<Value>(operands[argNumber])
               : std::nullopt;
  unsigned position = 0;
  for (Value operand : operands) {
    unsigned width = 1;
    if (auto memref = dyn_cast<MemRefType>(operand.getType()))
      width = 3 + 2 * memref.getRank();
    else if (isa<UnrankedMemRefType>(operand.getType()))
      width = 2;
    if (argNumber < position + width)
      return width == 1 ? std::optional<Value>(operand) : std::nullopt;
    position += width;
  }
  return std::nullopt;
}

std::optional<int64_t> AddressModel::launchedConstant(BlockArgument arg) {
  auto it = launchConstants.find(arg);
  if (it != launchConstants.end())
    return it->second;
  std::optional<int64_t> &result = launchConstants[arg];
  Operation *fn = arg.getOwner()->getParentOp();
  auto gpuFunc = dyn_cast<gpu::GPUFuncOp>(fn);
  bool kernel = gpuFunc
                    ? gpuFunc.isKernel()
                    : isa<LLVM::LLVMFuncOp>(fn) &&
                          fn->hasAttr(gpu::GPUDialect::getKernelFuncAttrName());
  if (!kernel || !arg.getOwner()->isEntryBlock())
    return std::nullopt;
  auto gpuModule = fn->getParentOfType<gpu::GPUModuleOp>();
  Operation *top = gpuModule ? gpuModule->getParentOp() : nullptr;
  if (!top)
    return std::nullopt;
  StringRef name = cast<SymbolOpInterface>(fn).getName();
  // Outlining passes the launch body's constants in as parameters; where
  // every launch in the module passes the same one, the kernel sees it.
  std::optional<int64_t> found;
  bool any = false, agree = true;
  top->walk([&](gpu::LaunchFuncOp launch) {
    if (launch.getKernelModuleName().getValue() != gpuModule.getName() ||
        launch.getKernelName().getValue() != name)
      return;
    std::optional<Value> operand =
        launchOperand(launch, arg.getArgNumber(), /*expanded=*/!gpuFunc);
    std::optional<int64_t> c = operand ? constant(*operand) : std::nullopt;
    agree &= c.has_value() && (!any || c == found);
    found = c;
    any = true;
  });
  result = any && agree ? found : std::nullopt;
  return result;
}

std::optional<std::pair<Value, int64_t>> AddressModel::counterPlus(Value v) {
  int64_t offset = 0;
  for (int depth = 0; depth < 32; ++depth) {
    Operation *def = v.getDefiningOp();
    if (!def)
      break;
    if (isCast(def) && !isa<LLVM::PtrToIntOp, LLVM::AddrSpaceCastOp>(def)) {
      v = def->getOperand(0);
      continue;
    }
    bool isAdd = isa<arith::AddIOp, LLVM::AddOp>(def);
    bool isSub = isa<arith::SubIOp, LLVM::SubOp>(def);
    if (!isAdd && !isSub)
      break;
    if (std::optional<int64_t> c = constant(def->getOperand(1))) {
      offset += isAdd ? *c : -*c;
      v = def->getOperand(0);
      continue;
    }
    std::optional<int64_t> c =
        isAdd ? constant(def->getOperand(0)) : std::optional<int64_t>();
    if (!c)
      break;
    offset += *c;
    v = def->getOperand(1);
  }
  return std::make_pair(v, offset);
}

std::optional<IterArg> AddressModel::iterArg(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return std::nullopt;
  Block *header = arg.getOwner();
  if (auto forOp = dyn_cast<scf::ForOp>(header->getParentOp())) {
    if (arg.getArgNumber() == 0)
      return std::nullopt;
    unsigned i = arg.getArgNumber() - 1;
    return IterArg{header, forOp.getInitArgs()[i],
                   forOp.getBody()->getTerminator()->getOperand(i)};
  }
  // A natural CFG loop: the header's argument gets one value from outside
  // the loop (the initial value) and one from the back edges (a block the
  // header dominates).
  if (header->isEntryBlock())
    return std::nullopt;
  Value init, next;
  for (auto it = header->pred_begin(); it != header->pred_end(); ++it) {
    Block *pred = *it;
    auto br = dyn_cast<BranchOpInterface>(pred->getTerminator());
    if (!br)
      return std::nullopt;
    OperandRange fwd =
        br.getSuccessorOperands(it.getSuccessorIndex()).getForwardedOperands();
    unsigned offset = header->getNumArguments() - fwd.size();
    if (arg.getArgNumber() < offset)
      return std::nullopt;
    Value in = fwd[arg.getArgNumber() - offset];
    Value &slot = isBackEdge(pred, header) ? next : init;
    if (slot && slot != in)
      return std::nullopt;
    slot = in;
  }
  if (!init || !next)
    return std::nullopt;
  return IterArg{header, init, next};
}

std::optional<std::pair<Value, int64_t>> AddressModel::wrapOf(Value cond) {
  // x + 1 reaches S: cmp eq|sge|uge (x + 1), S (arith or llvm).
  auto cmp =
      comparedBy(cond, {arith::CmpIPredicate::eq, arith::CmpIPredicate::sge,
                        arith::CmpIPredicate::uge});
  if (!cmp)
    return std::nullopt;
  auto x = counterPlus(cmp->first);
  std::optional<int64_t> stages = constant(cmp->second);
  if (!x || x->second != 1 || !stages || *stages <= 0)
    return std::nullopt;
  return std::make_pair(x->first, *stages);
}

DominanceInfo &AddressModel::dominanceInfo() {
  // DominanceInfo computes each region's tree on first use.
  if (!dominance)
    dominance = std::make_unique<DominanceInfo>();
  return *dominance;
}

bool AddressModel::isBackEdge(Block *from, Block *header) {
  return dominanceInfo().dominates(header, from);
}

Block *AddressModel::nearestCommonDominator(Block *a, Block *b) {
  if (a->getParent() != b->getParent())
    return nullptr;
  return dominanceInfo().findNearestCommonDominator(a, b);
}

bool AddressModel::properlyDominates(Operation *a, Operation *b) {
  return dominanceInfo().properlyDominates(a, b);
}

std::optional<int64_t> AddressModel::modularCounter(Value v) {
  std::optional<IterArg> arg = iterArg(v);
  if (!arg)
    return std::nullopt;
  Operation *def = arg->next.getDefiningOp();
  if (!def)
    return std::nullopt;
  auto incremented = [&](Value x) {
    auto base = counterPlus(x);
    return base && base->first == v && base->second == 1;
  };
  // remui(v + 1, S)
  if (isRemainder(def) && incremented(def->getOperand(0)))
    return constant(def->getOperand(1));
  // select(v + 1 == S, 0, v + 1), or >= S (Triton)
  if (auto advance = advanceOf(arg->next); advance && advance->first == v)
    return advance->second;
  return std::nullopt;
}

std::optional<std::pair<Value, int64_t>> AddressModel::advanceOf(Value v) {
  Operation *def = v ? v.getDefiningOp() : nullptr;
  if (!def || !isa<arith::SelectOp, LLVM::SelectOp>(def) ||
      constant(def->getOperand(1)) != 0)
    return std::nullopt;
  auto wrap = wrapOf(def->getOperand(0));
  auto next = counterPlus(def->getOperand(2));
  if (!wrap || !next || next->first != wrap->first || next->second != 1)
    return std::nullopt;
  return wrap;
}

std::optional<std::pair<Value, Value>> AddressModel::flipOf(Value v) {
  Value cond, ifTrue, ifFalse;
  if (Operation *select = v.getDefiningOp();
      select && isa<arith::SelectOp, LLVM::SelectOp>(select)) {
    cond = select->getOperand(0);
    ifTrue = select->getOperand(1);
    ifFalse = select->getOperand(2);
  } else if (auto choice = branchChoice(v)) {
    std::tie(cond, ifTrue, ifFalse) = *choice;
  } else {
    return std::nullopt;
  }
  Operation *flip = ifTrue.getDefiningOp();
  if (!flip || !isa<arith::XOrIOp, LLVM::XOrOp>(flip) ||
      flip->getOperand(0) != ifFalse || !isOne(flip->getOperand(1)))
    return std::nullopt;
  return std::make_pair(cond, ifFalse);
}

std::optional<int64_t> AddressModel::counterStep(Value counter) {
  auto arg = dyn_cast_or_null<BlockArgument>(counter);
  if (!arg)
    return std::nullopt;
  if (auto forOp = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      forOp && arg.getArgNumber() == 0)
    return constant(forOp.getStep()); // the induction variable
  std::optional<IterArg> iter = iterArg(counter);
  if (!iter)
    return std::nullopt;
  if (modularCounter(counter))
    return 1;
  auto base = counterPlus(iter->next);
  if (base && base->first == counter && base->second != 0)
    return base->second;
  return std::nullopt;
}

std::optional<int64_t> AddressModel::shortTripCount(Value counter) {
  auto arg = dyn_cast_or_null<BlockArgument>(counter);
  if (!arg || !startsAtZero(counter) || counterStep(counter) != 1)
    return std::nullopt;
  std::optional<int64_t> bound;
  if (auto forOp = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      forOp && arg.getArgNumber() == 0) {
    bound = constant(forOp.getUpperBound());
  } else if (std::optional<IterArg> iter = iterArg(counter)) {
    // The header tests counter < N, staying in the loop when it holds (its
    // true successor dominates the back edge's block).
    Operation *term = arg.getOwner()->getTerminator();
    Value cond = branchCondition(term);
    Block *stay = cond ? term->getSuccessor(0) : nullptr;
    auto cmp = comparedBy(
        cond, {arith::CmpIPredicate::slt, arith::CmpIPredicate::ult});
    Block *latch = iter->next.getParentBlock();
    if (cmp && cmp->first == counter && stay && latch &&
        isBackEdge(latch, stay))
      bound = constant(cmp->second);
  }
  if (!bound || *bound < 1 || *bound > kMaxRingStages)
    return std::nullopt;
  return bound;
}

std::optional<StageExpr> AddressModel::rawStageOf(Value atom) {
  if (std::optional<int64_t> modulus = modularCounter(atom))
    return StageExpr{atom, 0, *modulus};
  // An index advanced on some iterations only (CuTe's producer state inside
  // its consumer loop): a symbolic stage -- the same value names the same
  // slot -- with no step, so no fact about it crosses an iteration.
  if (std::optional<int64_t> modulus = conditionalCounter(atom))
    return StageExpr{atom, 0, *modulus};
  // A pipeline index handed from loop to loop (CuTe's producer state
  // across its tile loop): symbolic too.
  if (isa<BlockArgument>(atom)) {
    llvm::DenseSet<Value> assumed;
    if (std::optional<int64_t> modulus = stateModulus(atom, assumed, 0);
        modulus && *modulus > 1 && *modulus <= kMaxRingStages)
      return StageExpr{atom, 0, *modulus};
  }
  // A counter that never wraps is its own stage: a ring filled once, before
  // its loop, and read once per stage (upstream's sm90 GEMM tests).
  if (std::optional<int64_t> trips = shortTripCount(atom); trips && *trips > 1)
    return StageExpr{atom, 0, *trips};
  Operation *def = atom.getDefiningOp();
  if (!def)
    return std::nullopt;
  // An index advanced, select(x + 1 >= S, 0, x + 1), is one stage past x
  // (Triton advances its carried index so at the top of the loop body;
  // CuTe's producer tail steps its state through every stage after its
  // loop).
  if (auto advance = advanceOf(atom))
    if (std::optional<StageExpr> before = rawStageOf(advance->first);
        before && before->stages == advance->second && before->counter)
      return StageExpr{before->counter, before->offset + 1, advance->second};
  // The previous stage, select(s == 0, S - 1, s - 1), is (s - 1) mod S.
  if (isa<arith::SelectOp, LLVM::SelectOp>(def))
    if (auto cmp = def->getOperand(0).getDefiningOp<arith::CmpIOp>();
        cmp && cmp.getPredicate() == arith::CmpIPredicate::eq &&
        constant(cmp.getRhs()) == 0)
      if (std::optional<StageExpr> s = stageOfValue(cmp.getLhs());
          s && !s->isFixed() && constant(def->getOperand(1)) == s->stages - 1)
        if (auto prev = counterPlus(def->getOperand(2));
            prev && prev->second == -1 && stageOfValue(prev->first) == s) {
          s->offset -= 1;
          return s;
        }
  if (!isRemainder(def))
    return std::nullopt;
  return counterBy(def);
}

std::optional<int64_t> AddressModel::conditionalCounter(Value v) {
  std::optional<IterArg> arg = iterArg(v);
  auto join = arg ? dyn_cast<BlockArgument>(arg->next) : BlockArgument();
  if (!join || join.getOwner() == arg->header)
    return std::nullopt;
  // Every edge into the join hands over v itself or v advanced mod S.
  std::optional<int64_t> modulus;
  bool advances = false, stays = false;
  for (Block *pred : join.getOwner()->getPredecessors()) {
    Value in = forwardedFrom(pred, join);
    if (in == v) {
      stays = true;
      continue;
    }
    auto advance = advanceOf(in);
    if (!advance || advance->first != v ||
        (modulus && *modulus != advance->second))
      return std::nullopt;
    modulus = advance->second;
    advances = true;
  }
  if (!advances || !stays || !modulus || *modulus > kMaxRingStages)
    return std::nullopt;
  return modulus;
}

std::optional<int64_t>
AddressModel::stateModulus(Value v, llvm::DenseSet<Value> &assumed, int depth) {
  // 0 stands for "any S" (a constant start, or an index assumed below).
  if (!v || depth > 24)
    return std::nullopt;
  if (std::optional<int64_t> c = constant(v))
    return *c >= 0 && *c < kMaxRingStages ? std::optional<int64_t>(0)
                                          : std::nullopt;
  auto combine = [](std::optional<int64_t> a,
                    std::optional<int64_t> b) -> std::optional<int64_t> {
    if (!a || !b || (*a && *b && *a != *b))
      return std::nullopt;
    return *a ? a : b;
  };
  if (v.getDefiningOp()) {
    // An index x advanced mod S.
    auto advance = advanceOf(v);
    if (!advance)
      return std::nullopt;
    return combine(advance->second,
                   stateModulus(advance->first, assumed, depth + 1));
  }
  auto arg = cast<BlockArgument>(v);
  if (!assumed.insert(v).second)
    return 0;
  Block *block = arg.getOwner();
  if (block->isEntryBlock())
    return std::nullopt;
  std::optional<int64_t> modulus = 0;
  for (Block *pred : block->getPredecessors()) {
    Value in = forwardedFrom(pred, arg);
    if (in == v)
      continue;
    modulus = combine(modulus, stateModulus(in, assumed, depth + 1));
    if (!modulus)
      return std::nullopt;
  }
  return modulus;
}

bool AddressModel::nonNegative(Value v) {
  llvm::DenseSet<Value> assumed;
  return nonNegative(v, assumed, 0);
}

bool AddressModel::nonNegative(Value v, llvm::DenseSet<Value> &assumed,
                               int depth) {
  if (std::optional<int64_t> c = constant(v))
    return *c >= 0;
  auto base = counterPlus(v);
  if (!base || base->second < 0 || depth > 8)
    return false;
  Value x = base->first;
  if (auto forOp =
          dyn_cast_or_null<scf::ForOp>(x.getParentBlock()->getParentOp());
      forOp && forOp.getInductionVar() == x) {
    std::optional<int64_t> lower = constant(forOp.getLowerBound());
    std::optional<int64_t> step = counterStep(x);
    return lower && *lower >= 0 && step && *step > 0;
  }
  // A loop-carried value is never negative where it enters so and each
  // trip keeps it so, assuming it of itself (a ring position carried from
  // a tile loop into its k loop and back).
  if (assumed.contains(x))
    return true;
  std::optional<IterArg> arg = iterArg(x);
  if (!arg)
    return false;
  assumed.insert(x);
  return nonNegative(arg->init, assumed, depth + 1) &&
         nonNegative(arg->next, assumed, depth + 1);
}

/// Signed compares of x with a constant; x != 0 for a non-negative x.
bool AddressModel::provesAtLeast(Value cond, bool taken, Value x,
                                 int64_t least) {
  using P = arith::CmpIPredicate;
  for (P pred : {P::sgt, P::sge, P::slt, P::sle, P::ne, P::eq}) {
    auto cmp = comparedBy(cond, {pred});
    if (!cmp || (cmp->first != x && cmp->second != x))
      continue;
    // As `x p c` where the branch went.
    P p = taken ? pred : arith::invertPredicate(pred);
    if (cmp->first != x)
      p = p == P::sgt   ? P::slt
          : p == P::sge ? P::sle
          : p == P::slt ? P::sgt
          : p == P::sle ? P::sge
                        : p;
    std::optional<int64_t> c =
        constant(cmp->first == x ? cmp->second : cmp->first);
    if (!c)
      return false;
    if (p == P::sgt)
      return *c + 1 >= least;
    if (p == P::sge)
      return *c >= least;
    return p == P::ne && *c == 0 && least <= 1 && nonNegative(x);
  }
  return false;
}

bool AddressModel::guardedNonNegative(Value v, Operation *at) {
  auto base = counterPlus(v);
  if (!base || base->second >= 0)
    return false;
  Value x = base->first;
  int64_t least = -base->second;
  // Climb from `at` through blocks entered only from a conditional branch
  // (or an scf.if's region) until one proves the bound.
  Block *block = at->getBlock();
  for (int depth = 0; block && depth < 16; ++depth) {
    if (auto ifOp = dyn_cast_or_null<scf::IfOp>(block->getParentOp());
        ifOp && block->isEntryBlock()) {
      bool then = block->getParent() == &ifOp.getThenRegion();
      if (provesAtLeast(ifOp.getCondition(), then, x, least))
        return true;
      block = ifOp->getBlock();
      continue;
    }
    Block *pred = block->getSinglePredecessor();
    if (!pred)
      return false;
    Operation *branch = pred->getTerminator();
    if (Value cond = branchCondition(branch);
        cond && branch->getNumSuccessors() == 2 &&
        branch->getSuccessor(0) != branch->getSuccessor(1)) {
      bool taken = branch->getSuccessor(0) == block;
      if (provesAtLeast(cond, taken, x, least))
        return true;
    }
    block = pred;
  }
  return false;
}

// Gluon and Triton write k % S and k / S signed: the same as unsigned for a
// counter that never goes below 0 there.
bool AddressModel::isRemainder(Operation *op) {
  return isa<arith::RemUIOp, LLVM::URemOp>(op) ||
         (isa<arith::RemSIOp, LLVM::SRemOp>(op) &&
          (nonNegative(op->getOperand(0)) ||
           guardedNonNegative(op->getOperand(0), op)));
}

bool AddressModel::isQuotient(Operation *op) {
  return isa<arith::DivUIOp, LLVM::UDivOp>(op) ||
         (isa<arith::DivSIOp, LLVM::SDivOp>(op) &&
          (nonNegative(op->getOperand(0)) ||
           guardedNonNegative(op->getOperand(0), op)));
}

std::optional<StageExpr> AddressModel::stageOf(Value atom) {
  std::optional<StageExpr> e = rawStageOf(atom);
  if (e)
    *e = canonical(*e);
  return e;
}

StageExpr AddressModel::canonical(StageExpr stage) {
  if (!stage.counter || modularCounter(stage.counter) != stage.stages)
    return stage;
  // Modular counters of one loop that advance together (Triton's insert and
  // extract indices, CuTe's read and release indices) differ by a constant:
  // name every such stage by the header's first one, so the slots they
  // index can be compared.
  std::optional<IterArg> self = iterArg(stage.counter);
  if (!self)
    return stage;
  for (BlockArgument other : self->header->getArguments()) {
    if (other == stage.counter)
      break;
    if (modularCounter(other) != stage.stages)
      continue;
    std::optional<IterArg> rep = iterArg(other);
    if (!rep)
      continue;
    llvm::DenseMap<std::pair<Value, Value>, Linear> assumed;
    std::optional<Linear> lag =
        lagOf(self->init, rep->init, stage.stages, assumed, 0);
    if (std::optional<int64_t> d =
            lag ? lagInLoop(*lag, self->header) : std::nullopt)
      return StageExpr{other, stage.offset + *d, stage.stages};
  }
  return stage;
}

/// A property of a pair of block arguments of one block (a loop header or
/// a join), holding when every edge into the block hands over a pair with
/// one value of it: `of(x, y)` computes it for the values an edge hands
/// over; a loop header assumes it of itself for its back edges (the
/// invariant is inductive), recorded in `assumed` while they are checked.
template <typename T, typename Of, typename Same>
static std::optional<T>
inductiveOverJoin(AddressModel &model, BlockArgument a, BlockArgument b,
                  llvm::DenseMap<std::pair<Value, Value>, T> &assumed, Of of,
                  Same same) {
  Block *block = a.getOwner();
  std::optional<T> value;
  SmallVector<Block *> back;
  for (Block *pred : block->getPredecessors()) {
    if (model.isBackEdge(pred, block)) {
      back.push_back(pred);
      continue;
    }
    std::optional<T> v = of(forwardedFrom(pred, a), forwardedFrom(pred, b));
    if (!v || (value && !same(*value, *v)))
      return std::nullopt;
    value = v;
  }
  if (!value)
    return std::nullopt;
  assumed[{a, b}] = *value;
  for (Block *pred : back) {
    std::optional<T> v = of(forwardedFrom(pred, a), forwardedFrom(pred, b));
    if (!v || !same(*value, *v)) {
      assumed.erase({a, b});
      return std::nullopt;
    }
  }
  return value;
}

std::optional<Linear>
AddressModel::lagOf(Value a, Value b, int64_t S,
                    llvm::DenseMap<std::pair<Value, Value>, Linear> &assumed,
                    int depth) {
  if (!a || !b || depth > 32)
    return std::nullopt;
  if (a == b)
    return constantOf(0);
  std::optional<int64_t> ca = constant(a), cb = constant(b);
  if (ca && cb)
    return constantOf(*ca - *cb);
  auto known = assumed.find({a, b});
  if (known != assumed.end())
    return known->second;
  auto step = [](std::optional<Linear> l, int64_t by) {
    if (l)
      l->constant += by;
    return l;
  };
  if (auto advance = advanceOf(a); advance && advance->second == S)
    return step(lagOf(advance->first, b, S, assumed, depth + 1), 1);
  if (auto advance = advanceOf(b); advance && advance->second == S)
    return step(lagOf(a, advance->first, S, assumed, depth + 1), -1);
  auto ba = dyn_cast<BlockArgument>(a);
  auto bb = dyn_cast<BlockArgument>(b);
  if (ba && bb && ba.getOwner() == bb.getOwner() &&
      !ba.getOwner()->isEntryBlock())
    return inductiveOverJoin<Linear>(
        *this, ba, bb, assumed,
        [&](Value x, Value y) { return lagOf(x, y, S, assumed, depth + 1); },
        [](const Linear &x, const Linear &y) {
          std::optional<Linear> d = addLinear(x, y, -1);
          return d && d->terms.empty() && d->constant == 0;
        });
  // An index seen after a loop that steps it once a trip: its value on
  // entry plus the trip count.
  auto leaving =
      [&](BlockArgument arg) -> std::optional<std::pair<Value, Linear>> {
    std::optional<IterArg> it = arg ? iterArg(arg) : std::nullopt;
    auto advance = it ? advanceOf(it->next) : std::nullopt;
    if (!advance || advance->first != arg || advance->second != S)
      return std::nullopt;
    std::optional<Linear> trips = tripCount(it->header);
    if (!trips)
      return std::nullopt;
    return std::make_pair(it->init, *trips);
  };
  if (auto left = leaving(ba)) {
    std::optional<Linear> l = lagOf(left->first, b, S, assumed, depth + 1);
    return l ? addLinear(*l, left->second, 1) : std::nullopt;
  }
  if (auto left = leaving(bb)) {
    std::optional<Linear> l = lagOf(a, left->first, S, assumed, depth + 1);
    return l ? addLinear(*l, left->second, -1) : std::nullopt;
  }
  return std::nullopt;
}

std::optional<LoopTest>
AddressModel::loopTest(Block *header,
                       std::initializer_list<arith::CmpIPredicate> predicates) {
  Value cond = branchCondition(header->getTerminator());
  auto cmp = cond ? comparedBy(cond, predicates) : std::nullopt;
  auto i = cmp ? dyn_cast<BlockArgument>(cmp->first) : BlockArgument();
  if (!i || i.getOwner() != header)
    return std::nullopt;
  std::optional<IterArg> it = iterArg(i);
  if (!it)
    return std::nullopt;
  return LoopTest{i, *it, cmp->second};
}

std::optional<Linear> AddressModel::tripCount(Block *header) {
  auto test =
      loopTest(header, {arith::CmpIPredicate::slt, arith::CmpIPredicate::ult});
  auto next = test ? counterPlus(test->counter.next) : std::nullopt;
  Operation *br = header->getTerminator();
  // The loop goes on where i < ub holds: the true successor is its body.
  if (!next || next->first != test->index || next->second != 1 ||
      br->getSuccessor(0) == header ||
      !dominanceInfo().dominates(header, br->getSuccessor(0)))
    return std::nullopt;
  std::optional<Linear> ub = linear(test->bound),
                        lb = linear(test->counter.init);
  if (!ub || !lb)
    return std::nullopt;
  return addLinear(*ub, *lb, -1);
}

std::optional<int64_t> AddressModel::lagInLoop(Linear lag, Block *header) {
  if (lag.shift != 0)
    return std::nullopt;
  // The loop's own counter: i from lb while i < ub.
  std::optional<LoopTest> test = loopTest(header, {arith::CmpIPredicate::slt});
  for (auto &[atom, coeff] : lag.terms) {
    // lb = min(ub, c): select(ub < c, ub, c).
    Operation *def = atom.getDefiningOp();
    std::optional<int64_t> c;
    if (test && test->counter.init == atom && def &&
        isa<arith::SelectOp, LLVM::SelectOp>(def))
      if (auto lt = comparedBy(def->getOperand(0), {arith::CmpIPredicate::slt});
          lt && lt->first == test->bound && def->getOperand(1) == test->bound &&
          constant(lt->second) && lt->second == def->getOperand(2))
        c = constant(def->getOperand(2));
    if (!c)
      return std::nullopt;
    lag.constant += coeff * *c;
  }
  return lag.constant;
}

std::optional<StageExpr> AddressModel::stageOfValue(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isCast(def))
      break;
    v = def->getOperand(0);
  }
  return stageOf(v);
}

bool AddressModel::startsAtZero(Value counter) {
  auto arg = dyn_cast_or_null<BlockArgument>(counter);
  if (!arg)
    return false;
  if (auto forOp = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      forOp && arg.getArgNumber() == 0)
    return constant(forOp.getLowerBound()) == 0;
  std::optional<IterArg> iter = iterArg(counter);
  return iter && constant(iter->init) == 0;
}

bool AddressModel::isOne(Value v) {
  // A folded i1 may still read as -1; only the low bit matters there.
  std::optional<int64_t> c = constant(v);
  return c && (*c == 1 || (*c == -1 && v.getType().isInteger(1)));
}

std::optional<StageExpr> AddressModel::counterBy(Operation *op) {
  std::optional<int64_t> stages = constant(op->getOperand(1));
  if (!stages || *stages <= 0)
    return std::nullopt;
  // A constant index (a peeled first block) names one slot of the ring.
  if (std::optional<int64_t> c = constant(op->getOperand(0)))
    return *stages > 1
               ? std::optional<StageExpr>(StageExpr{
                     Value(), ((*c % *stages) + *stages) % *stages, *stages})
               : std::nullopt;
  auto base = counterPlus(op->getOperand(0));
  if (!base)
    return std::nullopt;
  if (counterStep(base->first))
    return StageExpr{base->first, base->second, *stages};
  // Any other index (a peeled last block, (n - 1) mod S) is symbolic: the
  // slot the same value names, whatever it is; the loop rules leave it be.
  // Only ring depths: a thread index mod 128 or 32 names no stage.
  if (*stages > kMaxRingStages)
    return std::nullopt;
  return StageExpr{base->first, base->second, *stages};
}

std::optional<PhaseExpr> AddressModel::phaseOf(Value v) {
  if (!v)
    return std::nullopt;
  Operation *def = v.getDefiningOp();
  while (def && isCast(def)) {
    v = def->getOperand(0);
    def = v.getDefiningOp();
  }
  if (!def)
    return carriedPhase(v);
  if (std::optional<PhaseExpr> bit = maskPhase(def))
    return bit;
  // The phase advanced in the body (Triton): select(x + 1 >= S, p ^ 1, p)
  // of a carried phase p, used with the advanced index.
  if (isa<arith::SelectOp, LLVM::SelectOp>(def))
    if (auto p = dyn_cast<BlockArgument>(def->getOperand(2))) {
      std::optional<IterArg> arg = iterArg(p);
      std::optional<int64_t> p0 = arg ? constant(arg->init) : std::nullopt;
      auto wrap = wrapOf(selectFlip(v, p));
      if (p0 && wrap && modularCounter(wrap->first) == wrap->second &&
          arg->next == v)
        if (std::optional<IterArg> index = iterArg(wrap->first))
          if (std::optional<int64_t> x0 = constant(index->init)) {
            // The first iteration's advanced state: it must be stage 0,
            // round 0, whose parity is 0; p1 is then the flip.
            int64_t S = wrap->second;
            bool wrapped = *x0 + 1 >= S;
            int64_t x1 = wrapped ? 0 : *x0 + 1;
            int64_t p1 = (*p0 & 1) ^ (wrapped ? 1 : 0);
            if (x1 == 0 && index->header == arg->header)
              return PhaseExpr{canonical(StageExpr{wrap->first, 1, S}),
                               p1 == 1};
          }
    }
  if (isa<arith::XOrIOp, LLVM::XOrOp>(def) && isOne(def->getOperand(1)))
    if (std::optional<PhaseExpr> inner = phaseOf(def->getOperand(0))) {
      inner->flipped = !inner->flipped;
      return inner;
    }
  if (isa<arith::XOrIOp, LLVM::XOrOp>(def) && constant(def->getOperand(1)) == 0)
    return phaseOf(def->getOperand(0));
  // x & 1 and x mod 2 are the same bit.
  bool lowBit =
      (isa<arith::AndIOp, LLVM::AndOp>(def) && isOne(def->getOperand(1))) ||
      (isRemainder(def) && constant(def->getOperand(1)) == 2);
  if (!lowBit)
    return std::nullopt;
  Operation *div = def->getOperand(0).getDefiningOp();
  if (!div || !isQuotient(div))
    return std::nullopt;
  if (std::optional<StageExpr> round = counterBy(div))
    return PhaseExpr{*round, false};
  return std::nullopt;
}

std::optional<int64_t> AddressModel::firstParity(Value v) {
  for (int depth = 0; v && depth < 8; ++depth) {
    if (std::optional<int64_t> c = constant(v))
      return *c & 1;
    // A loop-carried parity has its entry value in the first iteration.
    if (std::optional<IterArg> carried = iterArg(v)) {
      v = carried->init;
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (!def)
      return std::nullopt;
    if (isCast(def)) {
      v = def->getOperand(0);
      continue;
    }
    if (isa<arith::XOrIOp, LLVM::XOrOp>(def) && isOne(def->getOperand(1))) {
      std::optional<int64_t> inner = firstParity(def->getOperand(0));
      return inner ? std::optional<int64_t>(1 - *inner) : std::nullopt;
    }
    // (mask & bit) != 0 of a mask that starts as a constant.
    auto cmp = comparedBy(v, {arith::CmpIPredicate::ne});
    if (!cmp || constant(cmp->second) != 0)
      return std::nullopt;
    Operation *bits = cmp->first.getDefiningOp();
    auto load = bits && isa<arith::AndIOp, LLVM::AndOp>(bits)
                    ? bits->getOperand(0).getDefiningOp<memref::LoadOp>()
                    : memref::LoadOp();
    std::optional<int64_t> bit =
        load ? constant(bits->getOperand(1)) : std::nullopt;
    if (!bit)
      return std::nullopt;
    std::optional<int64_t> initial;
    for (Operation *user : load.getMemRef().getUsers())
      if (auto store = dyn_cast<memref::StoreOp>(user))
        if (std::optional<int64_t> c = constant(store.getValueToStore())) {
          if (initial && *initial != *c)
            return std::nullopt;
          initial = c;
        }
    if (!initial)
      return std::nullopt;
    return (*initial & *bit) != 0;
  }
  return std::nullopt;
}

/// Phases kept as a bit mask in memory, one bit per stage (Mosaic GPU):
/// `(mask & (1 << s)) != 0`, with every store to the mask either a constant
/// or the same bit toggled as it is read (`mask ^ (1 << s)`). Each wait
/// flips its stage's bit, so the bit is the round parity of stage s,
/// complemented where the mask starts with it set.
std::optional<PhaseExpr> AddressModel::maskPhase(Operation *def) {
  auto cmp = comparedBy(def->getResult(0), {arith::CmpIPredicate::ne});
  if (!cmp || constant(cmp->second) != 0)
    return std::nullopt;
  Operation *bits = cmp->first.getDefiningOp();
  if (!bits || !isa<arith::AndIOp, LLVM::AndOp>(bits))
    return std::nullopt;
  auto load = bits->getOperand(0).getDefiningOp<memref::LoadOp>();
  Operation *shift = bits->getOperand(1).getDefiningOp();
  if (!load || !shift || !isa<arith::ShLIOp, LLVM::ShlOp>(shift) ||
      !isOne(shift->getOperand(0)))
    return std::nullopt;
  Value mask = load.getMemRef();
  auto alloca = mask.getDefiningOp<memref::AllocaOp>();
  if (!alloca || alloca.getType().getRank() != 0)
    return std::nullopt;
  std::optional<int64_t> initial;
  for (Operation *user : mask.getUsers()) {
    if (isa<memref::LoadOp>(user))
      continue;
    auto store = dyn_cast<memref::StoreOp>(user);
    if (!store)
      return std::nullopt;
    if (std::optional<int64_t> c = constant(store.getValueToStore())) {
      if (initial && *initial != *c)
        return std::nullopt;
      initial = c;
      continue;
    }
    Operation *toggle = store.getValueToStore().getDefiningOp();
    if (!toggle || !isa<arith::XOrIOp, LLVM::XOrOp>(toggle) ||
        !toggle->getOperand(0).getDefiningOp<memref::LoadOp>() ||
        toggle->getOperand(0).getDefiningOp<memref::LoadOp>().getMemRef() !=
            mask)
      return std::nullopt;
    // The bit toggled: 1 << s, or a constant one (a fixed stage's).
    if (std::optional<int64_t> c = constant(toggle->getOperand(1)))
      if (*c > 0 && llvm::isPowerOf2_64(static_cast<uint64_t>(*c)))
        continue;
    Operation *bit = toggle->getOperand(1).getDefiningOp();
    if (!bit || !isa<arith::ShLIOp, LLVM::ShlOp>(bit) ||
        !isOne(bit->getOperand(0)))
      return std::nullopt;
  }
  // The bit index: a stage, through whatever arithmetic adds nothing.
  std::optional<StagedAddress> index = staged(shift->getOperand(1));
  if (!initial || !index || index->stride != 1 || !index->rest.terms.empty() ||
      index->rest.constant != 0 || index->stage.isFixed())
    return std::nullopt;
  std::optional<StageExpr> stage = index->stage;
  bool set = (static_cast<uint64_t>(*initial) >> stage->offset) & 1;
  // One start for every bit, or the complement follows the stage.
  if (*initial != 0 && *initial != (int64_t(1) << stage->stages) - 1)
    return std::nullopt;
  return PhaseExpr{*stage, *initial != 0 || set};
}

/// The value forwarded into block argument `arg` from predecessor `pred`.
static Value forwardedFrom(Block *pred, BlockArgument arg) {
  auto br = dyn_cast<BranchOpInterface>(pred->getTerminator());
  if (!br)
    return Value();
  for (unsigned s = 0; s < pred->getTerminator()->getNumSuccessors(); ++s) {
    if (pred->getTerminator()->getSuccessor(s) != arg.getOwner())
      continue;
    OperandRange fwd = br.getSuccessorOperands(s).getForwardedOperands();
    unsigned offset = arg.getOwner()->getNumArguments() - fwd.size();
    if (arg.getArgNumber() < offset)
      return Value();
    return fwd[arg.getArgNumber() - offset];
  }
  return Value();
}

std::optional<bool> AddressModel::pairPolarity(
    Value index, Value phase, int64_t S,
    llvm::DenseMap<std::pair<Value, Value>, bool> &assumed, int depth) {
  if (!index || !phase || depth > 16)
    return std::nullopt;
  // Round 0: both constants.
  std::optional<int64_t> i0 = constant(index), p0 = constant(phase);
  if (i0 && p0)
    return *i0 >= 0 && *i0 < S && (*p0 == 0 || *p0 == 1)
               ? std::optional<bool>(*p0 == 1)
               : std::nullopt;
  auto known = assumed.find({index, phase});
  if (known != assumed.end())
    return known->second;
  // One step: index advanced mod S, the phase flipped on the same wrap,
  // with (index before, phase before) a pair.
  if (auto advance = advanceOf(index); advance && advance->second == S) {
    auto flip = flipOf(phase);
    auto wrap = flip ? wrapOf(flip->first) : std::nullopt;
    if (!wrap || wrap->first != advance->first)
      return std::nullopt;
    return pairPolarity(advance->first, flip->second, S, assumed, depth + 1);
  }
  auto ia = dyn_cast<BlockArgument>(index);
  auto pa = dyn_cast<BlockArgument>(phase);
  if (!ia || !pa || ia.getOwner() != pa.getOwner() ||
      ia.getOwner()->isEntryBlock())
    return std::nullopt;
  // Every edge into the block both are arguments of hands over a pair of
  // one polarity (inductively, at a loop header).
  return inductiveOverJoin<bool>(
      *this, ia, pa, assumed,
      [&](Value x, Value y) {
        return pairPolarity(x, y, S, assumed, depth + 1);
      },
      [](bool x, bool y) { return x == y; });
}

std::optional<PhaseExpr>
AddressModel::pairedPhase(Value parity, const StageExpr &stage, Value index) {
  bool complemented = false;
  while (Operation *def = parity ? parity.getDefiningOp() : nullptr) {
    if (isa<arith::XOrIOp, LLVM::XOrOp>(def) && isOne(def->getOperand(1)))
      complemented = !complemented;
    else if (!isCast(def))
      break;
    parity = def->getOperand(0);
  }
  if (stage.isFixed() || stage.stages <= 1 || !parity)
    return std::nullopt;
  // The index the barrier address was computed from, with this parity (an
  // advanced state: CuTe's producer advances index and phase, then waits).
  if (index && index != parity) {
    llvm::DenseMap<std::pair<Value, Value>, bool> assumed;
    if (std::optional<bool> f =
            pairPolarity(index, parity, stage.stages, assumed, 0))
      return PhaseExpr{stage, *f != complemented};
  }
  auto p = dyn_cast<BlockArgument>(parity);
  if (!p)
    return std::nullopt;
  // The index beside it: an argument of the same block naming the stage.
  for (BlockArgument i : p.getOwner()->getArguments()) {
    std::optional<StageExpr> own = stageOf(i);
    if (i == p || !own || !(*own == stage))
      continue;
    llvm::DenseMap<std::pair<Value, Value>, bool> assumed;
    if (std::optional<bool> f = pairPolarity(i, p, stage.stages, assumed, 0))
      return PhaseExpr{stage, *f != complemented};
  }
  return std::nullopt;
}

/// For a block argument that a conditional branch chooses (CuTe's
/// `if (wrap) phase ^= 1` as CFG): the condition and the values the true
/// and false sides pass, each through an unconditional branch or directly.
static std::optional<std::tuple<Value, Value, Value>> branchChoice(Value x) {
  auto arg = dyn_cast<BlockArgument>(x);
  if (!arg)
    return std::nullopt;
  Block *join = arg.getOwner();
  SmallVector<Block *, 2> preds(join->getPredecessors());
  if (preds.size() != 2 || preds[0] == preds[1])
    return std::nullopt;
  // Each side: the block that branched on the condition, the successor it
  // took, and the value forwarded into `arg`.
  Value cond, values[2];
  Block *decider = nullptr;
  for (Block *pred : preds) {
    auto br = dyn_cast<BranchOpInterface>(pred->getTerminator());
    if (!br || pred->getTerminator()->getNumSuccessors() != 1)
      return std::nullopt;
    OperandRange fwd = br.getSuccessorOperands(0).getForwardedOperands();
    unsigned offset = join->getNumArguments() - fwd.size();
    if (arg.getArgNumber() < offset)
      return std::nullopt;
    Value passed = fwd[arg.getArgNumber() - offset];
    Block *from = pred->getSinglePredecessor();
    if (!from || (decider && from != decider))
      return std::nullopt;
    decider = from;
    Operation *term = from->getTerminator();
    Value c = branchCondition(term);
    if (!c || term->getNumSuccessors() != 2 ||
        term->getSuccessor(0) == term->getSuccessor(1))
      return std::nullopt;
    cond = c;
    values[term->getSuccessor(0) == pred ? 0 : 1] = passed;
  }
  if (!values[0] || !values[1])
    return std::nullopt;
  return std::make_tuple(cond, values[0], values[1]);
}

Value AddressModel::selectFlip(Value x, Value p) {
  auto flip = flipOf(x);
  return flip && flip->second == p ? flip->first : Value();
}

std::optional<PhaseExpr> AddressModel::carriedPhase(Value v) {
  // The pipeline-state idiom: an index s yielded as (s + 1) mod S from 0,
  // and a phase p yielded as p ^ (s + 1 == S), i.e. flipped at each wrap:
  // p is the round parity of s's stage, complemented when it starts at 1.
  std::optional<IterArg> arg = iterArg(v);
  if (!arg)
    return std::nullopt;
  std::optional<int64_t> initial = constant(arg->init);
  Operation *next = arg->next.getDefiningOp();
  if (!initial || (*initial != 0 && *initial != 1))
    return std::nullopt;
  Value wraps = selectFlip(arg->next, v);
  if (!wraps && next && isa<arith::XOrIOp, LLVM::XOrOp>(next) &&
      next->getOperand(0) == v)
    if (Operation *ext = next->getOperand(1).getDefiningOp();
        ext && isa<arith::ExtUIOp, LLVM::ZExtOp>(ext))
      wraps = ext->getOperand(0);
  auto cmp = comparedBy(wraps, {arith::CmpIPredicate::eq});
  if (!cmp)
    return std::nullopt;
  // Flipped when this iteration's stage is the last, (k + c) mod S == S - 1,
  // with k counting from 0: p is then the round parity of stage k + c.
  if (std::optional<StageExpr> stage = stageOfValue(cmp->first);
      stage && !stage->isFixed() && stage->offset >= 0 &&
      stage->offset < stage->stages &&
      constant(cmp->second) == stage->stages - 1 &&
      startsAtZero(stage->counter))
    return PhaseExpr{*stage, *initial == 1};
  auto index = counterPlus(cmp->first);
  std::optional<int64_t> stages = constant(cmp->second);
  if (!index || index->second != 1 || !stages)
    return std::nullopt;
  std::optional<IterArg> indexArg = iterArg(index->first);
  // The index may start past 0 (CuTe's consumer loop starts at stage 1,
  // stage 0 taken before it): still round 0, so p is its round's parity.
  std::optional<int64_t> start =
      indexArg ? constant(indexArg->init) : std::nullopt;
  if (!indexArg || indexArg->header != arg->header ||
      modularCounter(index->first) != stages || !start || *start < 0 ||
      *start >= *stages)
    return std::nullopt;
  return PhaseExpr{canonical(StageExpr{index->first, 0, *stages}),
                   *initial == 1};
}

std::optional<Linear> AddressModel::linear(Value v) {
  if (!v)
    return std::nullopt;
  auto it = cache.find(v);
  if (it != cache.end())
    return it->second;
  cache[v] = atomOf(v); // cycles through loop arguments end at an atom
  std::optional<Linear> l = compute(v);
  if (!l)
    l = atomOf(v);
  cache[v] = l;
  return l;
}

std::optional<Linear> AddressModel::compute(Value v) {
  if (std::optional<int64_t> c = constant(v))
    return constantOf(*c);
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (std::optional<std::string> name = globalName(def))
    return atomOf(globals.try_emplace(*name, v).first->second);
  if (isa<MemRefType>(v.getType()))
    return memrefAddress(def);
  // The offset a memref's metadata reports (Mosaic's reinterpret_cast of a
  // subview takes its offset so).
  if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(def);
      meta && v == meta.getOffset())
    return memrefOffset(meta.getSource());
  // An nvgpu descriptor's start field counts the tile's address in 16 bytes.
  if (auto gen = dyn_cast<nvgpu::WarpgroupGenerateDescriptorOp>(def)) {
    std::optional<Linear> l = memrefStart(gen.getTensor());
    if (!l || l->shift + 4 > 40)
      return std::nullopt;
    l->shift += 4;
    return l;
  }
  if (auto extract = dyn_cast<LLVM::ExtractValueOp>(def))
    return extractedField(extract);
  if (isCast(def))
    return linear(def->getOperand(0));
  auto operand = [&](unsigned i) { return linear(def->getOperand(i)); };
  if (isa<arith::AddIOp, LLVM::AddOp>(def) && v.getType().isInteger(64))
    for (unsigned i = 0; i < 2; ++i) {
      // A descriptor's layout fields added rather than or-ed in (Triton
      // 3.5): bits above the address fields never carry into the start
      // field, which is all that is compared.
      std::optional<int64_t> c = constant(def->getOperand(i));
      if (!c || (static_cast<uint64_t>(*c) >> 32) == 0)
        continue;
      std::optional<Linear> l = operand(1 - i);
      if (!l)
        return std::nullopt;
      return addLinear(*l, constantOf(*c & kStartAddressMask), 1);
    }
  if (isa<arith::AddIOp, LLVM::AddOp, arith::SubIOp, LLVM::SubOp>(def)) {
    std::optional<Linear> a = operand(0), b = operand(1);
    if (!a || !b)
      return std::nullopt;
    return addLinear(*a, *b, isa<arith::AddIOp, LLVM::AddOp>(def) ? 1 : -1);
  }
  if (isa<arith::MulIOp, LLVM::MulOp, arith::ShLIOp, LLVM::ShlOp>(def)) {
    bool shiftOp = isa<arith::ShLIOp, LLVM::ShlOp>(def);
    for (unsigned i = 0; i < 2; ++i) {
      std::optional<int64_t> c = constant(def->getOperand(i));
      if (!c || (shiftOp && i == 0))
        continue;
      if (shiftOp && (*c < 0 || *c > 40))
        return std::nullopt;
      std::optional<Linear> l = operand(1 - i);
      int64_t factor = shiftOp ? int64_t(1) << *c : *c;
      if (!l || !scale(*l, factor))
        return std::nullopt;
      l->terms.remove_if([](const auto &t) { return t.second == 0; });
      return l;
    }
    return std::nullopt;
  }
  if (isa<arith::ShRUIOp, LLVM::LShrOp>(def)) {
    std::optional<int64_t> c = constant(def->getOperand(1));
    if (!c || *c < 0)
      return std::nullopt;
    // (x << s) >> t with s <= t keeps bits [t - s, width - s) of x: all of
    // them for a shared address (< 2^18) while width - s >= 18. Upstream
    // builds a descriptor's start field so: ((ptrtoint p << 46) >> 50).
    Operation *shl = def->getOperand(0).getDefiningOp();
    unsigned width = v.getType().getIntOrFloatBitWidth();
    if (shl && isa<arith::ShLIOp, LLVM::ShlOp>(shl))
      if (std::optional<int64_t> s = constant(shl->getOperand(1));
          s && *s > 40 && *s <= *c && width >= *s + 18) {
        std::optional<Linear> l = linear(shl->getOperand(0));
        if (!l || l->shift + (*c - *s) > 40)
          return std::nullopt;
        l->shift += *c - *s;
        return l;
      }
    std::optional<Linear> l = operand(0);
    if (!l || l->shift + *c > 40)
      return std::nullopt;
    l->shift += *c;
    return l;
  }
  if (isa<arith::AndIOp, LLVM::AndOp>(def)) {
    // A low-bit mask keeps all of a shared address (< 2^18), or of one
    // already divided by 2^shift (a descriptor's 16-byte units).
    std::optional<int64_t> mask = constant(def->getOperand(1));
    std::optional<Linear> l = operand(0);
    if (mask && l && llvm::isMask_64(*mask) &&
        *mask >= (int64_t(1) << std::max<int>(18 - int(l->shift), 0)) - 1)
      return l;
    return std::nullopt;
  }
  if (auto bitcast = dyn_cast<LLVM::BitcastOp>(def)) {
    // A descriptor assembled (Triton) or adjusted (CuTe) as vector<2 x i32>:
    // the start field is in the low word; the high word holds only layout
    // fields.
    if (isa<VectorType>(bitcast.getArg().getType()))
      return lowWord(bitcast.getArg());
    return std::nullopt;
  }
  if (auto extract = dyn_cast<LLVM::ExtractElementOp>(def)) {
    if (constant(extract.getPosition()) == 0)
      return lowWord(extract.getVector());
    return std::nullopt;
  }
  if (isa<arith::XOrIOp, LLVM::XOrOp>(def)) {
    // x ^ 0 = x; constants fold (Triton spells 0 as 0 ^ 0).
    std::optional<int64_t> a = constant(def->getOperand(0)),
                           b = constant(def->getOperand(1));
    if (a && b)
      return constantOf(*a ^ *b);
    if (b == 0)
      return operand(0);
    if (a == 0)
      return operand(1);
    return std::nullopt;
  }
  if (isa<arith::OrIOp, LLVM::OrOp>(def)) {
    // The layout constant may stand on either side.
    for (unsigned i = 0; i < 2; ++i)
      if (std::optional<int64_t> c = constant(def->getOperand(i))) {
        std::optional<Linear> l = operand(1 - i);
        if (!l)
          return std::nullopt;
        return addLinear(*l, constantOf(*c & kStartAddressMask), 1);
      }
    return std::nullopt;
  }
  if (auto gep = dyn_cast<LLVM::GEPOp>(def)) {
    // base + i0 * sizeof(T) + i1 * sizeof(T[i]) + ...: the first index
    // steps over whole elements, later ones into (nested) arrays. A zero
    // index adds nothing even where the size is unknown (a zero-sized
    // extern array: `getelementptr %shared[0, 0]`).
    std::optional<Linear> total = linear(gep.getBase());
    Type type = gep.getElemType();
    bool first = true;
    for (auto index : gep.getIndices()) {
      if (!total)
        return std::nullopt;
      if (!first) {
        auto array = dyn_cast<LLVM::LLVMArrayType>(type);
        if (!array)
          return std::nullopt;
        type = array.getElementType();
      }
      first = false;
      std::optional<Linear> term;
      if (auto attr = dyn_cast<IntegerAttr>(index))
        term = constantOf(attr.getInt());
      else
        term = linear(cast<Value>(index));
      if (!term)
        return std::nullopt;
      if (term->terms.empty() && term->constant == 0 && term->shift == 0)
        continue;
      std::optional<int64_t> bytes = elementBytes(type);
      if (!bytes || !scale(*term, *bytes))
        return std::nullopt;
      total = addLinear(*total, *term, 1);
    }
    return total;
  }
  return std::nullopt;
}

std::optional<Linear> AddressModel::lowWord(Value vector) {
  auto type = dyn_cast<VectorType>(vector.getType());
  if (!type || type.getRank() != 1 || !type.getElementType().isInteger(32))
    return std::nullopt;
  for (int depth = 0; depth < 16; ++depth) {
    Operation *def = vector.getDefiningOp();
    if (auto insert = dyn_cast_or_null<LLVM::InsertElementOp>(def)) {
      std::optional<int64_t> at = constant(insert.getPosition());
      if (at == 0)
        return linear(insert.getValue());
      if (!at)
        return std::nullopt;
      vector = insert.getVector();
      continue;
    }
    // A 64-bit descriptor seen as two words: its start field is in the low
    // one, and no field above bit 32 is ever compared.
    if (auto bitcast = dyn_cast_or_null<LLVM::BitcastOp>(def);
        bitcast && bitcast.getArg().getType().isInteger(64))
      return linear(bitcast.getArg());
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<Linear> AddressModel::memrefAddress(Operation *def) {
  // The aligned pointer of a memref (field 1 of its LLVM descriptor).
  if (auto view = dyn_cast<memref::ViewOp>(def)) {
    std::optional<Linear> base = linear(view.getSource());
    std::optional<Linear> shift = linear(view.getByteShift());
    if (!base || !shift)
      return std::nullopt;
    return addLinear(*base, *shift, 1);
  }
  if (isa<memref::SubViewOp, memref::ReinterpretCastOp, memref::CastOp,
          memref::AssumeAlignmentOp, memref::TransposeOp, memref::ExpandShapeOp,
          memref::CollapseShapeOp>(def))
    return linear(def->getOperand(0));
  return std::nullopt;
}

std::optional<Linear> AddressModel::memrefOffset(Value memref) {
  // The element offset of a memref (field 2 of its LLVM descriptor).
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!type)
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (succeeded(type.getStridesAndOffset(strides, offset)) &&
      !ShapedType::isDynamic(offset))
    return constantOf(offset);
  Operation *def = memref.getDefiningOp();
  // A cast that only forgets the static offset keeps it, as do views that
  // only permute or regroup dimensions (Mosaic's transposed K tile).
  if (isa_and_nonnull<memref::CastOp, memref::AssumeAlignmentOp,
                      memref::TransposeOp, memref::ExpandShapeOp,
                      memref::CollapseShapeOp>(def))
    return memrefOffset(def->getOperand(0));
  if (auto sub = dyn_cast_or_null<memref::SubViewOp>(def)) {
    SmallVector<int64_t> srcStrides;
    int64_t srcOffset;
    if (failed(sub.getSourceType().getStridesAndOffset(srcStrides, srcOffset)))
      return std::nullopt;
    std::optional<Linear> total = memrefOffset(sub.getSource());
    for (auto [ofr, stride] : llvm::zip(sub.getMixedOffsets(), srcStrides)) {
      if (!total || ShapedType::isDynamic(stride))
        return std::nullopt;
      std::optional<Linear> term =
          isa<Attribute>(ofr)
              ? constantOf(cast<IntegerAttr>(cast<Attribute>(ofr)).getInt())
              : linear(cast<Value>(ofr));
      if (!term || !scale(*term, stride))
        return std::nullopt;
      total = addLinear(*total, *term, 1);
    }
    return total;
  }
  if (auto rc = dyn_cast_or_null<memref::ReinterpretCastOp>(def)) {
    OpFoldResult ofr = rc.getMixedOffsets().front();
    if (isa<Attribute>(ofr))
      return constantOf(cast<IntegerAttr>(cast<Attribute>(ofr)).getInt());
    return linear(cast<Value>(ofr));
  }
  return std::nullopt;
}

std::optional<Linear> AddressModel::extractedField(LLVM::ExtractValueOp op) {
  ArrayRef<int64_t> position = op.getPosition();
  if (position.size() != 1)
    return std::nullopt;
  // Through the insertvalue chain that built the struct, to the value put
  // at this position, or to the memref a conversion bridge stands for.
  Value container = op.getContainer();
  for (int depth = 0; depth < 64; ++depth) {
    Operation *def = container.getDefiningOp();
    if (auto insert = dyn_cast_or_null<LLVM::InsertValueOp>(def)) {
      if (insert.getPosition() == position)
        return linear(insert.getValue());
      container = insert.getContainer();
      continue;
    }
    if (auto bridge = dyn_cast_or_null<UnrealizedConversionCastOp>(def);
        bridge && bridge->getNumOperands() == 1 &&
        isa<MemRefType>(bridge->getOperand(0).getType())) {
      Value memref = bridge->getOperand(0);
      if (position[0] == kAlignedPtrField)
        return linear(memref);
      if (position[0] == kOffsetField)
        return memrefOffset(memref);
    }
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<Linear> AddressModel::memrefStart(Value memref) {
  // The aligned pointer plus the memref's offset (a subview's), in bytes,
  // as the lowering's buffer pointer computes it.
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!type || type.getElementTypeBitWidth() % 8 != 0)
    return std::nullopt;
  std::optional<Linear> l = linear(memref);
  std::optional<Linear> offset = memrefOffset(memref);
  if (!l || !offset || !scale(*offset, type.getElementTypeBitWidth() / 8))
    return std::nullopt;
  return addLinear(*l, *offset, 1);
}

std::optional<int64_t> AddressModel::memrefBytesAt(Value address) {
  std::optional<Linear> at = linear(address);
  if (!at)
    return std::nullopt;
  // Back through the pointer arithmetic to a memref descriptor bridge's
  // aligned pointer; the address must be exactly that memref's start.
  llvm::SmallVector<Value> work{address};
  llvm::DenseSet<Value> seen;
  while (!work.empty() && seen.size() < 32) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    Operation *def = v.getDefiningOp();
    if (!def)
      continue;
    auto extract = dyn_cast<LLVM::ExtractValueOp>(def);
    if (!extract) {
      if (isa<LLVM::IntToPtrOp, LLVM::PtrToIntOp, LLVM::AddOp, arith::AddIOp,
              LLVM::GEPOp, LLVM::BitcastOp, LLVM::AddrSpaceCastOp>(def))
        work.append(def->operand_begin(), def->operand_end());
      continue;
    }
    auto bridge =
        extract.getContainer().getDefiningOp<UnrealizedConversionCastOp>();
    if (extract.getPosition() != ArrayRef<int64_t>{kAlignedPtrField} ||
        !bridge || bridge->getNumOperands() != 1)
      continue;
    auto type = dyn_cast<MemRefType>(bridge->getOperand(0).getType());
    if (!type || !type.hasStaticShape() ||
        type.getElementTypeBitWidth() % 8 != 0)
      continue;
    int64_t elementBytes = type.getElementTypeBitWidth() / 8;
    std::optional<Linear> start = memrefStart(bridge->getOperand(0));
    std::optional<Linear> diff =
        start ? addLinear(*at, *start, -1) : std::nullopt;
    int64_t bytes;
    if (diff && diff->terms.empty() && diff->constant == 0 &&
        checkedMul(type.getNumElements(), elementBytes, bytes))
      return bytes;
  }
  return std::nullopt;
}

std::optional<std::pair<int64_t, int64_t>> AddressModel::range(Value v,
                                                               int depth) {
  using Range = std::pair<int64_t, int64_t>;
  if (std::optional<int64_t> c = constant(v))
    return Range{*c, *c};
  Operation *def = v.getDefiningOp();
  if (!def || depth > 16)
    return std::nullopt;
  if (v.getType().isInteger(1))
    return Range{0, 1};
  constexpr int64_t kLimit = int64_t(1) << 40;
  auto sane = [&](Range r) -> std::optional<Range> {
    if (r.first > r.second || r.first < -kLimit || r.second > kLimit)
      return std::nullopt;
    return r;
  };
  auto of = [&](unsigned i) { return range(def->getOperand(i), depth + 1); };
  if (isa<NVVM::ThreadIdXOp, NVVM::ThreadIdYOp, NVVM::ThreadIdZOp,
          NVVM::LaneIdOp>(def))
    return Range{0, 1023};
  if (isa<LLVM::ZExtOp, arith::ExtUIOp>(def)) {
    std::optional<Range> r = of(0);
    return r && r->first >= 0 ? r : std::nullopt;
  }
  if (isa<LLVM::SExtOp, arith::ExtSIOp, arith::IndexCastOp>(def))
    return of(0);
  if (isa<arith::AndIOp, LLVM::AndOp>(def)) {
    for (unsigned i = 0; i < 2; ++i)
      if (std::optional<int64_t> c = constant(def->getOperand(i));
          c && *c >= 0) {
        std::optional<Range> other = of(1 - i);
        int64_t hi =
            other && other->first >= 0 ? std::min(other->second, *c) : *c;
        return Range{0, hi};
      }
    return std::nullopt;
  }
  if (isa<arith::OrIOp, LLVM::OrOp, arith::XOrIOp, LLVM::XOrOp>(def)) {
    std::optional<Range> a = of(0), b = of(1);
    if (!a || !b || a->first < 0 || b->first < 0)
      return std::nullopt;
    int64_t top = std::max(a->second, b->second);
    return Range{0, static_cast<int64_t>(llvm::NextPowerOf2(top)) - 1};
  }
  if (isa<arith::ShLIOp, LLVM::ShlOp, arith::ShRUIOp, LLVM::LShrOp>(def)) {
    std::optional<Range> a = of(0);
    std::optional<int64_t> c = constant(def->getOperand(1));
    if (!a || !c || *c < 0 || *c > 40 || a->first < 0)
      return std::nullopt;
    if (isa<arith::ShLIOp, LLVM::ShlOp>(def))
      return sane({a->first << *c, a->second << *c});
    return Range{a->first >> *c, a->second >> *c};
  }
  if (isa<arith::AddIOp, LLVM::AddOp, arith::SubIOp, LLVM::SubOp>(def)) {
    std::optional<Range> a = of(0), b = of(1);
    if (!a || !b)
      return std::nullopt;
    if (isa<arith::AddIOp, LLVM::AddOp>(def))
      return sane({a->first + b->first, a->second + b->second});
    return sane({a->first - b->second, a->second - b->first});
  }
  if (isa<arith::MulIOp, LLVM::MulOp>(def)) {
    std::optional<Range> a = of(0), b = of(1);
    if (!a || !b || a->first < 0 || b->first < 0 || a->second > kLimit ||
        b->second > kLimit || (b->second && a->second > kLimit / b->second))
      return std::nullopt;
    return Range{a->first * b->first, a->second * b->second};
  }
  if (isa<arith::RemUIOp, LLVM::URemOp>(def)) {
    std::optional<int64_t> c = constant(def->getOperand(1));
    return c && *c > 0 ? std::optional<Range>(Range{0, *c - 1}) : std::nullopt;
  }
  if (isa<arith::SelectOp, LLVM::SelectOp>(def)) {
    std::optional<Range> a = of(1), b = of(2);
    if (!a || !b)
      return std::nullopt;
    return Range{std::min(a->first, b->first), std::max(a->second, b->second)};
  }
  return std::nullopt;
}

std::optional<BoundedAddress> AddressModel::bounded(Value address, int depth) {
  Operation *def = address.getDefiningOp();
  auto gep = dyn_cast_or_null<LLVM::GEPOp>(def);
  if (depth < 16 &&
      isa_and_nonnull<LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(def))
    return bounded(def->getOperand(0), depth + 1);
  if (!gep || gep.getIndices().size() != 1 || depth >= 16) {
    std::optional<Linear> l = linear(address);
    if (!l || l->shift != 0)
      return std::nullopt;
    return BoundedAddress{*l, 0, 0};
  }
  Type element = gep.getElemType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  int64_t size = element.getIntOrFloatBitWidth() / 8;
  std::optional<BoundedAddress> base = bounded(gep.getBase(), depth + 1);
  if (!base)
    return std::nullopt;
  auto index = gep.getIndices()[0];
  if (auto attr = dyn_cast<IntegerAttr>(index)) {
    int64_t step = attr.getInt() * size;
    base->lo += step;
    base->hi += step;
    return base;
  }
  // An index of bit operations on thread indices is a range; any other, a
  // linear term.
  Value idx = cast<Value>(index);
  if (std::optional<std::pair<int64_t, int64_t>> r = range(idx, depth + 1)) {
    base->lo += r->first * size;
    base->hi += r->second * size;
    return base;
  }
  std::optional<Linear> l = linear(idx);
  if (!l || l->shift != 0 || !scale(*l, size))
    return std::nullopt;
  std::optional<Linear> sum = addLinear(base->base, *l, 1);
  if (!sum)
    return std::nullopt;
  base->base = *sum;
  return base;
}

std::optional<StagedAddress> AddressModel::barrier(Value base, Value index) {
  if (!index)
    return staged(base);
  // An nvgpu barrier group: 8 bytes per mbarrier.
  std::optional<Linear> b = linear(base), i = linear(index);
  if (!b || !i || !scale(*i, 8))
    return std::nullopt;
  return staged(addLinear(*b, *i, 1));
}

std::optional<StagedAddress> AddressModel::staged(Value v, bool descriptor) {
  return staged(linear(v), descriptor);
}

std::optional<StagedAddress> AddressModel::staged(std::optional<Linear> l,
                                                  bool descriptor) {
  if (!l)
    return std::nullopt;
  if (descriptor) {
    // The start-address field counts 16-byte units.
    if (l->shift >= 4)
      l->shift -= 4;
    else if (!scale(*l, int64_t(1) << (4 - l->shift)))
      return std::nullopt;
    else
      l->shift = 0;
  }
  if (l->shift != 0)
    return std::nullopt;
  StagedAddress out;
  out.rest.constant = l->constant;
  // The stage is the staged atom of the largest stride: an inner loop over
  // a stage's k-blocks (CuTe steps its descriptors by 32 bytes inside a
  // 16 KiB stage) moves within the stage, so it stays in the rest.
  Value stageAtom;
  for (auto &[atom, coeff] : l->terms) {
    std::optional<StageExpr> stage = stageOf(atom);
    if (stage && (!stageAtom || std::abs(coeff) > std::abs(out.stride))) {
      stageAtom = atom;
      out.index = atom;
      out.stage = *stage;
      out.stride = coeff;
    }
  }
  for (auto &[atom, coeff] : l->terms) {
    if (atom == stageAtom)
      continue;
    std::optional<StageExpr> stage = stageOf(atom);
    if (stage && *stage == out.stage) {
      out.stride += coeff;
      continue;
    }
    out.rest.terms[atom] = coeff;
  }
  return out;
}
