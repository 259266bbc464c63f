//===- ParsePtx.cpp - wgmma.mma_async read back from inline PTX -----------===//
//
// PTX's forms (PTX ISA 9.7.15.5.2), operands after the D list: A (a
// descriptor, or `{...}` registers), B, [sp-meta, sp-sel,] scale-d, then the
// immediates of the family: f16/bf16 imm-scale-a, imm-scale-b, [imm-trans-a
// when A is a descriptor,] imm-trans-b; tf32/fp8 imm-scale-a, imm-scale-b;
// int8 and b1 none. `$n` names an asm operand (outputs first); an "n"
// operand is an immediate whose value is the constant the op passes.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/PTX/ParsePtx.h"
#include "nvwgmma/PTX/PtxSource.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::nvwgmma;

SmallVector<PtxStatement> mlir::nvwgmma::splitPtxStatements(StringRef text) {
  ptx::Function body = ptx::parseBody(text);
  // parseBody's text is `text` with comments blanked, offset for offset:
  // hand out the same pieces of `text` itself, which outlives the body.
  StringRef copy = *body.storage;
  auto original = [&](StringRef piece) {
    return text.substr(piece.data() - copy.data(), piece.size());
  };
  SmallVector<PtxStatement> out;
  for (const ptx::Instruction &in : body.body) {
    StringRef m = in.mnemonic;
    if (m.starts_with("setp") || m.starts_with("bra") || m.starts_with("mov") ||
        m.starts_with("selp"))
      continue;
    PtxStatement s;
    s.mnemonic = original(m);
    for (StringRef op : in.operands)
      s.operands.push_back(original(op));
    out.push_back(s);
  }
  return out;
}

mlir::nvwgmma::PtxAsmOperands::PtxAsmOperands(StringRef text,
                                              ValueRange operands)
    : operands(operands) {
  SmallVector<StringRef> parts;
  text.split(parts, ',');
  for (StringRef c : parts) {
    c = c.trim();
    if (c.starts_with("~"))
      continue;
    constraints.push_back(c);
    if (c.starts_with("="))
      ++outputs;
  }
}

std::optional<unsigned> mlir::nvwgmma::PtxAsmOperands::index(StringRef token) {
  StringRef t = token.trim(" []{}");
  unsigned n;
  if (!t.consume_front("$") || t.getAsInteger(10, n))
    return std::nullopt;
  return n;
}

std::optional<int64_t> mlir::nvwgmma::PtxAsmOperands::literal(StringRef token) {
  int64_t n;
  if (token.trim().getAsInteger(0, n))
    return std::nullopt;
  return n;
}

Value mlir::nvwgmma::PtxAsmOperands::operand(unsigned n) const {
  if (n < outputs || n - outputs >= operands.size())
    return Value();
  return operands[n - outputs];
}

Value mlir::nvwgmma::PtxAsmOperands::operand(StringRef token) const {
  std::optional<unsigned> n = index(token);
  return n ? operand(*n) : Value();
}

std::optional<int64_t>
mlir::nvwgmma::PtxAsmOperands::immediate(StringRef token) const {
  if (std::optional<int64_t> n = literal(token))
    return n;
  std::optional<unsigned> i = index(token);
  Value v = i && constraint(*i) == "n" ? operand(*i) : Value();
  if (auto c = v ? v.getDefiningOp<LLVM::ConstantOp>() : LLVM::ConstantOp())
    if (auto attr = dyn_cast<IntegerAttr>(c.getValue()))
      return attr.getInt();
  return std::nullopt;
}

SmallVector<Value, 4> mlir::nvwgmma::PtxAsmOperands::tiedByOutput() const {
  SmallVector<Value, 4> tied(outputs);
  for (unsigned i = outputs; i < constraints.size(); ++i) {
    unsigned out;
    if (!constraints[i].getAsInteger(10, out) && out < outputs)
      tied[out] = operand(i);
  }
  return tied;
}

SmallVector<Value, 4> mlir::nvwgmma::PtxAsmOperands::tiedInputs() const {
  SmallVector<Value, 4> tied;
  for (unsigned i = outputs; i < constraints.size(); ++i)
    if (!constraints[i].empty() && llvm::all_of(constraints[i], llvm::isDigit))
      if (Value v = operand(i))
        tied.push_back(v);
  return tied;
}

std::optional<std::array<int64_t, 3>>
mlir::nvwgmma::parseWgmmaShape(StringRef token) {
  std::array<int64_t, 3> shape;
  size_t n = token.find('n'), k = token.find('k');
  if (!token.starts_with("m") || n == StringRef::npos || k == StringRef::npos ||
      k < n || token.substr(1, n - 1).getAsInteger(10, shape[0]) ||
      token.slice(n + 1, k).getAsInteger(10, shape[1]) ||
      token.substr(k + 1).getAsInteger(10, shape[2]))
    return std::nullopt;
  return shape;
}

namespace {

/// The register type a `{...}` list's first `$n` has: f32 for "f".
Type registerType(const PtxAsmOperands &ops, StringRef list, MLIRContext *ctx) {
  SmallVector<StringRef> regs;
  list.trim("{} ").split(regs, ',');
  std::optional<unsigned> i =
      regs.empty() ? std::nullopt : PtxAsmOperands::index(regs[0]);
  if (i && ops.constraint(*i).ends_with("f"))
    return Float32Type::get(ctx);
  return IntegerType::get(ctx, 32);
}

unsigned listSize(StringRef list) {
  SmallVector<StringRef> regs;
  list.trim("{} ").split(regs, ',');
  return regs.size();
}

} // namespace

