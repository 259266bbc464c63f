//===- ProtocolEvents.cpp - what an op means to the wgmma protocol --------===//
//
// Four front-ends, one event each: nvwgmma ops, upstream nvvm and nvgpu
// ops, and llvm.inline_asm read by its PTX (operands by PtxAsmOperands; tied
// inputs are wgmma's accumulator and the registers Triton's wait_group hands
// back). Predicates (`@p`) are ignored: a predicated wait or copy is taken
// as executed, which is what the warpgroup's elected thread does.
//
//===----------------------------------------------------------------------===//

#include "ProtocolEvents.h"

#include "nvwgmma/IR/NVWGMMAOps.h"
#include "nvwgmma/PTX/ParsePtx.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::nvwgmma;

namespace {

/// The attribute a frontend puts on a tensor TMA load to say how many bytes
/// it brings (the box is in the tensor map, which the IR cannot see).
constexpr llvm::StringLiteral kTxBytesAttr = "nvwgmma.tx_bytes";

/// m64nNkK out of a wgmma mnemonic.
std::array<int64_t, 3> wgmmaShape(llvm::StringRef mnemonic) {
  for (llvm::StringRef part : llvm::split(mnemonic, '.'))
    if (std::optional<std::array<int64_t, 3>> shape = parseWgmmaShape(part))
      return *shape;
  return {0, 0, 0};
}

ProtocolEvent recogniseInlineAsm(LLVM::InlineAsmOp op);

ProtocolEvent recogniseOp(Operation *op) {
  ProtocolEvent e;
  if (isa<FenceOp, NVVM::WgmmaFenceAlignedOp>(op)) {
    e.kind = EventKind::Fence;
  } else if (isa<CommitGroupOp, NVVM::WgmmaGroupSyncAlignedOp>(op)) {
    e.kind = EventKind::Commit;
  } else if (auto wait = dyn_cast<WaitGroupOp>(op)) {
    e.kind = EventKind::WaitGroup;
    e.depth = static_cast<int64_t>(wait.getGroup());
  } else if (auto wait = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op)) {
    e.kind = EventKind::WaitGroup;
    e.depth = static_cast<int64_t>(wait.getGroup());
  } else if (isa<MmaAsyncOp, MmaAsyncSpOp>(op)) {
    auto add = [&](auto mma) {
      e.registers.push_back(mma.getAcc());
      if (mma.isAFromRegisters())
        e.registers.push_back(mma.getA());
      else
        e.descriptors.push_back(mma.getA());
      e.descriptors.push_back(mma.getDescB());
    };
    if (auto mma = dyn_cast<MmaAsyncOp>(op))
      add(mma);
    else
      add(cast<MmaAsyncSpOp>(op));
    MmaAsyncConfig c = *getMmaAsyncConfig(op);
    e.kind = EventKind::Mma;
    e.shape = {c.m, c.n, c.k};
  } else if (auto mma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op)) {
    e.kind = EventKind::Mma;
    e.registers.push_back(mma.getInouts());
    e.descriptors.append({mma.getDescriptorA(), mma.getDescriptorB()});
    NVVM::MMAShapeAttr shape = mma.getShape();
    e.shape = {shape.getM(), shape.getN(), shape.getK()};
  } else if (isa<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp,
                 NVVM::CpAsyncBulkGlobalToSharedClusterOp>(op)) {
    auto load = [&](auto tma) {
      e.kind = EventKind::TmaLoad;
      e.destination = tma.getDstMem();
      e.barrier = tma.getMbar();
      e.multicastMask = tma.getMulticastMask();
    };
    // A tensor load's bytes are in its tensor map, which the IR cannot see
    // (a frontend may say them in nvwgmma.tx_bytes); a bulk copy has a size.
    if (auto copy = dyn_cast<NVVM::CpAsyncBulkGlobalToSharedClusterOp>(op)) {
      load(copy);
      e.bytesValue = copy.getSize();
    } else {
      auto tensor = cast<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op);
      load(tensor);
      e.tensorMap = tensor.getTmaDescriptor();
      if (auto attr = op->getAttrOfType<IntegerAttr>(kTxBytesAttr))
        e.bytes = attr.getInt();
    }
  } else if (isa<NVVM::MBarrierArriveExpectTxOp, NVVM::MBarrierExpectTxOp>(
                 op)) {
    e.kind = EventKind::ExpectTx;
    e.barrier = op->getOperand(0);
    e.bytesValue = op->getOperand(1);
  } else if (auto wait = dyn_cast<NVVM::MBarrierTryWaitParityOp>(op)) {
    e.kind = EventKind::ParityWait;
    e.barrier = wait.getAddr();
    e.parity = wait.getPhase();
  } else if (isa<NVVM::MBarrierTryWaitOp, NVVM::MBarrierTestWaitOp>(op) &&
             op->getOperand(1).getType().isInteger(32)) {
    // A 32-bit operand is the phase parity (a 64-bit one, the state).
    e.kind = EventKind::ParityWait;
    e.barrier = op->getOperand(0);
    e.parity = op->getOperand(1);
    e.probe = op->getResult(0);
  } else if (isa<NVVM::MBarrierArriveOp, NVVM::MBarrierArriveNocompleteOp,
                 NVVM::MBarrierArriveDropOp,
                 NVVM::MBarrierArriveDropNocompleteOp>(op)) {
    e.kind = EventKind::Arrive;
    e.barrier = op->getOperand(0);
  } else if (auto fence = dyn_cast<NVVM::FenceProxyOp>(op)) {
    NVVM::ProxyKind kind = fence.getKind();
    if (kind == NVVM::ProxyKind::async || kind == NVVM::ProxyKind::async_shared)
      e.kind = EventKind::ProxyFence;
  } else if (isa<NVVM::Barrier0Op, NVVM::BarrierOp, gpu::BarrierOp>(op)) {
    e.kind = EventKind::ThreadBarrier;
  } else if (auto mma = dyn_cast<nvgpu::WarpgroupMmaOp>(op)) {
    e.kind = EventKind::Mma;
    e.registers.push_back(mma.getMatrixC());
    e.descriptors.append({mma.getDescriptorA(), mma.getDescriptorB()});
    e.fences = e.commits = true;
    if (std::optional<uint32_t> n = mma.getWaitGroup())
      e.waits = *n;
    VectorType frag = mma.getMatrixC().getType().getFragmented();
    e.shape = {frag.getDimSize(0), frag.getDimSize(1), 0};
  } else if (auto tma = dyn_cast<nvgpu::TmaAsyncLoadOp>(op)) {
    e.kind = EventKind::TmaLoad;
    e.destination = tma.getDst();
    e.barrier = tma.getBarriers();
    e.barrierIndex = tma.getMbarId();
    e.multicastMask = tma.getMulticastMask();
    // The box is in the tensor map's type: what one load brings.
    MemRefType box = tma.getTensorMapDescriptor().getType().getTensor();
    if (box.hasStaticShape() && box.getElementType().isIntOrFloat())
      e.bytes = box.getNumElements() *
                llvm::divideCeil(box.getElementTypeBitWidth(), 8);
  } else if (auto expect = dyn_cast<nvgpu::MBarrierArriveExpectTxOp>(op)) {
    e.kind = EventKind::ExpectTx;
    e.barrier = expect.getBarriers();
    e.barrierIndex = expect.getMbarId();
    e.bytesValue = expect.getTxcount();
  } else if (auto wait = dyn_cast<nvgpu::MBarrierTryWaitParityOp>(op)) {
    e.kind = EventKind::ParityWait;
    e.barrier = wait.getBarriers();
    e.barrierIndex = wait.getMbarId();
    e.parity = wait.getPhaseParity();
  } else if (auto arrive = dyn_cast<nvgpu::MBarrierArriveOp>(op)) {
    e.kind = EventKind::Arrive;
    e.barrier = arrive.getBarriers();
    e.barrierIndex = arrive.getMbarId();
  } else if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op)) {
    e = recogniseInlineAsm(asmOp);
  }
  return e;
}

