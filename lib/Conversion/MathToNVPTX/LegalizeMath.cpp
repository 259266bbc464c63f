//===- LegalizeMath.cpp - math ops the NVPTX backend can select -----------===//
//
// llc's NVPTX backend has instructions for a few math functions (sqrt, fma,
// rounding, ex2.approx for f16/f32 exp2) and no library to call for the
// rest: `math.exp` reaching it aborts llc ("no libcall available for fexp"),
// and ops convert-math-to-llvm does not know (erf, clampf, isinf, ...) stop
// mlir-translate. Upstream's GPU lowering calls libdevice, which a kernel
// built here has no copy of. So, before convert-math-to-llvm:
//   - under fastmath<afn>, exp, exp2, log, log2, sin, cos and tanh on f32
//     (f16/bf16 through f32, vectors lane by lane) become the SFU's
//     approximate instructions, as CUDA's fast-math does;
//   - otherwise the transcendental functions become f32 code: upstream
//     MLIR's polynomial approximations where the GPU measured them right
//     (exp, expm1, log, log1p, log2, tanh, erf, erfc, asin, acos),
//     nvwgmma's own where it did not (MathPatterns.h); f16 and bf16 are
//     computed in f32 and rounded once, vectors lane by lane;
//   - on f64, where neither PTX nor the approximations have an answer, the
//     op is reported (math_c1) instead of crashing llc;
//   - ipowi, log10, sincos, isinf, isnormal and clampf, which
//     convert-math-to-llvm leaves alone, are expanded;
//   - inside a gpu.module, what is left (sqrt, floor, fma, ...) becomes
//     llvm.call_intrinsic, not the libdevice calls convert-gpu-to-nvvm
//     would make of it.
//
//===----------------------------------------------------------------------===//

#include "MathPatterns.h"
#include "nvwgmma/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>

namespace mlir {
namespace nvwgmma {
#define GEN_PASS_DEF_LEGALIZEMATHFORNVPTX
#include "nvwgmma/Conversion/Passes.h.inc"
} // namespace nvwgmma
} // namespace mlir

using namespace mlir;

namespace {

/// Ops that have no NVPTX instruction for some float type: rewritten here,
/// or reported when the type is f64.
bool isTranscendental(StringRef name) {
  return llvm::is_contained(
      {"math.acos",  "math.acosh",  "math.asin",  "math.asinh", "math.atan",
       "math.atan2", "math.atanh",  "math.cbrt",  "math.cos",   "math.cosh",
       "math.erf",   "math.erfc",   "math.exp",   "math.exp2",  "math.expm1",
       "math.log",   "math.log10",  "math.log1p", "math.log2",  "math.powf",
       "math.sin",   "math.sincos", "math.sinh",  "math.tan",   "math.tanh"},
      name);
}

/// Rewritten one lane at a time and in f32: the transcendental ops and
/// fpowi (whose squarings would round at every step in f16).
bool isComputedPerLaneInF32(StringRef name) {
  return isTranscendental(name) || name == "math.fpowi";
}

/// A scalar or a fixed 1-D vector: the types the rewrites here build
/// constants and lanes for. Ops on other shapes are left alone (or refused:
/// isRefused), never half rewritten.
bool isScalarOrLane(Type type) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.getRank() == 1 && !vector.isScalable();
  return !isa<ShapedType>(type);
}

/// The element types nvwgmma can compute `name` in, as a diagnostic lists
/// them, or "" when it takes any (ops it does not rewrite).
StringRef computableTypes(StringRef name) {
  if (name == "math.fpowi")
    return "f64, f32, f16 or bf16"; // squarings: any float llc can multiply
  return isTranscendental(name) ? "f32, f16 or bf16" : "";
}

/// Whether the operand type of `op` is one the pass rewrites: a scalar of
/// computableTypes, or a fixed 1-D vector of them. (On f64 neither PTX nor
/// the approximations have an answer; other shapes would need the vector
/// or tensor dialects to be lowered after this pass.)
bool isRefused(Operation *op) {
  StringRef types = computableTypes(op->getName().getStringRef());
  if (types.empty() || op->getNumOperands() == 0)
    return false;
  Type type = op->getOperand(0).getType();
  if (!isScalarOrLane(type))
    return true;
  Type elem = getElementTypeOrSelf(type);
  if (isa<Float16Type, BFloat16Type, Float32Type>(elem))
    return false;
  return !(elem.isF64() && types.starts_with("f64"));
}

