//===- Dialects.cpp - C API of nvwgmma ------------------------------------===//
//
// Thin wrappers: every answer comes from the rule table, the attributes or
// the PTX emitter; nothing here decides anything itself.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma-c/Dialects.h"
#include "nvwgmma/IR/NVWGMMAOps.h"
#include "nvwgmma/PTX/PtxEmitter.h"
#include "nvwgmma/PTX/PtxProtocol.h"
#include "nvwgmma/Registration/Registration.h"
#include "nvwgmma/Transforms/Passes.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(NVWGMMA, nvwgmma,
                                      mlir::nvwgmma::NVWGMMADialect)

void nvwgmmaRegisterAllDialects(MlirDialectRegistry registry) {
  nvwgmma::registerAllDialects(*unwrap(registry));
}

void nvwgmmaRegisterAllPasses(void) { nvwgmma::registerAllPasses(); }

static void emit(const std::string &s, MlirStringCallback callback,
                 void *userData) {
  callback(mlirStringRefCreate(s.data(), s.size()), userData);
}

bool nvwgmmaGetPtx(MlirOperation op, bool inlineAsm,
                   MlirStringCallback callback, void *userData) {
  Operation *operation = unwrap(op);
  if (!isa<nvwgmma::NVWGMMADialect>(operation->getDialect()))
    return false;
  // The emitter assumes a legal op; never let bad IR reach it.
  if (failed(mlir::verify(operation, /*verifyRecursively=*/false)))
    return false;
  std::optional<nvwgmma::PtxInstruction> ptx = nvwgmma::buildPtx(operation);
  if (!ptx)
    return false;
  if (inlineAsm) {
    emit(ptx->asmText, callback, userData);
    emit(ptx->getConstraints(), callback, userData);
  } else {
    emit(ptx->getReadable(), callback, userData);
  }
  return true;
}

void nvwgmmaCheckPtx(MlirStringRef text, bool strict,
                     MlirStringCallback callback, void *userData) {
  nvwgmma::ptx::CheckOptions options;
  options.strict = strict;
  for (const nvwgmma::ptx::Finding &f :
       nvwgmma::ptx::checkPtx(unwrap(text), options)) {
    std::string s = std::string(nvwgmma::ptx::severityName(f.severity)) +
                    "\x1f" + f.function + "\x1f" + std::to_string(f.line) +
                    "\x1f" + f.label + "\x1f" + f.message;
    for (const auto &[line, what] : f.notes)
      s += "\x1e" + std::to_string(line) + "\x1f" + what;
    emit(s, callback, userData);
  }
}

unsigned nvwgmmaGetRequiredPtxVersion(MlirOperation op) {
  return nvwgmma::getRequiredPtxVersion(unwrap(op));
}

//===----------------------------------------------------------------------===//
// The lattice
//===----------------------------------------------------------------------===//

template <typename EnumT> static std::optional<EnumT> toEnum(uint32_t value) {
  // The generated enums are numbered from 0 without gaps.
  if (stringifyEnum(static_cast<EnumT>(value)).empty())
    return std::nullopt;
  return static_cast<EnumT>(value);
}

bool nvwgmmaGetFamilyInfo(uint32_t typeA, uint32_t typeB,
                          NvwgmmaFamilyInfo *info) {
  using namespace nvwgmma;
  std::optional<ElemType> a = toEnum<ElemType>(typeA);
  std::optional<ElemType> b = toEnum<ElemType>(typeB);
  if (!a || !b || !info)
    return false;
  std::optional<InputFamily> family = getInputFamily(*a, *b);
  if (!family)
    return false;
  info->name = getFamilyName(*family).data();
  info->k = getRequiredK(*family, /*sparse=*/false);
  info->numSparsitySelectors = getNumSparsitySelectors(*family);
  info->sparseK =
      info->numSparsitySelectors ? getRequiredK(*family, /*sparse=*/true) : 0;
  info->canTranspose = canTranspose(*family);
  info->canNegate = canNegate(*family);
  info->canSaturate = canSaturate(*family);
  info->legalNMask = 0;
  for (int64_t i = 0; i < 32; ++i)
    if (isLegalN(*family, 8 * (i + 1)))
      info->legalNMask |= 1u << i;
  info->legalDMask = 0;
  for (uint32_t t = 0; toEnum<ElemType>(t); ++t)
    if (isLegalD(*family, static_cast<ElemType>(t)))
      info->legalDMask |= 1u << t;
  return true;
}

