//===- MmaAsyncPtx.cpp - PTX text of wgmma.mma_async(.sp) -----------------===//
//
// Operand order and spacing follow upstream NVVM's BasicPtxBuilder output
// (outputs, tied accumulators, A, B, scale-d, scale-a, scale-b, trans-a,
// trans-b; two spaces before the second immediate of each pair) so that
// FileCheck patterns written against upstream keep matching.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/PTX/PtxEmitter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::nvwgmma;

static std::string getOpcode(const MmaAsyncConfig &c) {
  std::string s = "wgmma.mma_async";
  if (c.sparse)
    s += ".sp";
  s += llvm::formatv(".sync.aligned.m{0}n{1}k{2}.{3}.{4}.{5}", c.m, c.n, c.k,
                     stringifyElemType(c.typeD), stringifyElemType(c.typeA),
                     stringifyElemType(c.typeB));
  if (c.typeA == ElemType::b1)
    s += ".and.popc";
  if (c.satfinite)
    s += ".satfinite";
  return s;
}

/// imm-scale-a/b: the enum's storage value is not the PTX value.
static int64_t immScale(ScaleIn s) { return s == ScaleIn::neg ? -1 : 1; }

PtxInstruction nvwgmma::buildMmaAsyncPtx(const MmaAsyncConfig &c) {
  // Only legal configurations get here: the family exists.
  InputFamily family = *getInputFamily(c.typeA, c.typeB);

  PtxEmitter e;
  int64_t numAcc = getAccumulatorRegisterCount(c.typeD, c.n);
  llvm::StringRef accConstraint = c.typeD == ElemType::f32 ? "=f" : "=r";
  std::vector<std::string> accRegs;
  for (int64_t i = 0; i < numAcc; ++i)
    accRegs.push_back(e.addOutput(accConstraint, "%d" + std::to_string(i),
                                  {PtxOperandSource::Accumulator, i}));
  for (int64_t i = 0; i < numAcc; ++i)
    e.addTiedInput(i, {PtxOperandSource::Accumulator, i});

  std::string a;
  if (c.aFromRegisters) {
    std::vector<std::string> regs;
    for (int64_t i = 0; i < 4; ++i)
      regs.push_back(e.addInput("r", "%a" + std::to_string(i),
                                {PtxOperandSource::AFragment, i}));
    a = "{" + llvm::join(regs, ", ") + "}";
  } else {
    a = e.addInput("l", "%descA", {PtxOperandSource::ADescriptor});
  }
  std::string b = e.addInput("l", "%descB", {PtxOperandSource::BDescriptor});
  std::string sparse;
  if (c.sparse) {
    std::string meta =
        e.addInput("r", "%spMeta", {PtxOperandSource::SparseMeta});
    sparse = meta + ", " + e.addImmediate(c.sparsitySelector) + ", ";
  }
  std::string scaleD =
      c.runtimeScaleD
          ? e.addInput("r", "%scaleD", {PtxOperandSource::ScaleDValue})
          : e.addImmediate(c.scaleD == ScaleD::one ? 1 : 0);

  std::string imms;
  if (canNegate(family)) {
    imms += ", " + e.addImmediate(immScale(c.scaleA));
    imms += ",  " + e.addImmediate(immScale(c.scaleB));
  }
  if (canTranspose(family)) {
    if (!c.aFromRegisters)
      imms += ", " + e.addImmediate(c.layoutA == Layout::col ? 1 : 0);
    imms += (c.aFromRegisters ? ", " : ",  ") +
            e.addImmediate(c.layoutB == Layout::row ? 1 : 0);
  }

  e.text() << "{\n.reg .pred p;\nsetp.ne.b32 p, " << scaleD << ", 0;\n"
           << getOpcode(c) << " {" << llvm::join(accRegs, ", ") << "}, " << a
           << ", " << b << ", " << sparse << "p" << imms << ";\n}\n";
  return std::move(e).finish();
}
