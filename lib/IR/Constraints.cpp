//===- Constraints.cpp - the wgmma rule table -----------------------------===//
//
// Each branch carries the label of its rule in docs/Constraints.md. The
// lattice is what `ptxas -arch=sm_90a` (CUDA 13.0) accepts; where the PTX ISA
// text disagrees (int8/b1 N = 240, 256; sparse selectors) ptxas decides.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/IR/Constraints.h"
#include "nvwgmma/IR/NVWGMMAOps.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::nvwgmma;

namespace {

RuleViolation violation(llvm::StringRef label, const llvm::Twine &what) {
  return {label.str(), (what + " (" + label + ")").str()};
}

/// A type as diagnostics show it: in full when short, else a struct of
/// identical members as "!llvm.struct of 64 x f32" (an accumulator of n = 256
/// would otherwise print 128 members).
std::string typeToString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  auto st = dyn_cast<LLVM::LLVMStructType>(type);
  if (s.size() <= 80 || !st || st.isOpaque() || st.getBody().empty() ||
      !llvm::all_equal(st.getBody()))
    return s;
  s.clear();
  os << "!llvm.struct of " << st.getBody().size() << " x "
     << st.getBody().front();
  return s;
}

bool isFp8(ElemType t) { return t == ElemType::e4m3 || t == ElemType::e5m2; }
bool isInt8(ElemType t) { return t == ElemType::s8 || t == ElemType::u8; }
bool isInputType(ElemType t) {
  return t != ElemType::f32 && t != ElemType::s32;
}

} // namespace

std::optional<InputFamily> nvwgmma::getInputFamily(ElemType a, ElemType b) {
  if (!isInputType(a) || !isInputType(b))
    return std::nullopt;
  if (isFp8(a) && isFp8(b))
    return InputFamily::FP8;
  if (isInt8(a) && isInt8(b))
    return InputFamily::Int8;
  if (a != b)
    return std::nullopt;
  switch (a) {
  case ElemType::f16:
    return InputFamily::F16;
  case ElemType::bf16:
    return InputFamily::BF16;
  case ElemType::tf32:
    return InputFamily::TF32;
  case ElemType::b1:
    return InputFamily::B1;
  default:
    return std::nullopt;
  }
}

llvm::StringRef nvwgmma::getFamilyName(InputFamily family) {
  switch (family) {
  case InputFamily::F16:
    return "f16";
  case InputFamily::BF16:
    return "bf16";
  case InputFamily::TF32:
    return "tf32";
  case InputFamily::FP8:
    return "e4m3/e5m2";
  case InputFamily::Int8:
    return "s8/u8";
  case InputFamily::B1:
    return "b1";
  }
  return "unknown";
}

int64_t nvwgmma::getRequiredK(InputFamily family, bool sparse) {
  int64_t k = 0;
  switch (family) {
  case InputFamily::F16:
  case InputFamily::BF16:
    k = 16;
    break;
  case InputFamily::TF32:
    k = 8;
    break;
  case InputFamily::FP8:
  case InputFamily::Int8:
    k = 32;
    break;
  case InputFamily::B1:
    k = 256;
    break;
  }
  return sparse ? 2 * k : k;
}

bool nvwgmma::canTranspose(InputFamily family) {
  return family == InputFamily::F16 || family == InputFamily::BF16;
}

bool nvwgmma::canNegate(InputFamily family) {
  return family != InputFamily::Int8 && family != InputFamily::B1;
}

bool nvwgmma::canSaturate(InputFamily family) {
  return family == InputFamily::Int8;
}

int64_t nvwgmma::getNumSparsitySelectors(InputFamily family) {
  switch (family) {
  case InputFamily::F16:
  case InputFamily::BF16:
  case InputFamily::TF32:
    return 2;
  case InputFamily::FP8:
  case InputFamily::Int8:
    return 1;
  case InputFamily::B1:
    return 0;
  }
  return 0;
}

static bool hasCoarseNLattice(InputFamily family) {
  return family == InputFamily::Int8 || family == InputFamily::B1;
}

