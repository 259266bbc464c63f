//===- PtxEmitter.cpp - inline PTX text and operands ----------------------===//
//
// Operand bookkeeping of the emitter: `$N` numbering (outputs first, as
// LLVM counts them), constraint strings and the readable rendering.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/PTX/PtxEmitter.h"

#include "llvm/ADT/StringExtras.h"
#include <cassert>

using namespace mlir;
using namespace mlir::nvwgmma;

std::string PtxInstruction::getConstraints() const {
  std::string result;
  for (const PtxOperand &op : operands) {
    if (!result.empty())
      result += ',';
    result += op.constraint;
  }
  return result;
}

unsigned PtxInstruction::getNumOutputs() const {
  return llvm::count_if(operands,
                        [](const PtxOperand &o) { return o.isOutput; });
}

std::string PtxInstruction::getReadable() const {
  std::string out;
  llvm::StringRef rest = asmText;
  while (!rest.empty()) {
    size_t dollar = rest.find('$');
    out += rest.take_front(dollar).str();
    if (dollar == llvm::StringRef::npos)
      break;
    rest = rest.drop_front(dollar + 1);
    size_t digits = 0;
    while (digits < rest.size() && llvm::isDigit(rest[digits]))
      ++digits;
    unsigned index = 0;
    if (digits == 0 || rest.take_front(digits).getAsInteger(10, index) ||
        index >= operands.size()) {
      out += '$';
      continue;
    }
    out += operands[index].display;
    rest = rest.drop_front(digits);
  }
  return out;
}

std::string PtxEmitter::placeholder(size_t index) const {
  return "$" + std::to_string(index);
}

std::string PtxEmitter::addOutput(llvm::StringRef constraint,
                                  llvm::StringRef display,
                                  PtxOperandSource source) {
  // LLVM numbers outputs before inputs; a late output would renumber inputs
  // whose `$N` is already in the text.
  assert(!sawInput && "PtxEmitter: outputs must be added before inputs");
  inst.operands.push_back({true, constraint.str(), display.str(), source});
  return placeholder(inst.operands.size() - 1);
}

void PtxEmitter::addTiedInput(unsigned outputIndex, PtxOperandSource source) {
  sawInput = true;
  const PtxOperand &out = inst.operands[outputIndex];
  inst.operands.push_back(
      {false, std::to_string(outputIndex), out.display, source});
}

std::string PtxEmitter::addInput(llvm::StringRef constraint,
                                 llvm::StringRef display,
                                 PtxOperandSource source) {
  sawInput = true;
  inst.operands.push_back({false, constraint.str(), display.str(), source});
  return placeholder(inst.operands.size() - 1);
}

std::string PtxEmitter::addImmediate(int64_t value) {
  return addInput("n", std::to_string(value),
                  {PtxOperandSource::Immediate, value});
}

PtxInstruction PtxEmitter::finish() && {
  os.flush();
  return std::move(inst);
}