Value f32Constant(PatternRewriter &rewriter, Location loc, double value) {
  return arith::ConstantOp::create(rewriter, loc,
                                   rewriter.getF32FloatAttr(float(value)));
}

Value callApprox(PatternRewriter &rewriter, Location loc, StringRef intrinsic,
                 Value x) {
  return LLVM::CallIntrinsicOp::create(rewriter, loc, rewriter.getF32Type(),
                                       rewriter.getStringAttr(intrinsic),
                                       ValueRange{x})
      .getResult(0);
}

/// `op` again, on other operands and result types (its attributes kept).
Operation *recreate(PatternRewriter &rewriter, Operation *op,
                    ValueRange operands, TypeRange types) {
  OperationState state(op->getLoc(), op->getName());
  state.addOperands(operands);
  state.addTypes(types);
  state.addAttributes(op->getAttrs());
  return rewriter.create(state);
}

/// An integer constant of `type`'s element type, splatted: `value`
/// truncated to its width (-1 is all ones).
Value intConstant(OpBuilder &builder, Location loc, Type type, int64_t value) {
  Type elem = getElementTypeOrSelf(type);
  return nvwgmma::splatConstant(
      builder, loc, type,
      builder.getIntegerAttr(elem, APInt(elem.getIntOrFloatBitWidth(), value,
                                         /*isSigned=*/true,
                                         /*implicitTrunc=*/true)));
}

