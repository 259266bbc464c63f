//===- InlineAsm.cpp - mma_async as llvm.inline_asm -----------------------===//
//
// Turns the value-free PtxInstruction of an mma_async into LLVM dialect ops:
// each operand source becomes an extract, a widening or a constant.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/PTX/InlineAsm.h"
#include "nvwgmma/PTX/PtxEmitter.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::nvwgmma;

/// Widens a 32-bit register of any type (i32, f32, vector<2xf16>, ...) to the
/// i32 the "r" constraint takes.
static Value asI32(RewriterBase &rewriter, Location loc, Value v) {
  Type i32 = rewriter.getI32Type();
  if (v.getType() == i32)
    return v;
  return LLVM::BitcastOp::create(rewriter, loc, i32, v);
}

template <typename OpT>
static Value materialize(RewriterBase &rewriter, OpT op,
                         const PtxOperandSource &src) {
  Location loc = op.getLoc();
  switch (src.kind) {
  case PtxOperandSource::Accumulator:
    return LLVM::ExtractValueOp::create(rewriter, loc, op.getAcc(), src.index);
  case PtxOperandSource::AFragment:
    return asI32(
        rewriter, loc,
        LLVM::ExtractValueOp::create(rewriter, loc, op.getA(), src.index));
  case PtxOperandSource::ADescriptor:
    return op.getA();
  case PtxOperandSource::BDescriptor:
    return op.getDescB();
  case PtxOperandSource::ScaleDValue:
    return LLVM::ZExtOp::create(rewriter, loc, rewriter.getI32Type(),
                                op.getScaleDValue());
  case PtxOperandSource::Immediate:
    return LLVM::ConstantOp::create(rewriter, loc, rewriter.getI32Type(),
                                    rewriter.getI32IntegerAttr(src.index));
  case PtxOperandSource::SparseMeta:
    if constexpr (std::is_same_v<OpT, MmaAsyncSpOp>)
      return op.getSpMeta();
    break;
  }
  // The emitter asks for sparsity metadata only for sparse configurations.
  return Value();
}

template <typename OpT>
static void lowerToInlineAsm(RewriterBase &rewriter, OpT op) {
  PtxInstruction ptx = buildMmaAsyncPtx(op.getConfig());
  SmallVector<Value> inputs;
  rewriter.setInsertionPoint(op);
  for (const PtxOperand &operand : ptx.operands)
    if (!operand.isOutput)
      inputs.push_back(materialize(rewriter, op, operand.source));
  auto asmDialect = LLVM::AsmDialectAttr::get(rewriter.getContext(),
                                              LLVM::AsmDialect::AD_ATT);
  auto inlineAsm = LLVM::InlineAsmOp::create(
      rewriter, op.getLoc(), op.getRes().getType(), inputs, ptx.asmText,
      ptx.getConstraints(), /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      asmDialect, /*operand_attrs=*/ArrayAttr());
  rewriter.replaceOp(op, inlineAsm.getResult(0));
}

void nvwgmma::lowerMmaAsyncToInlineAsm(RewriterBase &rewriter, MmaAsyncOp op) {
  lowerToInlineAsm(rewriter, op);
}

void nvwgmma::lowerMmaAsyncToInlineAsm(RewriterBase &rewriter,
                                       MmaAsyncSpOp op) {
  lowerToInlineAsm(rewriter, op);
}