int64_t nvwgmmaGetAccumulatorRegisterCount(uint32_t typeD, int64_t n) {
  std::optional<nvwgmma::ElemType> d = toEnum<nvwgmma::ElemType>(typeD);
  return d ? nvwgmma::getAccumulatorRegisterCount(*d, n) : 0;
}

MlirType nvwgmmaGetAccumulatorMemberType(MlirContext ctx, uint32_t typeD) {
  std::optional<nvwgmma::ElemType> d = toEnum<nvwgmma::ElemType>(typeD);
  if (!d)
    return MlirType{nullptr};
  return wrap(nvwgmma::getAccumulatorMemberType(unwrap(ctx), *d));
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

bool nvwgmmaAttributeIsAShape(MlirAttribute attr) {
  return isa<nvwgmma::ShapeAttr>(unwrap(attr));
}

MlirTypeID nvwgmmaShapeAttrGetTypeID(void) {
  return wrap(TypeID::get<nvwgmma::ShapeAttr>());
}

MlirAttribute nvwgmmaShapeAttrGet(MlirContext ctx, int64_t m, int64_t n,
                                  int64_t k) {
  return wrap(nvwgmma::ShapeAttr::get(unwrap(ctx), m, n, k));
}

int64_t nvwgmmaShapeAttrGetM(MlirAttribute attr) {
  return cast<nvwgmma::ShapeAttr>(unwrap(attr)).getM();
}
int64_t nvwgmmaShapeAttrGetN(MlirAttribute attr) {
  return cast<nvwgmma::ShapeAttr>(unwrap(attr)).getN();
}
int64_t nvwgmmaShapeAttrGetK(MlirAttribute attr) {
  return cast<nvwgmma::ShapeAttr>(unwrap(attr)).getK();
}

template <typename AttrT>
static MlirAttribute getEnumAttr(MlirContext ctx, uint32_t value) {
  using EnumT = decltype(std::declval<AttrT>().getValue());
  std::optional<EnumT> e = toEnum<EnumT>(value);
  if (!e)
    return MlirAttribute{nullptr};
  return wrap(AttrT::get(unwrap(ctx), *e));
}

MlirAttribute nvwgmmaElemTypeAttrGet(MlirContext ctx, uint32_t value) {
  return getEnumAttr<nvwgmma::ElemTypeAttr>(ctx, value);
}
MlirAttribute nvwgmmaScaleInAttrGet(MlirContext ctx, uint32_t value) {
  return getEnumAttr<nvwgmma::ScaleInAttr>(ctx, value);
}
MlirAttribute nvwgmmaScaleDAttrGet(MlirContext ctx, uint32_t value) {
  return getEnumAttr<nvwgmma::ScaleDAttr>(ctx, value);
}
MlirAttribute nvwgmmaLayoutAttrGet(MlirContext ctx, uint32_t value) {
  return getEnumAttr<nvwgmma::LayoutAttr>(ctx, value);
}

//===----------------------------------------------------------------------===//
// Rules
//===----------------------------------------------------------------------===//

/// The generated (ODS) checks alone, silently: the rule table reads the
/// op's attributes and may only see ops that have them.
static bool passesOdsChecks(Operation *op) {
  ScopedDiagnosticHandler silence(op->getContext(),
                                  [](Diagnostic &) { return success(); });
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case<nvwgmma::MmaAsyncOp, nvwgmma::MmaAsyncSpOp, nvwgmma::WaitGroupOp>(
          [](auto concrete) {
            return succeeded(concrete.verifyInvariantsImpl());
          })
      .Default([](Operation *) { return true; });
}

bool nvwgmmaCheckOpRules(MlirOperation op, MlirStringCallback callback,
                         void *userData) {
  Operation *operation = unwrap(op);
  std::optional<nvwgmma::RuleViolation> v =
      nvwgmma::checkOperandTypes(operation);
  if (!v && passesOdsChecks(operation))
    v = nvwgmma::checkOpRules(operation);
  if (!v)
    return false;
  emit(v->label, callback, userData);
  emit(v->message, callback, userData);
  return true;
}