/// Scalar exp, exp2, log, log2, sin, cos, tanh with fastmath<afn>: the SFU's
/// approximate instructions (ftz; tanh.approx has no ftz form), as nvcc's
/// --use_fast_math emits them.
struct ApproximateWithSFU : RewritePattern {
  ApproximateWithSFU(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/3, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    auto fastmath = dyn_cast<arith::ArithFastMathInterface>(op);
    if (!fastmath || !op->getDialect() ||
        op->getDialect()->getNamespace() != "math" ||
        op->getNumOperands() != 1 || op->getNumResults() != 1 ||
        !arith::bitEnumContainsAll(fastmath.getFastMathFlagsAttr().getValue(),
                                   arith::FastMathFlags::afn))
      return failure();
    Type type = op->getResult(0).getType();
    if (!isa<Float16Type, BFloat16Type, Float32Type>(type))
      return failure();
    StringRef name = op->getName().getStringRef();
    if (!llvm::is_contained({"math.exp", "math.exp2", "math.log", "math.log2",
                             "math.sin", "math.cos", "math.tanh"},
                            name))
      return failure();
    Location loc = op->getLoc();
    Value x = op->getOperand(0);
    if (!type.isF32())
      x = arith::ExtFOp::create(rewriter, loc, rewriter.getF32Type(), x);
    Value y;
    if (name == "math.exp")
      y = callApprox(
          rewriter, loc, "llvm.nvvm.ex2.approx.ftz.f",
          arith::MulFOp::create(rewriter, loc, x,
                                f32Constant(rewriter, loc, M_LOG2E)));
    else if (name == "math.exp2")
      y = callApprox(rewriter, loc, "llvm.nvvm.ex2.approx.ftz.f", x);
    else if (name == "math.log")
      y = arith::MulFOp::create(
          rewriter, loc,
          callApprox(rewriter, loc, "llvm.nvvm.lg2.approx.ftz.f", x),
          f32Constant(rewriter, loc, M_LN2));
    else if (name == "math.log2")
      y = callApprox(rewriter, loc, "llvm.nvvm.lg2.approx.ftz.f", x);
    else if (name == "math.sin")
      y = callApprox(rewriter, loc, "llvm.nvvm.sin.approx.ftz.f", x);
    else if (name == "math.cos")
      y = callApprox(rewriter, loc, "llvm.nvvm.cos.approx.ftz.f", x);
    else // llc selects tanh.approx.f32 for llvm.tanh under afn; no intrinsic
      y = LLVM::TanhOp::create(
          rewriter, loc, x,
          LLVM::FastmathFlagsAttr::get(rewriter.getContext(),
                                       LLVM::FastmathFlags::afn));
    if (!type.isF32())
      y = arith::TruncFOp::create(rewriter, loc, type, y);
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// A transcendental op on a 1-D vector, one lane at a time (LLVM's
/// extractelement / insertelement): upstream's approximations would build
/// vector dialect ops, and the SFU instructions are scalar.
struct ScalarizeVector : RewritePattern {
  ScalarizeVector(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/3, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isComputedPerLaneInF32(op->getName().getStringRef()) ||
        op->getNumResults() == 0)
      return failure();
    auto type = dyn_cast<VectorType>(op->getResult(0).getType());
    if (!type || type.getRank() != 1 || type.isScalable())
      return failure();
    Location loc = op->getLoc();
    SmallVector<Value> results;
    for (Value r : op->getResults())
      results.push_back(LLVM::PoisonOp::create(rewriter, loc, r.getType()));
    SmallVector<Type> laneTypes;
    for (Value r : op->getResults())
      laneTypes.push_back(cast<VectorType>(r.getType()).getElementType());
    for (int64_t lane = 0; lane < type.getNumElements(); ++lane) {
      Value index = LLVM::ConstantOp::create(rewriter, loc,
                                             rewriter.getI64IntegerAttr(lane));
      SmallVector<Value> operands;
      for (Value operand : op->getOperands())
        operands.push_back(
            LLVM::ExtractElementOp::create(rewriter, loc, operand, index));
      Operation *scalar = recreate(rewriter, op, operands, laneTypes);
      for (auto [i, r] : llvm::enumerate(scalar->getResults()))
        results[i] =
            LLVM::InsertElementOp::create(rewriter, loc, results[i], r, index);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// A transcendental op (or fpowi) on f16 or bf16: computed in f32 and
/// rounded once, so that intermediate steps neither overflow (sinh(11) in
/// f16) nor lose bits.
struct ComputeInF32 : RewritePattern {
  ComputeInF32(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/3, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isComputedPerLaneInF32(op->getName().getStringRef()) ||
        op->getNumResults() == 0 ||
        !isa<Float16Type, BFloat16Type>(op->getResult(0).getType()))
      return failure();
    Location loc = op->getLoc();
    Type f32 = rewriter.getF32Type();
    SmallVector<Value> operands;
    for (Value operand : op->getOperands())
      operands.push_back(
          isa<FloatType>(operand.getType())
              ? Value(arith::ExtFOp::create(rewriter, loc, f32, operand))
              : operand);
    Operation *wide = recreate(rewriter, op, operands,
                               SmallVector<Type>(op->getNumResults(), f32));
    SmallVector<Value> results;
    for (auto [narrow, r] : llvm::zip(op->getResults(), wide->getResults()))
      results.push_back(
          arith::TruncFOp::create(rewriter, loc, narrow.getType(), r));
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// log10(x) = log2(x) * log10(2): no upstream expansion has it.
struct ExpandLog10 : OpRewritePattern<math::Log10Op> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::Log10Op op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    Location loc = op.getLoc();
    Value log2 =
        math::Log2Op::create(rewriter, loc, op.getOperand(), op.getFastmath());
    Value factor = nvwgmma::splatConstant(
        rewriter, loc, type,
        rewriter.getFloatAttr(getElementTypeOrSelf(type), std::log10(2.0)));
    rewriter.replaceOpWithNewOp<arith::MulFOp>(op, log2, factor,
                                               op.getFastmath());
    return success();
  }
};

/// sincos is sin and cos.
struct ExpandSincos : OpRewritePattern<math::SincosOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::SincosOp op,
                                PatternRewriter &rewriter) const override {
    Value sin = math::SinOp::create(rewriter, op.getLoc(), op.getOperand(),
                                    op.getFastmath());
    Value cos = math::CosOp::create(rewriter, op.getLoc(), op.getOperand(),
                                    op.getFastmath());
    rewriter.replaceOp(op, {sin, cos});
    return success();
  }
};

/// isinf(x) = |x| == inf; isnormal(x) = smallest normal <= |x| < inf.
template <typename Op, bool normal>
struct ExpandClassify : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = op.getOperand().getType();
    auto elem = cast<FloatType>(getElementTypeOrSelf(type));
    auto constant = [&](const APFloat &value) {
      return nvwgmma::splatConstant(rewriter, loc, type,
                                    rewriter.getFloatAttr(elem, value));
    };
    Value abs = math::AbsFOp::create(rewriter, loc, op.getOperand());
    Value inf = constant(APFloat::getInf(elem.getFloatSemantics()));
    if (!normal) {
      rewriter.replaceOpWithNewOp<arith::CmpFOp>(op, arith::CmpFPredicate::OEQ,
                                                 abs, inf);
      return success();
    }
    Value low =
        constant(APFloat::getSmallestNormalized(elem.getFloatSemantics()));
    Value atLeast = arith::CmpFOp::create(rewriter, loc,
                                          arith::CmpFPredicate::OGE, abs, low);
    Value below = arith::CmpFOp::create(rewriter, loc,
                                        arith::CmpFPredicate::OLT, abs, inf);
    rewriter.replaceOpWithNewOp<arith::AndIOp>(op, atLeast, below);
    return success();
  }
};

