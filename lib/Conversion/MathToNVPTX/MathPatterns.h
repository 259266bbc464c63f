//===- MathPatterns.h - nvwgmma-legalize-math's own rewrites ----*- C++ -*-===//
//
// Functions whose upstream expansion the GPU measured wrong (test/gpu/
// math_ops.py): written here in f32, from operations that are either
// selectable or approximated well upstream (exp, expm1, log, log1p, log2).
//
//===----------------------------------------------------------------------===//

#ifndef NVWGMMA_LIB_CONVERSION_MATHTONVPTX_MATHPATTERNS_H
#define NVWGMMA_LIB_CONVERSION_MATHTONVPTX_MATHPATTERNS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::nvwgmma {
/// sin, cos, tan, sinh, asinh, acosh, atanh, cbrt, atan, atan2, powf on scalar
/// f32 and fpowi on any scalar float.
void populateF32FunctionPatterns(RewritePatternSet &patterns);

/// An arith.constant of `type` holding `element`, splatted when `type` is a
/// vector (or other statically shaped type).
Value splatConstant(OpBuilder &builder, Location loc, Type type,
                    TypedAttr element);

/// base^e, e the lowest `bits` bits of the integer `exponent` read unsigned,
/// by squaring and branch-free selects (a constant exponent folds away in
/// LLVM); an integer or float base, scalar or vector. ipowi and fpowi.
Value powerBySquaring(OpBuilder &builder, Location loc, Value base,
                      Value exponent, unsigned bits);
} // namespace mlir::nvwgmma

#endif