bool nvwgmma::isLegalN(InputFamily family, int64_t n) {
  if (n < 8 || n > 256 || n % 8 != 0)
    return false;
  if (!hasCoarseNLattice(family))
    return true;
  return n <= 32 || n % 16 == 0;
}

int64_t nvwgmma::getAccumulatorRegisterCount(ElemType typeD, int64_t n) {
  // 64 x n elements over 128 threads: n/2 per thread, packed in pairs for f16.
  return typeD == ElemType::f16 ? n / 4 : n / 2;
}

Type nvwgmma::getAccumulatorMemberType(MLIRContext *context, ElemType typeD) {
  if (typeD == ElemType::f32)
    return Float32Type::get(context);
  return IntegerType::get(context, 32);
}

bool nvwgmma::isLegalD(InputFamily family, ElemType d) {
  switch (family) {
  case InputFamily::F16:
  case InputFamily::FP8:
    return d == ElemType::f16 || d == ElemType::f32;
  case InputFamily::BF16:
  case InputFamily::TF32:
    return d == ElemType::f32;
  case InputFamily::Int8:
  case InputFamily::B1:
    return d == ElemType::s32;
  }
  return false;
}

static llvm::StringRef legalDText(InputFamily family) {
  switch (family) {
  case InputFamily::F16:
  case InputFamily::FP8:
    return "f16 or f32";
  case InputFamily::BF16:
  case InputFamily::TF32:
    return "f32";
  case InputFamily::Int8:
  case InputFamily::B1:
    return "s32";
  }
  return "";
}

std::optional<RuleViolation>
nvwgmma::checkMmaAsyncConfig(const MmaAsyncConfig &c) {
  if (c.m != 64)
    return violation("mma_async_c1",
                     llvm::formatv("m must be 64, but got {0}", c.m));
  for (auto [name, t] : {std::pair{"typeA", c.typeA}, {"typeB", c.typeB}})
    if (!isInputType(t))
      return violation(
          "mma_async_c2",
          llvm::formatv("{0} must be one of f16, bf16, tf32, e4m3, e5m2, s8, "
                        "u8, b1, but got {1}",
                        name, stringifyElemType(t)));
  std::optional<InputFamily> family = getInputFamily(c.typeA, c.typeB);
  if (!family)
    return violation(
        "mma_async_c3",
        llvm::formatv("typeA and typeB must be equal, both e4m3/e5m2 or both "
                      "s8/u8, but got {0} and {1}",
                      stringifyElemType(c.typeA), stringifyElemType(c.typeB)));
  llvm::StringRef fam = getFamilyName(*family);
  if (c.sparse && getNumSparsitySelectors(*family) == 0)
    return violation("mma_async_sp_c1",
                     llvm::formatv("inputs of a sparse op must not be b1 (b1 "
                                   "has no sparse form), but got {0}",
                                   fam));
  int64_t k = getRequiredK(*family, c.sparse);
  if (c.k != k)
    return violation(
        c.sparse ? "mma_async_sp_c2" : "mma_async_c4",
        llvm::formatv("k must be {0} for {1}{2} inputs, but got {3}", k,
                      c.sparse ? "sparse " : "", fam, c.k));
  if (!isLegalN(*family, c.n)) {
    if (hasCoarseNLattice(*family))
      return violation("mma_async_c6",
                       llvm::formatv("n must be 8, 16, 24, 32 or a multiple of "
                                     "16 in [48, 256] for {0} inputs, but got "
                                     "{1}",
                                     fam, c.n));
    return violation("mma_async_c5",
                     llvm::formatv("n must be a multiple of 8 in [8, 256] for "
                                   "{0} inputs, but got {1}",
                                   fam, c.n));
  }
  if (!isLegalD(*family, c.typeD))
    return violation(
        "mma_async_c7",
        llvm::formatv("typeD must be {0} for {1} inputs, but got {2}",
                      legalDText(*family), fam, stringifyElemType(c.typeD)));
  if (!canTranspose(*family) && c.layoutA != Layout::row)
    return violation("mma_async_c12",
                     llvm::formatv("layout of A must be row (no transpose) for "
                                   "{0} inputs, but got col",
                                   fam));
  if (!canTranspose(*family) && c.layoutB != Layout::col)
    return violation("mma_async_c12",
                     llvm::formatv("layout of B must be col (no transpose) for "
                                   "{0} inputs, but got row",
                                   fam));
  if (c.aFromRegisters && c.layoutA != Layout::row)
    return violation("mma_async_c13", "layout of A must be row when A comes "
                                      "from registers (imm-trans-a needs a "
                                      "descriptor), but got col");
  for (auto [name, s] : {std::pair{"A", c.scaleA}, {"B", c.scaleB}})
    if (!canNegate(*family) && s != ScaleIn::one)
      return violation("mma_async_c14",
                       llvm::formatv("scale of {0} must be one (no negation) "
                                     "for {1} inputs, but got neg",
                                     name, fam));
  if (c.satfinite && !canSaturate(*family))
    return violation("mma_async_c15",
                     llvm::formatv("inputs must be s8/u8 for satfinite, but "
                                   "got {0}",
                                   fam));
  if (c.sparse) {
    int64_t selectors = getNumSparsitySelectors(*family);
    if (c.sparsitySelector < 0 || c.sparsitySelector >= selectors)
      return violation(
          "mma_async_sp_c3",
          llvm::formatv("sparsity selector must be {0} for {1} inputs, but got "
                        "{2}",
                        selectors == 2 ? "0 or 1" : "0", fam,
                        c.sparsitySelector));
  }
  return std::nullopt;
}