/// The event of an inline asm: its first protocol instruction.
ProtocolEvent recogniseInlineAsm(LLVM::InlineAsmOp op) {
  PtxAsmOperands ops(op.getConstraints(), op.getOperands());
  ProtocolEvent e;
  for (const PtxStatement &s : splitPtxStatements(op.getAsmString())) {
    llvm::StringRef m = s.mnemonic;
    if (m.starts_with("wgmma.fence")) {
      e.kind = EventKind::Fence;
    } else if (m.starts_with("wgmma.commit_group")) {
      e.kind = EventKind::Commit;
    } else if (m.starts_with("wgmma.wait_group")) {
      std::optional<int64_t> n = s.operands.empty()
                                     ? std::nullopt
                                     : PtxAsmOperands::literal(s.operands[0]);
      if (!n)
        break;
      e.kind = EventKind::WaitGroup;
      e.depth = *n;
      e.passedThrough = ops.tiedByOutput();
    } else if (m.starts_with("wgmma.mma_async")) {
      // D-list, A (descriptor or register list), B descriptor, ...
      if (s.operands.size() < 3)
        break;
      e.kind = EventKind::Mma;
      e.shape = wgmmaShape(m);
      e.registers = ops.tiedInputs();
      llvm::StringRef a = s.operands[1];
      if (a.starts_with("{")) {
        llvm::SmallVector<llvm::StringRef> regs;
        a.trim("{} ").split(regs, ',');
        for (llvm::StringRef r : regs)
          if (Value v = ops.operand(r.trim()))
            e.registers.push_back(v);
      } else if (Value v = ops.operand(a)) {
        e.descriptors.push_back(v);
      }
      if (Value b = ops.operand(s.operands[2]))
        e.descriptors.push_back(b);
    } else if (m.starts_with("mbarrier")) {
      // [state or waitComplete,] [addr] (, parity or tx-count)
      auto addr = llvm::find_if(
          s.operands, [](llvm::StringRef t) { return t.starts_with("["); });
      if (addr == s.operands.end()) {
        e.kind = EventKind::Unrecognised;
        e.text = m.str();
        break;
      }
      llvm::StringRef after = addr + 1 == s.operands.end() ? "" : *(addr + 1);
      e.barrier = ops.operand(*addr);
      if (m.starts_with("mbarrier.try_wait.parity") ||
          m.starts_with("mbarrier.test_wait.parity")) {
        e.kind = EventKind::ParityWait;
        e.parity = ops.operand(after);
        // The predicate handed back as the asm's one i1 result: a probe.
        if (op.getNumResults() == 1 && op.getResult(0).getType().isInteger(1))
          e.probe = op.getResult(0);
      } else if (m.starts_with("mbarrier.arrive.expect_tx") ||
                 m.starts_with("mbarrier.expect_tx")) {
        e.kind = EventKind::ExpectTx;
        e.bytes = PtxAsmOperands::literal(after);
        if (!e.bytes)
          e.bytesValue = ops.operand(after);
      } else if (m.starts_with("mbarrier.arrive")) {
        e.kind = EventKind::Arrive;
      } else if (m.starts_with("mbarrier.init") ||
                 m.starts_with("mbarrier.inval")) {
        e.barrier = Value();
        continue; // setup: nothing the rules read
      } else {
        e.barrier = Value();
        e.kind = EventKind::Unrecognised;
        e.text = m.str();
      }
    } else if (m.starts_with("cp.async.bulk") && m.contains(".global") &&
               m.contains("mbarrier::complete_tx")) {
      // tensor: [dst], [tmap, {coords}], [mbar] (, mask)
      // plain:  [dst], [src], size, [mbar] (, mask)
      if (s.operands.size() < 3)
        break;
      e.kind = EventKind::TmaLoad;
      e.destination = ops.operand(s.operands[0]);
      bool tensor = m.starts_with("cp.async.bulk.tensor");
      if (tensor)
        e.tensorMap = ops.operand(s.operands[1].ltrim("[").split(',').first);
      llvm::StringRef bar =
          tensor ? s.operands[2]
                 : (s.operands.size() > 3 ? s.operands[3] : s.operands[2]);
      e.barrier = ops.operand(bar);
      if (!tensor && s.operands.size() > 3) {
        e.bytes = PtxAsmOperands::literal(s.operands[2]);
        if (!e.bytes)
          e.bytesValue = ops.operand(s.operands[2]);
      }
      if (m.contains("multicast") && s.operands.size() > (tensor ? 3u : 4u)) {
        llvm::StringRef mask = s.operands[tensor ? 3 : 4];
        e.multicastMask = ops.operand(mask);
      }
    } else if (m.starts_with("fence.proxy.async")) {
      e.kind = EventKind::ProxyFence;
    } else if (m.starts_with("bar.sync") || m.starts_with("bar.cta.sync") ||
               m.starts_with("barrier.sync") ||
               m.starts_with("barrier.cta.sync")) {
      e.kind = EventKind::ThreadBarrier;
    } else if (m.starts_with("cp.async.bulk.commit_group") ||
               m.starts_with("cp.async.bulk.wait_group") ||
               m.starts_with("cp.async.bulk.prefetch") ||
               (m.starts_with("cp.async.bulk") &&
                m.contains(".global.shared"))) {
      // Setup, and TMA stores with their own bulk groups: nothing the
      // rules read (a store's reads of shared memory are not tracked).
      continue;
    } else if (m.starts_with("wgmma") || m.starts_with("cp.async.bulk")) {
      // A protocol instruction in a form this layer does not read.
      e.kind = EventKind::Unrecognised;
      e.text = m.str();
    } else {
      continue;
    }
    break;
  }
  return e;
}

} // namespace

const ProtocolEvent &ProtocolEvents::of(Operation *op) {
  auto it = cache.find(op);
  if (it != cache.end())
    return it->second;
  return cache.try_emplace(op, recogniseOp(op)).first->second;
}