/// ipowi(b, e) by squaring over every bit of e, branch-free (vectors too):
/// llvm has no integer power. A negative e gives 1 for b = 1, +-1 for
/// b = -1 and 0 otherwise, as math.ipowi's folder does.
struct ExpandIPowI : OpRewritePattern<math::IPowIOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::IPowIOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = op.getType();
    if (!isa<IntegerType>(getElementTypeOrSelf(type)))
      return failure(); // index: no width to square over
    unsigned width = getElementTypeOrSelf(type).getIntOrFloatBitWidth();
    auto constant = [&](int64_t value) {
      return intConstant(rewriter, loc, type, value);
    };
    Value base = op.getLhs(), power = op.getRhs();
    Value zero = constant(0), one = constant(1), minusOne = constant(-1);
    // The sign bit is left out: a negative power is the select below.
    Value result =
        nvwgmma::powerBySquaring(rewriter, loc, base, power, width - 1);
    Value odd = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(rewriter, loc, power, one), zero);
    Value negative = arith::SelectOp::create(
        rewriter, loc,
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, base,
                              one),
        one,
        arith::SelectOp::create(
            rewriter, loc,
            arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, base,
                                  minusOne),
            arith::SelectOp::create(rewriter, loc, odd, minusOne, one), zero));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(
        op,
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt, power,
                              zero),
        negative, result);
    return success();
  }
};

/// The llvm intrinsic of a math op llc selects directly, or "".
StringRef directIntrinsic(StringRef name) {
  return llvm::StringSwitch<StringRef>(name)
      .Case("math.absf", "llvm.fabs")
      .Case("math.ceil", "llvm.ceil")
      .Case("math.copysign", "llvm.copysign")
      .Case("math.exp2", "llvm.exp2")
      .Case("math.floor", "llvm.floor")
      .Case("math.fma", "llvm.fma")
      .Case("math.round", "llvm.round")
      .Case("math.roundeven", "llvm.roundeven")
      .Case("math.sqrt", "llvm.sqrt")
      .Case("math.trunc", "llvm.trunc")
      .Default("");
}

/// Inside a gpu.module, convert-gpu-to-nvvm turns these math ops (and their
/// llvm.intr twins) into calls of libdevice's __nv_* functions, which ptxas
/// then cannot resolve: there they become generic llvm.call_intrinsic ops,
/// which it leaves alone and llc selects (cvt.rmi, fma.rn, sqrt.rn, ...).
void callIntrinsicsInGpuModules(Operation *root) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (op->getNumResults() != 1 ||
        (directIntrinsic(op->getName().getStringRef()).empty() &&
         op->getName().getStringRef() != "math.rsqrt"))
      return;
    // Scalars and 1-D vectors only: what llvm.call_intrinsic can carry.
    if (!isScalarOrLane(op->getResult(0).getType()))
      return;
    for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
      if (p->getName().getStringRef() == "gpu.module") {
        ops.push_back(op);
        return;
      }
  });
  IRRewriter rewriter(root->getContext());
  for (Operation *op : ops) {
    rewriter.setInsertionPoint(op);
    Type type = op->getResult(0).getType();
    StringRef name = op->getName().getStringRef();
    auto call = LLVM::CallIntrinsicOp::create(
        rewriter, op->getLoc(), type,
        rewriter.getStringAttr(name == "math.rsqrt" ? StringRef("llvm.sqrt")
                                                    : directIntrinsic(name)),
        op->getOperands());
    Value result = call.getResult(0);
    if (name == "math.rsqrt")
      result = arith::DivFOp::create(
          rewriter, op->getLoc(),
          nvwgmma::splatConstant(
              rewriter, op->getLoc(), type,
              rewriter.getFloatAttr(getElementTypeOrSelf(type), 1.0)),
          result);
    rewriter.replaceOp(op, result);
  }
}

