//===- NVWGMMAOps.cpp - nvwgmma operations --------------------------------===//
//
// Verifiers only translate the op into the rule table's terms; the rules and
// their messages live in Constraints.cpp.
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
    return parser.emitError(loc)
           << "scale-d must be zero, one or an i1 value, but got '" << keyword
           << "' (mma_async_c16)";
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
  if (!value)
    return parser.emitError(loc)
           << "'" << keyword << "' is not a valid " << AttrT::getMnemonic()
           << " keyword";
  attr = AttrT::get(parser.getContext(), *value);
  return success();
}

template <typename AttrT>
static void printEnumKeyword(OpAsmPrinter &printer, Operation *, AttrT attr) {
  printer << stringifyEnum(attr.getValue());
}

#define GET_OP_CLASSES
#include "nvwgmma/IR/NVWGMMAOps.cpp.inc"

static LogicalResult emitViolation(Operation *op,
                                   const std::optional<RuleViolation> &v) {
  if (!v)
    return success();
  return op->emitOpError() << v->message;
}

//===----------------------------------------------------------------------===//
// WaitGroupOp
//===----------------------------------------------------------------------===//

LogicalResult WaitGroupOp::verify() {
  return emitViolation(*this, checkWaitGroup(getGroup()));
}

//===----------------------------------------------------------------------===//
// MmaAsyncOp
//===----------------------------------------------------------------------===//

/// The fields both mma_async forms share.
template <typename OpT>
static MmaAsyncConfig getCommonConfig(OpT op) {
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

template <typename OpT>
static LogicalResult verifyMmaAsync(OpT op) {
  bool hasValue = static_cast<bool>(op.getScaleDValue());
  bool hasAttr = op.getScaleDAttr() != nullptr;
  if (hasValue == hasAttr)
    return op.emitOpError()
           << "scale-d must be given exactly once, as zero/one or as an i1 "
              "value, but got "
           << (hasValue ? "both" : "neither") << " (mma_async_c16)";
  return emitViolation(op, checkMmaAsync(op.getConfig(), op.getA().getType(),
                                         op.getAcc().getType(),
                                         op.getRes().getType()));
}

MmaAsyncConfig MmaAsyncOp::getConfig() { return getCommonConfig(*this); }

LogicalResult MmaAsyncOp::verify() { return verifyMmaAsync(*this); }

MmaAsyncConfig MmaAsyncSpOp::getConfig() {
  MmaAsyncConfig c = getCommonConfig(*this);
  c.sparse = true;
  c.sparsitySelector = getSpSelector();
  return c;
}

LogicalResult MmaAsyncSpOp::verify() { return verifyMmaAsync(*this); }
