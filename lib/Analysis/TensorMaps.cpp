//===- TensorMaps.cpp - what a TMA tensor map says about its box ----------===//

#include "TensorMaps.h"

#include "nvwgmma/PTX/ParsePtx.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::nvwgmma;

namespace {

/// Bytes per element of a tensor map's element-type code (CUtensorMap's
/// data types, as tensormap.replace.tile.elemtype numbers them).
std::optional<int64_t> elementBytes(int64_t code) {
  static constexpr int64_t bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  if (code < 0 || code >= static_cast<int64_t>(std::size(bytes)))
    return std::nullopt;
  return bytes[code];
}

bool sameAddress(const std::optional<Linear> &a,
                 const std::optional<Linear> &b) {
  if (!a || !b || a->constant != b->constant || a->shift != b->shift ||
      a->terms.size() != b->terms.size())
    return false;
  return llvm::all_of(a->terms, [&](const auto &t) {
    return b->terms.lookup(t.first) == t.second;
  });
}

/// The one PTX statement of an inline asm, if it has exactly one.
std::optional<PtxStatement> single(LLVM::InlineAsmOp op) {
  llvm::SmallVector<PtxStatement> all = splitPtxStatements(op.getAsmString());
  if (all.size() != 1)
    return std::nullopt;
  return all.front();
}

/// "[ $0 + 0 ]" -> "$0".
llvm::StringRef addressToken(llvm::StringRef t) {
  t = t.trim().trim("[]").trim();
  return t.split('+').first.trim();
}

/// The value a map is passed as, through casts that do not change it.
Value mapSource(Value v) {
  while (v) {
    Operation *def = v.getDefiningOp();
    if (auto cast = dyn_cast_or_null<UnrealizedConversionCastOp>(def);
        cast && cast.getNumOperands() == 1)
      v = cast.getOperand(0);
    else if (isa_and_nonnull<LLVM::BitcastOp, LLVM::AddrSpaceCastOp>(def))
      v = def->getOperand(0);
    else
      break;
  }
  return v;
}

/// The runtime wrapper upstream's nvgpu-to-nvvm lowering calls for
/// nvgpu.tma.create.descriptor: (rank, memref descriptor, element type,
/// interleave, swizzle, L2 promotion, OOB fill, box dimensions array).
constexpr llvm::StringLiteral kEncodeTiled = "mgpuTensorMapEncodeTiledMemref";

} // namespace

void TensorMaps::learnHostMaps(FunctionOpInterface fn) {
  fn->walk([&](LLVM::CallOp call) {
    std::optional<StringRef> callee = call.getCallee();
    if (!callee || *callee != kEncodeTiled || call.getNumOperands() != 8 ||
        call.getNumResults() != 1)
      return;
    // The rank operand is read from the unranked memref at run time; the
    // box array holds one stored dimension per rank, from index 0.
    std::optional<int64_t> code = addresses.constant(call.getOperand(2));
    if (!code)
      return;
    constexpr int64_t kMaxRank = 5;
    SmallVector<int64_t, kMaxRank> box(kMaxRank, -1);
    Value array = call.getOperand(7);
    auto recordStores = [&](Value at, int64_t index) {
      for (Operation *user : at.getUsers())
        if (auto store = dyn_cast<LLVM::StoreOp>(user);
            store && store.getAddr() == at && index >= 0 && index < kMaxRank)
          if (std::optional<int64_t> d = addresses.constant(store.getValue()))
            box[index] = *d;
    };
    recordStores(array, 0);
    for (Operation *user : array.getUsers())
      if (auto gep = dyn_cast<LLVM::GEPOp>(user);
          gep && gep.getBase() == array && gep.getIndices().size() == 1)
        if (auto i = dyn_cast_if_present<IntegerAttr>(gep.getIndices()[0]))
          recordStores(gep.getResult(), i.getInt());
    int64_t rank = llvm::find(box, -1) - box.begin();
    if (std::optional<int64_t> r = addresses.constant(call.getOperand(0)))
      rank = *r;
    if (rank < 1 || rank > kMaxRank)
      return;
    box.resize(rank);
    std::optional<int64_t> bytes = elementBytes(*code);
    for (int64_t d : box)
      bytes =
          bytes && d > 0 ? std::optional<int64_t>(*bytes * d) : std::nullopt;
    if (bytes)
      encoded[call.getResult()] = *bytes;
  });
}