/// A fragment member: i32, or the 32-bit type that packs atype naturally.
static bool isLegalAFragmentMember(ElemType typeA, Type member) {
  if (member.isInteger(32))
    return true;
  auto vec = dyn_cast<VectorType>(member);
  switch (typeA) {
  case ElemType::f16:
    return vec && vec.getShape() == ArrayRef<int64_t>{2} &&
           vec.getElementType().isF16();
  case ElemType::bf16:
    return vec && vec.getShape() == ArrayRef<int64_t>{2} &&
           vec.getElementType().isBF16();
  case ElemType::tf32:
    return member.isF32();
  case ElemType::e4m3:
  case ElemType::e5m2:
  case ElemType::s8:
  case ElemType::u8:
    return vec && vec.getShape() == ArrayRef<int64_t>{4} &&
           vec.getElementType().isInteger(8);
  default:
    return false;
  }
}

static llvm::StringRef aFragmentMemberText(ElemType typeA) {
  switch (typeA) {
  case ElemType::f16:
    return "i32 or vector<2xf16>";
  case ElemType::bf16:
    return "i32 or vector<2xbf16>";
  case ElemType::tf32:
    return "i32 or f32";
  case ElemType::e4m3:
  case ElemType::e5m2:
  case ElemType::s8:
  case ElemType::u8:
    return "i32 or vector<4xi8>";
  default:
    return "i32";
  }
}

std::optional<RuleViolation>
nvwgmma::checkMmaAsyncTypes(const MmaAsyncConfig &c, Type a, Type acc,
                            Type result) {
  if (c.aFromRegisters) {
    auto frag = dyn_cast<LLVM::LLVMStructType>(a);
    bool ok =
        frag && !frag.isOpaque() && frag.getBody().size() == 4 &&
        llvm::all_of(frag.getBody(), [&](Type t) {
          return t == frag.getBody()[0] && isLegalAFragmentMember(c.typeA, t);
        });
    if (!ok)
      return violation(
          "mma_async_c8",
          llvm::formatv("A must be an i64 descriptor or an !llvm.struct of 4 "
                        "identical members of {0} for {1} A, but got {2}",
                        aFragmentMemberText(c.typeA),
                        stringifyElemType(c.typeA), typeToString(a)));
  }
  int64_t count = getAccumulatorRegisterCount(c.typeD, c.n);
  bool packedF16 = c.typeD == ElemType::f16;
  Type member = getAccumulatorMemberType(acc.getContext(), c.typeD);
  auto accStruct = dyn_cast<LLVM::LLVMStructType>(acc);
  if (!accStruct || accStruct.isOpaque() ||
      (int64_t)accStruct.getBody().size() != count)
    return violation(
        "mma_async_c9",
        llvm::formatv("accumulator must be an !llvm.struct of {0} members "
                      "({1}n = {2}, {3} accumulator), but got {4}",
                      count, packedF16 ? "n/4 for " : "n/2 for ", c.n,
                      stringifyElemType(c.typeD), typeToString(acc)));
  for (auto [i, t] : llvm::enumerate(accStruct.getBody())) {
    if (t != member)
      return violation(
          "mma_async_c10",
          llvm::formatv("accumulator members must be {0} for a {1} "
                        "accumulator{2}, but got {3} at member {4}",
                        typeToString(member), stringifyElemType(c.typeD),
                        packedF16 ? " (two packed f16 each)" : "",
                        typeToString(t), i));
  }
  if (result != acc)
    return violation("mma_async_c11",
                     llvm::formatv("result type must equal the accumulator "
                                   "type {0}, but got {1}",
                                   typeToString(acc), typeToString(result)));
  return std::nullopt;
}

