//===- Plumbing.cpp - how fragments move without being computed -----------===//

#include "Plumbing.h"
#include "nvwgmma/IR/NVWGMMAOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::nvwgmma;

namespace {

/// A local array LLVM promotes to registers: an llvm.alloca in the generic
/// or local address space whose every use, through GEPs, is the address of
/// a load or a store. Collects the addresses and the stored values.
bool promotable(LLVM::AllocaOp alloca, llvm::SmallVectorImpl<Value> &addresses,
                llvm::SmallVectorImpl<Value> &values) {
  unsigned space = alloca.getType().getAddressSpace();
  if (space != 0 && space != 5)
    return false;
  llvm::SmallVector<Value> work{alloca.getResult()};
  while (!work.empty()) {
    Value address = work.pop_back_val();
    addresses.push_back(address);
    for (OpOperand &use : address.getUses()) {
      Operation *user = use.getOwner();
      if (auto gep = dyn_cast<LLVM::GEPOp>(user);
          gep && use.getOperandNumber() == 0) {
        work.push_back(gep.getResult());
        continue;
      }
      // An integer round trip (CuTe's ptrtoint / inttoptr) is still the
      // address, as instcombine sees before SROA promotes the array.
      if (auto cast = dyn_cast<LLVM::PtrToIntOp>(user)) {
        if (!llvm::all_of(cast->getUsers(), [](Operation *u) {
              return isa<LLVM::IntToPtrOp>(u);
            }))
          return false;
        for (Operation *u : cast->getUsers())
          work.push_back(u->getResult(0));
        continue;
      }
      if (isa<LLVM::LoadOp>(user))
        continue;
      if (auto store = dyn_cast<LLVM::StoreOp>(user);
          store && store.getAddr() == address && store.getValue() != address) {
        values.push_back(store.getValue());
        continue;
      }
      return false;
    }
  }
  return true;
}

} // namespace

Plumbing::Plumbing(FunctionOpInterface fn) {
  fn->walk([&](LLVM::AllocaOp alloca) {
    llvm::SmallVector<Value> addresses, values;
    if (!promotable(alloca, addresses, values))
      return;
    Value array = alloca.getResult();
    for (Value a : addresses)
      arrays[a] = array;
    stored[array].append(values.begin(), values.end());
  });
}

Value Plumbing::arrayOf(Value address) const {
  return address ? arrays.lookup(address) : Value();
}

bool Plumbing::addresses(Operation *op) const {
  if (isa<LLVM::PtrToIntOp>(op))
    return static_cast<bool>(arrayOf(op->getOperand(0)));
  return op->getNumResults() == 1 && !isa<LLVM::AllocaOp>(op) &&
         static_cast<bool>(arrayOf(op->getResult(0)));
}

bool Plumbing::moves(Operation *op) const {
  if (isa<LLVM::InsertValueOp, LLVM::ExtractValueOp, LLVM::BitcastOp,
          LLVM::InsertElementOp, LLVM::ExtractElementOp, LLVM::ShuffleVectorOp,
          vector::BitCastOp, vector::ExtractOp, vector::InsertOp,
          vector::ExtractStridedSliceOp, vector::InsertStridedSliceOp,
          vector::ShuffleOp, vector::ShapeCastOp>(op))
    return true;
  if (auto load = dyn_cast<LLVM::LoadOp>(op))
    return static_cast<bool>(arrayOf(load.getAddr()));
  if (auto store = dyn_cast<LLVM::StoreOp>(op))
    return static_cast<bool>(arrayOf(store.getAddr()));
  // A wait that carries values returns the registers it was given.
  if (auto wait = dyn_cast<WaitGroupOp>(op))
    return !wait.getValues().empty();
  return false;
}

Value Plumbing::insertedValue(Operation *op) const {
  if (auto insert = dyn_cast<LLVM::InsertValueOp>(op))
    return insert.getValue();
  if (auto insert = dyn_cast<LLVM::InsertElementOp>(op))
    return insert.getValue();
  if (auto insert = dyn_cast<vector::InsertOp>(op))
    return insert.getValueToStore();
  if (auto insert = dyn_cast<vector::InsertStridedSliceOp>(op))
    return insert.getValueToStore();
  if (auto store = dyn_cast<LLVM::StoreOp>(op))
    return arrayOf(store.getAddr()) ? store.getValue() : Value();
  return Value();
}

void Plumbing::forEachMove(
    Operation *op, llvm::function_ref<void(Value to, Value from)> f) const {
  if (!moves(op))
    return;
  if (auto store = dyn_cast<LLVM::StoreOp>(op)) {
    f(arrayOf(store.getAddr()), store.getValue());
    return;
  }
  if (auto load = dyn_cast<LLVM::LoadOp>(op)) {
    f(load.getResult(), arrayOf(load.getAddr()));
    return;
  }
  if (auto wait = dyn_cast<WaitGroupOp>(op)) {
    for (auto [to, from] : llvm::zip(wait.getResults(), wait.getValues()))
      f(to, from);
    return;
  }
  // Positions are not data: an index operand moves no registers.
  Value to = op->getResult(0);
  if (auto e = dyn_cast<LLVM::ExtractElementOp>(op)) {
    f(to, e.getVector());
    return;
  }
  if (auto e = dyn_cast<LLVM::InsertElementOp>(op)) {
    f(to, e.getVector());
    f(to, e.getValue());
    return;
  }
  if (auto e = dyn_cast<vector::ExtractOp>(op)) {
    f(to, e.getSource());
    return;
  }
  if (auto e = dyn_cast<vector::InsertOp>(op)) {
    f(to, e.getDest());
    f(to, e.getValueToStore());
    return;
  }
  for (Value v : op->getOperands())
    f(to, v);
}

llvm::SmallVector<Value, 4> Plumbing::sourcesOf(Value v) const {
  llvm::SmallVector<Value, 4> out;
  if (auto it = stored.find(v); it != stored.end())
    out.append(it->second.begin(), it->second.end());
  Operation *def = v.getDefiningOp();
  if (!def || isa<LLVM::StoreOp>(def))
    return out;
  forEachMove(def, [&](Value to, Value from) {
    if (to == v)
      out.push_back(from);
  });
  return out;
}
