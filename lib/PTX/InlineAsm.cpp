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

void nvwgmma::lowerWaitGroupWithValues(RewriterBase &rewriter, WaitGroupOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  // Every register of every value, as the "f" (f32) or "r" (any other 32
  // bits, as i32) operand it is tied through.
  SmallVector<Value> inputs;
  SmallVector<Type> outputs;
  std::string outs, ins;
  auto add = [&](Value reg) {
    if (!reg.getType().isF32())
      reg = asI32(rewriter, loc, reg);
    outs += (outs.empty() ? "=" : ",=") +
            std::string(reg.getType().isF32() ? "f" : "r");
    ins += "," + std::to_string(inputs.size());
    inputs.push_back(reg);
    outputs.push_back(reg.getType());
  };
  for (Value v : op.getValues()) {
    if (auto st = dyn_cast<LLVM::LLVMStructType>(v.getType()))
      for (unsigned i = 0; i < st.getBody().size(); ++i)
        add(LLVM::ExtractValueOp::create(rewriter, loc, v, i));
    else
      add(v);
  }
  Type resultType =
      outputs.size() == 1
          ? outputs.front()
          : LLVM::LLVMStructType::getLiteral(rewriter.getContext(), outputs);
  auto asmDialect = LLVM::AsmDialectAttr::get(rewriter.getContext(),
                                              LLVM::AsmDialect::AD_ATT);
  auto wait = LLVM::InlineAsmOp::create(
      rewriter, loc, resultType, inputs,
      "wgmma.wait_group.sync.aligned " + std::to_string(op.getGroup()) + ";",
      outs + ins, /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None, asmDialect,
      /*operand_attrs=*/ArrayAttr());
  unsigned next = 0;
  auto take = [&](Type type) -> Value {
    Value reg = outputs.size() == 1
                    ? wait.getResult(0)
                    : LLVM::ExtractValueOp::create(rewriter, loc,
                                                   wait.getResult(0), next);
    ++next;
    return reg.getType() == type
               ? reg
               : LLVM::BitcastOp::create(rewriter, loc, type, reg);
  };
  SmallVector<Value> results;
  for (Value v : op.getValues()) {
    auto st = dyn_cast<LLVM::LLVMStructType>(v.getType());
    if (!st) {
      results.push_back(take(v.getType()));
      continue;
    }
    Value rebuilt = LLVM::UndefOp::create(rewriter, loc, st);
    for (auto [i, member] : llvm::enumerate(st.getBody()))
      rebuilt =
          LLVM::InsertValueOp::create(rewriter, loc, rebuilt, take(member), i);
    results.push_back(rebuilt);
  }
  rewriter.replaceOp(op, results);
}

void nvwgmma::lowerMmaAsyncToInlineAsm(RewriterBase &rewriter, MmaAsyncOp op) {
  lowerToInlineAsm(rewriter, op);
}

void nvwgmma::lowerMmaAsyncToInlineAsm(RewriterBase &rewriter,
                                       MmaAsyncSpOp op) {
  lowerToInlineAsm(rewriter, op);
}