std::optional<std::variant<AsmMmaAsync, RuleViolation>>
mlir::nvwgmma::parseMmaAsyncAsm(LLVM::InlineAsmOp op) {
  SmallVector<PtxStatement> statements = splitPtxStatements(op.getAsmString());
  auto it = llvm::find_if(statements, [](const PtxStatement &s) {
    return s.mnemonic.starts_with("wgmma.mma_async");
  });
  if (it == statements.end())
    return std::nullopt;
  const PtxStatement &s = *it;
  auto fail = [&](const llvm::Twine &what) {
    return RuleViolation{
        "asm_c1",
        llvm::formatv("'{0}' must be one of PTX's wgmma.mma_async forms, but "
                      "got {1} (asm_c1)",
                      s.mnemonic, what.str())
            .str()};
  };
  SmallVector<StringRef> parts;
  s.mnemonic.split(parts, '.');
  MmaAsyncConfig c;
  size_t i = 2;
  c.sparse = parts.size() > i && parts[i] == "sp";
  i += c.sparse ? 1 : 0;
  if (parts.size() < i + 6 || parts[i] != "sync" || parts[i + 1] != "aligned")
    return fail("a mnemonic without .sync.aligned.shape.dtype.atype.btype");
  std::optional<std::array<int64_t, 3>> shape = parseWgmmaShape(parts[i + 2]);
  if (!shape)
    return fail("the shape '" + parts[i + 2] + "'");
  c.m = (*shape)[0];
  c.n = (*shape)[1];
  c.k = (*shape)[2];
  SmallVector<StringRef> types;
  bool andPopc = false;
  for (StringRef part : ArrayRef<StringRef>(parts).drop_front(i + 3)) {
    if (part == "satfinite")
      c.satfinite = true;
    else if (part == "and" || part == "popc")
      andPopc |= part == "popc";
    else
      types.push_back(part);
  }
  if (types.size() != 3)
    return fail("types '" + llvm::join(types, ".") + "'");
  std::optional<ElemType> d = symbolizeElemType(types[0]),
                          a = symbolizeElemType(types[1]),
                          b = symbolizeElemType(types[2]);
  if (!d || !a || !b)
    return fail("types '" + llvm::join(types, ".") + "'");
  c.typeD = *d;
  c.typeA = *a;
  c.typeB = *b;
  if (c.typeA == ElemType::b1 && !andPopc)
    return fail("a b1 multiply without .and.popc, the only b1 operation "
                "ptxas accepts");
  // D, A, B, [meta, selector,] scale-d, immediates
  size_t fixed = c.sparse ? 6 : 4;
  if (s.operands.size() < fixed || !s.operands[0].starts_with("{"))
    return fail(llvm::Twine(s.operands.size()) + " operands");
  PtxAsmOperands ops(op.getConstraints(), op.getOperands());
  MLIRContext *ctx = op.getContext();
  c.aFromRegisters = s.operands[1].starts_with("{");
  if (c.sparse) {
    std::optional<int64_t> selector = ops.immediate(s.operands[4]);
    if (!selector)
      return fail("a sparsity selector that is not an immediate");
    c.sparsitySelector = *selector;
  }
  StringRef scaleD = s.operands[fixed - 1];
  std::optional<int64_t> scale = ops.immediate(scaleD);
  c.runtimeScaleD = !scale;
  c.scaleD = scale == 0 ? ScaleD::zero : ScaleD::one;
  SmallVector<int64_t> imms;
  for (StringRef token : ArrayRef<StringRef>(s.operands).drop_front(fixed)) {
    std::optional<int64_t> v = ops.immediate(token);
    if (!v)
      return fail("the immediate '" + token + "'");
    imms.push_back(*v);
  }
  if (std::optional<InputFamily> family = getInputFamily(c.typeA, c.typeB)) {
    size_t want = !canNegate(*family)      ? 0
                  : !canTranspose(*family) ? 2
                  : c.aFromRegisters       ? 3
                                           : 4;
    if (imms.size() != want)
      return fail(llvm::formatv("{0} immediates after scale-d where the {1} "
                                "form has {2}",
                                imms.size(), getFamilyName(*family), want)
                      .str());
    if (want >= 2) {
      c.scaleA = imms[0] == -1 ? ScaleIn::neg : ScaleIn::one;
      c.scaleB = imms[1] == -1 ? ScaleIn::neg : ScaleIn::one;
    }
    if (want == 4)
      c.layoutA = imms[2] ? Layout::col : Layout::row;
    if (want >= 3)
      c.layoutB = imms.back() ? Layout::row : Layout::col;
  }
  AsmMmaAsync out;
  out.config = c;
  SmallVector<Type> dMembers(listSize(s.operands[0]),
                             registerType(ops, s.operands[0], ctx));
  out.accType = LLVM::LLVMStructType::getLiteral(ctx, dMembers);
  if (c.aFromRegisters) {
    SmallVector<Type> aMembers(listSize(s.operands[1]),
                               registerType(ops, s.operands[1], ctx));
    out.aType = LLVM::LLVMStructType::getLiteral(ctx, aMembers);
  } else {
    out.aType = IntegerType::get(ctx, 64);
  }
  return out;
}
