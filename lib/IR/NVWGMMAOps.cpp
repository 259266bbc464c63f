//===- NVWGMMAOps.cpp - nvwgmma operations --------------------------------===//
//
// The custom syntax (bare PTX keywords, scale-d as keyword or value) and the
// op configurations. Verifiers only call the rule table: the rules and their
// messages live in Constraints.cpp.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/IR/NVWGMMAOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::nvwgmma;

//===----------------------------------------------------------------------===//
// scale-d: a constant keyword or an i1 SSA value
//===----------------------------------------------------------------------===//

static ParseResult
parseScaleD(OpAsmParser &parser,
            std::optional<OpAsmParser::UnresolvedOperand> &value,
            ScaleDAttr &attr) {
  OpAsmParser::UnresolvedOperand operand;
  OptionalParseResult hasOperand = parser.parseOptionalOperand(operand);
  if (hasOperand.has_value()) {
    if (failed(*hasOperand))
      return failure();
    value = operand;
    return success();
  }
  llvm::SMLoc loc = parser.getCurrentLocation();
  llvm::StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<ScaleD> scale = symbolizeScaleD(keyword);
  if (!scale)
    return parser.emitError(loc) << unknownScaleDKeyword(keyword).message;
  attr = ScaleDAttr::get(parser.getContext(), *scale);
  return success();
}

static void printScaleD(OpAsmPrinter &printer, Operation *, Value value,
                        ScaleDAttr attr) {
  if (value)
    printer << value;
  else if (attr)
    printer << stringifyScaleD(attr.getValue());
}

//===----------------------------------------------------------------------===//
// Enum attributes as bare PTX keywords (`f16`, `neg`, `col`)
//===----------------------------------------------------------------------===//

template <typename AttrT>
static ParseResult parseEnumKeyword(OpAsmParser &parser, AttrT &attr) {
  using EnumT = decltype(std::declval<AttrT>().getValue());
  llvm::SMLoc loc = parser.getCurrentLocation();
  llvm::StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<EnumT> value = symbolizeEnum<EnumT>(keyword);
  if (!value) {
    std::string choices;
    // Cases are numbered from 0 without gaps; stringify is empty past them.
    for (uint32_t i = 0;; ++i) {
      llvm::StringRef name = stringifyEnum(static_cast<EnumT>(i));
      if (name.empty())
        break;
      choices += (i ? ", " : "") + name.str();
    }
    return parser.emitError(loc)
           << unknownEnumKeyword(AttrT::getMnemonic(), keyword, choices)
                  .message;
  }
  attr = AttrT::get(parser.getContext(), *value);
  return success();
}

template <typename AttrT>
static void printEnumKeyword(OpAsmPrinter &printer, Operation *, AttrT attr) {
  printer << stringifyEnum(attr.getValue());
}

#define GET_OP_CLASSES
#include "nvwgmma/IR/NVWGMMAOps.cpp.inc"

/// Every verifier is the rule table's checkOpRules; Python asks the same
/// function for the label, so the CLI and Python report the same rule.
static LogicalResult verifyRules(Operation *op) {
  if (std::optional<RuleViolation> v = checkOpRules(op))
    return op->emitOpError() << v->message;
  return success();
}

LogicalResult WaitGroupOp::verify() { return verifyRules(*this); }

/// The values a wait takes come back with their own types.
LogicalResult WaitGroupOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location>,
                                            ValueRange operands, DictionaryAttr,
                                            OpaqueProperties, RegionRange,
                                            SmallVectorImpl<Type> &inferred) {
  llvm::append_range(inferred, operands.getTypes());
  return success();
}

/// The fields both mma_async forms share.
template <typename OpT> static MmaAsyncConfig getCommonConfig(OpT op) {
  MmaAsyncConfig c;
  ShapeAttr shape = op.getShape();
  c.m = shape.getM();
  c.n = shape.getN();
  c.k = shape.getK();
  c.typeA = op.getTypeA();
  c.typeB = op.getTypeB();
  c.typeD = op.getTypeD();
  c.aFromRegisters = op.isAFromRegisters();
  c.satfinite = op.getSatfinite();
  c.runtimeScaleD = static_cast<bool>(op.getScaleDValue());
  if (std::optional<ScaleD> s = op.getScaleD())
    c.scaleD = *s;
  c.scaleA = op.getScaleA();
  c.scaleB = op.getScaleB();
  c.layoutA = op.getLayoutA();
  c.layoutB = op.getLayoutB();
  return c;
}

MmaAsyncConfig MmaAsyncOp::getConfig() { return getCommonConfig(*this); }

LogicalResult MmaAsyncOp::verify() { return verifyRules(*this); }

MmaAsyncConfig MmaAsyncSpOp::getConfig() {
  MmaAsyncConfig c = getCommonConfig(*this);
  c.sparse = true;
  c.sparsitySelector = getSpSelector();
  return c;
}

LogicalResult MmaAsyncSpOp::verify() { return verifyRules(*this); }

std::optional<MmaAsyncConfig> nvwgmma::getMmaAsyncConfig(Operation *op) {
  if (auto mma = dyn_cast<MmaAsyncOp>(op))
    return mma.getConfig();
  if (auto mma = dyn_cast<MmaAsyncSpOp>(op))
    return mma.getConfig();
  return std::nullopt;
}