TensorMaps::TensorMaps(FunctionOpInterface fn, AddressModel &addresses)
    : addresses(addresses) {
  learnHostMaps(fn);
  // Each copy of a scratch map to global memory publishes what was
  // written into the scratch since its previous copy, in program order
  // (the writes may sit in a block one lane runs, the copy after it).
  llvm::DenseMap<Value, llvm::SmallVector<int64_t, 5>> boxes;
  llvm::DenseMap<Value, int64_t> elementType;
  llvm::DenseSet<Value> zeroed;
  auto isZero = [&](Value v) {
    // 0, or a vector built by inserting 0 into an undefined one.
    if (!v)
      return false;
    if (addresses.constant(v) == 0)
      return true;
    auto insert = v.getDefiningOp<LLVM::InsertElementOp>();
    return insert && addresses.constant(insert.getValue()) == 0 &&
           isa_and_nonnull<LLVM::UndefOp, LLVM::PoisonOp, LLVM::ZeroOp>(
               insert.getVector().getDefiningOp());
  };
  fn->walk([&](LLVM::InlineAsmOp asmOp) {
    std::optional<PtxStatement> s = single(asmOp);
    if (!s || s->operands.empty())
      return;
    PtxAsmOperands ops(asmOp.getConstraints(), asmOp.getOperands());
    if (s->mnemonic.starts_with("st.shared") && s->operands.size() == 2) {
      // A scratch cleared before its fields are written (Triton 3.9): a
      // field never replaced is 0, an element type of 1 byte.
      Value at = ops.operand(addressToken(s->operands[0]));
      if (at && isZero(ops.operand(s->operands[1])))
        if (std::optional<Linear> l = addresses.linear(at))
          for (auto &[atom, coeff] : l->terms)
            zeroed.insert(atom);
      return;
    }
    if (s->mnemonic.starts_with("tensormap.replace.tile.box_dim") &&
        s->operands.size() == 3) {
      Value scratch = ops.operand(addressToken(s->operands[0]));
      std::optional<int64_t> dim = PtxAsmOperands::literal(s->operands[1]);
      std::optional<int64_t> size = PtxAsmOperands::literal(s->operands[2]);
      if (!size)
        size = addresses.constant(ops.operand(s->operands[2]));
      if (!scratch || !dim || *dim < 0 || *dim > 4)
        return;
      auto &box = boxes[scratch];
      box.resize(std::max<size_t>(box.size(), *dim + 1), -1);
      box[*dim] = size ? *size : -1;
    } else if (s->mnemonic.starts_with("tensormap.replace.tile.elemtype") &&
               s->operands.size() == 2) {
      Value scratch = ops.operand(addressToken(s->operands[0]));
      std::optional<int64_t> code = PtxAsmOperands::literal(s->operands[1]);
      if (scratch && code)
        elementType[scratch] = *code;
    } else if (s->mnemonic.starts_with("tensormap.cp_fenceproxy") &&
               s->operands.size() >= 2) {
      Value global = ops.operand(addressToken(s->operands[0]));
      Value scratch = ops.operand(addressToken(s->operands[1]));
      auto box = boxes.find(scratch);
      auto type = elementType.find(scratch);
      std::optional<int64_t> code;
      if (type != elementType.end())
        code = type->second;
      else if (zeroed.contains(scratch))
        code = 0;
      if (!global || box == boxes.end() || !code)
        return;
      std::optional<int64_t> bytes = elementBytes(*code);
      for (int64_t d : box->second)
        bytes =
            bytes && d > 0 ? std::optional<int64_t>(*bytes * d) : std::nullopt;
      if (std::optional<Linear> at = addresses.linear(global); at && bytes)
        built.push_back({*at, *bytes});
      boxes.erase(scratch);
      elementType.erase(scratch);
    }
  });
}

std::optional<int64_t> TensorMaps::boxBytes(Value map) {
  if (!map)
    return std::nullopt;
  if (auto it = encoded.find(mapSource(map)); it != encoded.end())
    return it->second;
  if (built.empty())
    return std::nullopt;
  std::optional<Linear> at = addresses.linear(map);
  for (const auto &[address, bytes] : built)
    if (sameAddress(at, address))
      return bytes;
  return std::nullopt;
}
