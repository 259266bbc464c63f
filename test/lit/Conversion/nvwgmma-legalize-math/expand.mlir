// RUN: nvwgmma-opt %s --nvwgmma-legalize-math --split-input-file | FileCheck %s

// What convert-math-to-llvm leaves alone, in terms it handles.

// CHECK-LABEL: func.func @classify
// CHECK-NEXT:  %[[A:.*]] = math.absf %arg0 : f32
// CHECK-NEXT:  %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK-NEXT:  %[[ISINF:.*]] = arith.cmpf oeq, %[[A]], %[[INF]] : f32
// CHECK-NEXT:  %[[A2:.*]] = math.absf %arg0 : f32
// CHECK-NEXT:  %[[INF2:.*]] = arith.constant 0x7F800000 : f32
// CHECK-NEXT:  %[[MIN:.*]] = arith.constant 1.17549435E-38 : f32
// CHECK-NEXT:  %[[GE:.*]] = arith.cmpf oge, %[[A2]], %[[MIN]] : f32
// CHECK-NEXT:  %[[LT:.*]] = arith.cmpf olt, %[[A2]], %[[INF2]] : f32
// CHECK-NEXT:  %[[NORMAL:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK-NEXT:  %[[MN:.*]] = arith.minimumf %arg0, %arg1 : f32
// CHECK-NEXT:  %[[CLAMP:.*]] = arith.maximumf %[[MN]], %arg2 : f32
// CHECK-NEXT:  return %[[ISINF]], %[[NORMAL]], %[[CLAMP]] : i1, i1, f32
func.func @classify(%x: f32, %lo: f32, %hi: f32) -> (i1, i1, f32) {
  %0 = math.isinf %x : f32
  %1 = math.isnormal %x : f32
  %2 = math.clampf %x to [%lo, %hi] : f32
  return %0, %1, %2 : i1, i1, f32
}

// -----

// log10 is log2 times log10(2); sincos is sin and cos; each then approximated.
// CHECK-LABEL: func.func @composite
// CHECK-NOT:   math.log
// CHECK-NOT:   math.sin
// CHECK-NOT:   math.cos
// CHECK:       arith.constant 3.010300e-01 : f32
// CHECK-NOT:   math.log
// CHECK-NOT:   math.sin
// CHECK-NOT:   math.cos
// CHECK:       return
func.func @composite(%x: f32) -> (f32, f32, f32) {
  %0 = math.log10 %x : f32
  %1, %2 = math.sincos %x : f32
  return %0, %1, %2 : f32, f32, f32
}

// -----

// Integer power by squaring over the 7 value bits of an i8 (7 products into
// the result, 6 squarings), branch-free; a negative exponent gives 1, +-1
// or 0 (math.ipowi's folder).
// CHECK-LABEL: func.func @ipowi
// CHECK-NOT:   math.ipowi
// CHECK-COUNT-13: arith.muli
// CHECK-NOT:   arith.muli
// CHECK:       %[[NEG:.*]] = arith.cmpi slt, %arg1, %{{.*}} : i8
// CHECK-NEXT:  %[[R:.*]] = arith.select %[[NEG]], %{{.*}}, %{{.*}} : i8
// CHECK-NEXT:  return %[[R]] : i8
func.func @ipowi(%b: i8, %e: i8) -> i8 {
  %0 = math.ipowi %b, %e : i8
  return %0 : i8
}

// -----

// Every transcendental op the pass knows, on f32, f16 and vectors: nothing of
// them is left for llc.
// CHECK-LABEL: func.func @all
// CHECK-NOT: math.{{(exp|expm1|log|log10|log1p|log2|sin|cos|tan|sinh|cosh|tanh|asin|acos|atan|atan2|asinh|acosh|atanh|erf|erfc|cbrt|powf|fpowi|sincos)}} %
// CHECK: return
func.func @all(%x: f32, %h: f16, %v: vector<4xf32>, %n: i32) -> (f32, f16, vector<4xf32>) {
  %0 = math.exp %x : f32
  %1 = math.expm1 %0 : f32
  %2 = math.log %1 : f32
  %3 = math.log10 %2 : f32
  %4 = math.log1p %3 : f32
  %5 = math.log2 %4 : f32
  %6 = math.sin %5 : f32
  %7 = math.cos %6 : f32
  %8 = math.tan %7 : f32
  %9 = math.sinh %8 : f32
  %10 = math.cosh %9 : f32
  %11 = math.tanh %10 : f32
  %12 = math.asin %11 : f32
  %13 = math.acos %12 : f32
  %14 = math.atan %13 : f32
  %15 = math.atan2 %14, %13 : f32
  %16 = math.asinh %15 : f32
  %17 = math.acosh %16 : f32
  %18 = math.atanh %17 : f32
  %19 = math.erf %18 : f32
  %20 = math.erfc %19 : f32
  %21 = math.cbrt %20 : f32
  %22 = math.powf %21, %20 : f32
  %23 = math.fpowi %22, %n : f32, i32
  %h1 = math.erf %h : f16
  %h2 = math.powf %h1, %h : f16
  %v1 = math.exp %v : vector<4xf32>
  %v2 = math.atan %v1 : vector<4xf32>
  return %23, %h2, %v2 : f32, f16, vector<4xf32>
}

// -----

// Inside a gpu.module, what llc selects becomes generic llvm.call_intrinsic
// ops: convert-gpu-to-nvvm would turn math ops and their llvm.intr twins
// into libdevice calls that ptxas cannot resolve.
// CHECK-LABEL: gpu.func @in_gpu_module
// CHECK-NEXT:  %[[S:.*]] = llvm.call_intrinsic "llvm.sqrt"(%arg0) : (f32) -> f32
// CHECK-NEXT:  %[[F:.*]] = llvm.call_intrinsic "llvm.floor"(%[[S]]) : (f32) -> f32
// CHECK-NEXT:  %[[R:.*]] = llvm.call_intrinsic "llvm.sqrt"(%[[F]]) : (f32) -> f32
// CHECK-NEXT:  %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:  %[[Q:.*]] = arith.divf %[[ONE]], %[[R]] : f32
// CHECK-NEXT:  %[[M:.*]] = llvm.call_intrinsic "llvm.fma"(%[[Q]], %[[Q]], %arg0) : (f32, f32, f32) -> f32
// CHECK-NEXT:  gpu.return %[[M]] : f32
// CHECK-LABEL: func.func @outside
// CHECK-NEXT:  math.sqrt %arg0 : f32
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @in_gpu_module(%x: f32) -> f32 {
      %0 = math.sqrt %x : f32
      %1 = math.floor %0 : f32
      %2 = math.rsqrt %1 : f32
      %3 = math.fma %2, %2, %x : f32
      gpu.return %3 : f32
    }
  }
  func.func @outside(%x: f32) -> f32 {
    %0 = math.sqrt %x : f32
    return %0 : f32
  }
}

// -----

// ipowi on i1 (one bit: no squaring, only the sign rules).
// CHECK-LABEL: func.func @ipowi_i1
// CHECK-NOT:   math.ipowi
// CHECK:       return
func.func @ipowi_i1(%b: i1, %e: i1) -> i1 {
  %0 = math.ipowi %b, %e : i1
  return %0 : i1
}