struct LegalizeMathPass
    : nvwgmma::impl::LegalizeMathForNVPTXBase<LegalizeMathPass> {
  void runOnOperation() override {
    // Refuse first: a partly rewritten op would be harder to read.
    WalkResult refused = getOperation()->walk([&](Operation *op) {
      if (!isRefused(op))
        return WalkResult::advance();
      std::string found;
      llvm::raw_string_ostream os(found);
      os << op->getOperand(0).getType();
      op->emitError() << "operand of '" << op->getName() << "' must be "
                      << computableTypes(op->getName().getStringRef())
                      << ", or a 1-D vector of them (nvwgmma computes it "
                         "in f32, lane by lane; PTX has no f64 instruction "
                         "for it), but got "
                      << found << " (" << "math_c1" << ")";
      return WalkResult::interrupt();
    });
    if (refused.wasInterrupted())
      return signalPassFailure();

    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns
        .add<ScalarizeVector, ComputeInF32, ApproximateWithSFU, ExpandLog10,
             ExpandSincos, ExpandIPowI, ExpandClassify<math::IsInfOp, false>,
             ExpandClassify<math::IsNormalOp, true>>(context);
    nvwgmma::populateF32FunctionPatterns(patterns);
    // cosh in terms of exp; exp2 stays (ex2.approx) and so do sqrt and
    // rounding.
    math::populateExpansionPatterns(patterns, {"cosh", "clampf"});
    auto approximated = [](StringRef name) {
      return llvm::is_contained(
          {"math.acos", "math.asin", "math.erf", "math.erfc", "math.exp",
           "math.expm1", "math.log", "math.log1p", "math.log2", "math.tanh"},
          name);
    };
    populateMathPolynomialApproximationPatterns(patterns, approximated);
    // Only the math ops and what their rewrites create: a module-wide driver
    // would also merge blocks that differ in constants, turning an inline
    // asm's immediate ('n') operand into a block argument.
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "math" &&
          llvm::all_of(op->getOperandTypes(), isScalarOrLane) &&
          llvm::all_of(op->getResultTypes(), isScalarOrLane))
        ops.push_back(op);
    });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    config.enableFolding(false);
    if (!ops.empty() &&
        failed(applyOpPatternsGreedily(ops, std::move(patterns), config)))
      return signalPassFailure();
    callIntrinsicsInGpuModules(getOperation());
  }
};
} // namespace

Value mlir::nvwgmma::splatConstant(OpBuilder &builder, Location loc, Type type,
                                   TypedAttr element) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    element = DenseElementsAttr::get(shaped, element);
  return arith::ConstantOp::create(builder, loc, type, element);
}

Value mlir::nvwgmma::powerBySquaring(OpBuilder &builder, Location loc,
                                     Value base, Value exponent,
                                     unsigned bits) {
  Type type = base.getType(), elem = getElementTypeOrSelf(type);
  bool isFloat = isa<FloatType>(elem);
  Type eType = exponent.getType();
  Value zero = intConstant(builder, loc, eType, 0);
  Value oneBit = intConstant(builder, loc, eType, 1);
  Value result = isFloat ? splatConstant(builder, loc, type,
                                         builder.getFloatAttr(elem, 1.0))
                         : intConstant(builder, loc, type, 1);
  auto multiply = [&](Value a, Value b) -> Value {
    if (isFloat)
      return arith::MulFOp::create(builder, loc, a, b);
    return arith::MulIOp::create(builder, loc, a, b);
  };
  Value square = base;
  for (unsigned bit = 0; bit < bits; ++bit) {
    Value shifted = arith::ShRUIOp::create(
        builder, loc, exponent, intConstant(builder, loc, eType, bit));
    Value set = arith::CmpIOp::create(
        builder, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(builder, loc, shifted, oneBit), zero);
    result = arith::SelectOp::create(builder, loc, set,
                                     multiply(result, square), result);
    if (bit + 1 < bits)
      square = multiply(square, square);
  }
  return result;
}
