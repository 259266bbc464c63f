// RUN: nvwgmma-opt %s --nvwgmma-legalize-math | FileCheck %s

// fastmath<afn> (alone or in `fast`): the SFU's approximate instructions,
// f16 and bf16 through f32.

// CHECK-LABEL: func.func @fast_f32
// CHECK-NEXT:  %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-NEXT:  %[[S:.*]] = arith.mulf %arg0, %[[LOG2E]] : f32
// CHECK-NEXT:  %[[EXP:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[S]]) : (f32) -> f32
// CHECK-NEXT:  %[[EXP2:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%arg0) : (f32) -> f32
// CHECK-NEXT:  %[[LN2:.*]] = arith.constant 0.693147182 : f32
// CHECK-NEXT:  %[[L:.*]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"(%arg0) : (f32) -> f32
// CHECK-NEXT:  %[[LOG:.*]] = arith.mulf %[[L]], %[[LN2]] : f32
// CHECK-NEXT:  %[[LOG2:.*]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"(%arg0) : (f32) -> f32
// CHECK-NEXT:  %[[SIN:.*]] = llvm.call_intrinsic "llvm.nvvm.sin.approx.ftz.f"(%arg0) : (f32) -> f32
// CHECK-NEXT:  %[[COS:.*]] = llvm.call_intrinsic "llvm.nvvm.cos.approx.ftz.f"(%arg0) : (f32) -> f32
// CHECK-NEXT:  %[[TANH:.*]] = llvm.intr.tanh(%arg0) {fastmathFlags = #llvm.fastmath<afn>} : (f32) -> f32
// CHECK-NEXT:  return %[[EXP]], %[[EXP2]], %[[LOG]], %[[LOG2]], %[[SIN]], %[[COS]], %[[TANH]]
func.func @fast_f32(%x: f32) -> (f32, f32, f32, f32, f32, f32, f32) {
  %0 = math.exp %x fastmath<afn> : f32
  %1 = math.exp2 %x fastmath<afn> : f32
  %2 = math.log %x fastmath<fast> : f32
  %3 = math.log2 %x fastmath<afn> : f32
  %4 = math.sin %x fastmath<afn> : f32
  %5 = math.cos %x fastmath<afn> : f32
  %6 = math.tanh %x fastmath<afn> : f32
  return %0, %1, %2, %3, %4, %5, %6 : f32, f32, f32, f32, f32, f32, f32
}

// CHECK-LABEL: func.func @fast_narrow
// CHECK-NEXT:  %[[H:.*]] = arith.extf %arg0 : f16 to f32
// CHECK-NEXT:  %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[H]]) : (f32) -> f32
// CHECK-NEXT:  %[[EH:.*]] = arith.truncf %[[E]] : f32 to f16
// CHECK-NEXT:  %[[B:.*]] = arith.extf %arg1 : bf16 to f32
// CHECK-NEXT:  %[[T:.*]] = llvm.intr.tanh(%[[B]]) {fastmathFlags = #llvm.fastmath<afn>} : (f32) -> f32
// CHECK-NEXT:  %[[TB:.*]] = arith.truncf %[[T]] : f32 to bf16
// CHECK-NEXT:  return %[[EH]], %[[TB]] : f16, bf16
func.func @fast_narrow(%h: f16, %b: bf16) -> (f16, bf16) {
  %0 = math.exp2 %h fastmath<afn> : f16
  %1 = math.tanh %b fastmath<afn> : bf16
  return %0, %1 : f16, bf16
}

// Without afn, exp becomes upstream's polynomial approximation (no SFU
// call); exp2 on f32 is left to llc, which selects ex2.approx.f32 for it.
// CHECK-LABEL: func.func @accurate
// CHECK-NOT:   llvm.call_intrinsic
// CHECK-NOT:   math.exp %
// CHECK:       math.exp2 %arg0 : f32
// CHECK-NOT:   math.exp %
// CHECK-NOT:   llvm.call_intrinsic
// CHECK:       return
func.func @accurate(%x: f32) -> (f32, f32) {
  %0 = math.exp %x fastmath<nnan> : f32
  %1 = math.exp2 %x : f32
  return %0, %1 : f32, f32
}

// A vector goes lane by lane, each lane on the SFU under afn.
// CHECK-LABEL: func.func @fast_vector
// CHECK:       %[[X0:.*]] = llvm.extractelement %arg0[%{{.*}} : i64] : vector<2xf32>
// CHECK:       llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK:       llvm.insertelement
// CHECK:       %[[X1:.*]] = llvm.extractelement %arg0[%{{.*}} : i64] : vector<2xf32>
// CHECK:       llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK:       %[[V:.*]] = llvm.insertelement
// CHECK-NOT:   math.exp
// CHECK:       return %[[V]] : vector<2xf32>
func.func @fast_vector(%v: vector<2xf32>) -> vector<2xf32> {
  %0 = math.exp %v fastmath<afn> : vector<2xf32>
  return %0 : vector<2xf32>
}
