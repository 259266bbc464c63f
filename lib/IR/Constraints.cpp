//===- Constraints.cpp - the wgmma rule table -----------------------------===//
//
// Each branch carries the label of its rule in docs/Constraints.md. The
// lattice is what `ptxas -arch=sm_90a` (CUDA 13.0) accepts; where the PTX ISA
// text disagrees (int8/b1 N = 240, 256; sparse selectors) ptxas decides.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/IR/Constraints.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::nvwgmma;

namespace {

RuleViolation violation(llvm::StringRef label, const llvm::Twine &what) {
  return {label.str(), (what + " (" + label + ")").str()};
}

std::string typeToString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
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

static bool isLegalD(InputFamily family, ElemType d) {
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
  if (c.sparse && *family == InputFamily::B1)
    return violation("mma_async_sp_c1",
                     "b1 inputs have no sparse form, but got a sparse b1 op");
  int64_t k = getRequiredK(*family, c.sparse);
  if (c.k != k)
    return violation(c.sparse ? "mma_async_sp_c2" : "mma_async_c4",
                     llvm::formatv("k must be {0} for {1}{2} inputs, but got {3}",
                                   k, c.sparse ? "sparse " : "", fam, c.k));
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
    return violation("mma_async_c7",
                     llvm::formatv("typeD must be {0} for {1} inputs, but got {2}",
                                   legalDText(*family), fam,
                                   stringifyElemType(c.typeD)));
  bool canTranspose =
      *family == InputFamily::F16 || *family == InputFamily::BF16;
  if (!canTranspose && c.layoutA != Layout::row)
    return violation("mma_async_c12",
                     llvm::formatv("layout of A must be row (no transpose) for "
                                   "{0} inputs, but got col",
                                   fam));
  if (!canTranspose && c.layoutB != Layout::col)
    return violation("mma_async_c12",
                     llvm::formatv("layout of B must be col (no transpose) for "
                                   "{0} inputs, but got row",
                                   fam));
  if (c.aFromRegisters && c.layoutA != Layout::row)
    return violation("mma_async_c13", "layout of A must be row when A comes "
                                      "from registers (imm-trans-a needs a "
                                      "descriptor), but got col");
  bool canNegate = *family != InputFamily::Int8 && *family != InputFamily::B1;
  for (auto [name, s] : {std::pair{"A", c.scaleA}, {"B", c.scaleB}})
    if (!canNegate && s != ScaleIn::one)
      return violation("mma_async_c14",
                       llvm::formatv("scale of {0} must be one (no negation) "
                                     "for {1} inputs, but got neg",
                                     name, fam));
  if (c.satfinite && *family != InputFamily::Int8)
    return violation("mma_async_c15",
                     llvm::formatv("satfinite requires s8/u8 inputs, but got "
                                   "{0} inputs",
                                   fam));
  if (c.sparse) {
    bool twoSelectors = *family == InputFamily::F16 ||
                        *family == InputFamily::BF16 ||
                        *family == InputFamily::TF32;
    if (c.sparsitySelector != 0 && !(twoSelectors && c.sparsitySelector == 1))
      return violation(
          "mma_async_sp_c3",
          llvm::formatv("sparsity selector must be {0} for {1} inputs, but got "
                        "{2}",
                        twoSelectors ? "0 or 1" : "0", fam,
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
    bool ok = frag && !frag.isOpaque() && frag.getBody().size() == 4 &&
              llvm::all_of(frag.getBody(), [&](Type t) {
                return t == frag.getBody()[0] &&
                       isLegalAFragmentMember(c.typeA, t);
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
  llvm::StringRef member =
      c.typeD == ElemType::f32 ? "f32" : "i32";
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
    bool ok = c.typeD == ElemType::f32 ? t.isF32() : t.isInteger(32);
    if (!ok)
      return violation(
          "mma_async_c10",
          llvm::formatv("accumulator members must be {0} for a {1} "
                        "accumulator{2}, but got {3} at member {4}",
                        member, stringifyElemType(c.typeD),
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

std::optional<RuleViolation> nvwgmma::checkMmaAsync(const MmaAsyncConfig &c,
                                                    Type a, Type acc,
                                                    Type result) {
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

std::optional<RuleViolation> nvwgmma::checkWaitGroup(int64_t group) {
  if (group < 0)
    return violation("wait_group_c1",
                     llvm::formatv("group must be a non-negative 64-bit "
                                   "integer, but got {0}",
                                   group));
  return std::nullopt;
}