std::optional<RuleViolation>
nvwgmma::checkMmaAsync(const MmaAsyncConfig &c, Type a, Type acc, Type result) {
  if (auto v = checkMmaAsyncConfig(c))
    return v;
  return checkMmaAsyncTypes(c, a, acc, result);
}

unsigned nvwgmma::getRequiredPtxVersion(const MmaAsyncConfig &c) {
  bool mixedInt = isInt8(c.typeA) && isInt8(c.typeB) && c.typeA != c.typeB;
  if (mixedInt)
    return 84;
  return c.sparse ? 82 : 80;
}

unsigned nvwgmma::getRequiredPtxVersionOfOp(Operation *op) {
  if (std::optional<MmaAsyncConfig> c = getMmaAsyncConfig(op))
    return getRequiredPtxVersion(*c);
  return isa<NVWGMMADialect>(op->getDialect()) ? 80 : 0;
}

unsigned nvwgmma::getRequiredPtxVersion(Operation *root) {
  unsigned v = 0;
  root->walk(
      [&](Operation *op) { v = std::max(v, getRequiredPtxVersionOfOp(op)); });
  return v;
}

std::string nvwgmma::getPtxVersionText(unsigned version) {
  return std::to_string(version / 10) + "." + std::to_string(version % 10);
}

std::optional<RuleViolation>
nvwgmma::checkTarget(Operation *op, llvm::StringRef chip, unsigned ptxVersion) {
  unsigned need = getRequiredPtxVersionOfOp(op);
  if (need == 0)
    return std::nullopt;
  if (chip != getRequiredTarget())
    return violation("target_c1",
                     llvm::formatv("target must be {0} for '{1}', but got {2}",
                                   getRequiredTarget(), op->getName(), chip));
  if (ptxVersion != 0 && ptxVersion < need)
    return violation(
        "target_c2",
        llvm::formatv("PTX ISA version must be {0} or later for '{1}', but "
                      "got {2}",
                      getPtxVersionText(need), op->getName(),
                      getPtxVersionText(ptxVersion)));
  return std::nullopt;
}

std::optional<RuleViolation> nvwgmma::checkScaleDGiven(bool hasValue,
                                                       bool hasAttr) {
  if (hasValue != hasAttr)
    return std::nullopt;
  return violation("mma_async_c16",
                   llvm::formatv("scale-d must be given exactly once, as "
                                 "zero/one or as an i1 value, but got {0}",
                                 hasValue ? "both" : "neither"));
}

RuleViolation nvwgmma::unknownScaleDKeyword(llvm::StringRef keyword) {
  return violation("mma_async_c16",
                   "scale-d must be zero, one or an i1 value, but got '" +
                       keyword + "'");
}

RuleViolation nvwgmma::unknownEnumKeyword(llvm::StringRef group,
                                          llvm::StringRef keyword,
                                          llvm::StringRef choices) {
  return violation("mma_async_c18", group + " must be one of " + choices +
                                        ", but got '" + keyword + "'");
}

std::optional<RuleViolation> nvwgmma::checkOperandTypes(Operation *op) {
  bool sparse = isa<MmaAsyncSpOp>(op);
  if (!sparse && !isa<MmaAsyncOp>(op))
    return std::nullopt;
  // a, descB, acc, [spMeta], [scaleDValue]
  unsigned fixed = sparse ? 4 : 3;
  if (op->getNumOperands() < fixed || op->getNumOperands() > fixed + 1)
    return std::nullopt; // ODS reports the operand count.
  Type descB = op->getOperand(1).getType();
  if (!descB.isSignlessInteger(64))
    return violation("mma_async_c17",
                     "B must be an i64 shared-memory descriptor, but got " +
                         typeToString(descB));
  if (sparse && !op->getOperand(3).getType().isSignlessInteger(32))
    return violation("mma_async_sp_c4",
                     "sparsity metadata must be an i32, but got " +
                         typeToString(op->getOperand(3).getType()));
  if (op->getNumOperands() == fixed + 1 &&
      !op->getOperand(fixed).getType().isSignlessInteger(1))
    return violation("mma_async_c16",
                     "a runtime scale-d must be an i1 value, but got " +
                         typeToString(op->getOperand(fixed).getType()));
  return std::nullopt;
}

std::optional<RuleViolation> nvwgmma::checkPlacement(Operation *op) {
  // A detached op (built, not yet inserted) is judged once it is placed.
  Operation *parent = op->getParentOp();
  if (!parent || op->getParentOfType<FunctionOpInterface>())
    return std::nullopt;
  return violation("placement_c1",
                   llvm::formatv("nvwgmma ops must be inside a function body, "
                                 "but got this one in '{0}'",
                                 parent->getName()));
}

std::optional<RuleViolation> nvwgmma::checkOpRules(Operation *op) {
  // The op's own rules first: they say more than where it stands.
  std::optional<RuleViolation> own = checkOwnRules(op);
  return own ? own : checkPlacement(op);
}

std::optional<RuleViolation> nvwgmma::checkOwnRules(Operation *op) {
  if (auto wait = dyn_cast<WaitGroupOp>(op)) {
    if (auto v = checkWaitGroup(wait.getGroup()))
      return v;
    return checkWaitedValues(wait.getValues().getTypes());
  }
  auto check = [](auto mma) -> std::optional<RuleViolation> {
    if (auto v = checkScaleDGiven(static_cast<bool>(mma.getScaleDValue()),
                                  mma.getScaleDAttr() != nullptr))
      return v;
    return checkMmaAsync(mma.getConfig(), mma.getA().getType(),
                         mma.getAcc().getType(), mma.getRes().getType());
  };
  if (auto mma = dyn_cast<MmaAsyncOp>(op))
    return check(mma);
  if (auto mma = dyn_cast<MmaAsyncSpOp>(op))
    return check(mma);
  return std::nullopt;
}

bool nvwgmma::isRegister32(Type type) {
  if (type.isF32() || type.isSignlessInteger(32))
    return true;
  auto vec = dyn_cast<VectorType>(type);
  return vec && vec.getRank() == 1 && !vec.isScalable() &&
         vec.getNumElements() * vec.getElementTypeBitWidth() == 32;
}

std::optional<RuleViolation> nvwgmma::checkWaitedValues(TypeRange types) {
  for (auto [i, type] : llvm::enumerate(types)) {
    auto members = isa<LLVM::LLVMStructType>(type)
                       ? cast<LLVM::LLVMStructType>(type).getBody()
                       : ArrayRef<Type>(type);
    if (!members.empty() && llvm::all_of(members, isRegister32))
      continue;
    std::string found;
    llvm::raw_string_ostream os(found);
    os << type;
    return violation("wait_group_c2",
                     llvm::formatv("value {0} must be an accumulator or A "
                                   "fragment: a struct of 32-bit registers "
                                   "(f32, i32, vector<2xf16>, ...) or one, "
                                   "but got {1}",
                                   i, found));
  }
  return std::nullopt;
}

std::optional<RuleViolation> nvwgmma::checkWaitGroup(int64_t group) {
  if (group < 0)
    return violation("wait_group_c1",
                     llvm::formatv("group must be a non-negative 64-bit "
                                   "integer, but got {0}",
                                   group));
  return std::nullopt;
}
