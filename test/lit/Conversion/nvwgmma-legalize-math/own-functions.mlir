// RUN: nvwgmma-opt %s --nvwgmma-legalize-math --split-input-file | FileCheck %s

// nvwgmma's own f32 functions (lib/Conversion/MathToNVPTX/F32Functions.cpp),
// where upstream's rewrites measured wrong on the GPU. sin, exactly: x =
// k pi/2 + r by a three-part Cody-Waite reduction with FMAs, Cephes' sinf
// and cosf polynomials on r, the quadrant k mod 4 without an integer
// conversion (a huge k stays a float).
// CHECK-LABEL: func.func @sin
// CHECK-NEXT: %[[VC:.*]] = arith.constant 0.636619746 : f32
// CHECK-NEXT: %[[V0:.*]] = arith.mulf %arg0, %[[VC]] : f32
// CHECK-NEXT: %[[V1:.*]] = math.roundeven %[[V0]] : f32
// CHECK-NEXT: %[[V2:.*]] = arith.negf %[[V1]] : f32
// CHECK-NEXT: %[[VC_0:.*]] = arith.constant 1.57079637 : f32
// CHECK-NEXT: %[[V3:.*]] = math.fma %[[V2]], %[[VC_0]], %arg0 : f32
// CHECK-NEXT: %[[VC_1:.*]] = arith.constant -4.37113883E-8 : f32
// CHECK-NEXT: %[[V4:.*]] = math.fma %[[V2]], %[[VC_1]], %[[V3]] : f32
// CHECK-NEXT: %[[VC_2:.*]] = arith.constant -1.71512451E-15 : f32
// CHECK-NEXT: %[[V5:.*]] = math.fma %[[V2]], %[[VC_2]], %[[V4]] : f32
// CHECK-NEXT: %[[V6:.*]] = arith.mulf %[[V5]], %[[V5]] : f32
// CHECK-NEXT: %[[VC_3:.*]] = arith.constant -1.95152956E-4 : f32
// CHECK-NEXT: %[[VC_4:.*]] = arith.constant 0.00833216123 : f32
// CHECK-NEXT: %[[V7:.*]] = math.fma %[[VC_3]], %[[V6]], %[[VC_4]] : f32
// CHECK-NEXT: %[[VC_5:.*]] = arith.constant -0.166666552 : f32
// CHECK-NEXT: %[[V8:.*]] = math.fma %[[V7]], %[[V6]], %[[VC_5]] : f32
// CHECK-NEXT: %[[V9:.*]] = arith.mulf %[[V5]], %[[V6]] : f32
// CHECK-NEXT: %[[V10:.*]] = math.fma %[[V9]], %[[V8]], %[[V5]] : f32
// CHECK-NEXT: %[[VC_6:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[VC_7:.*]] = arith.constant -5.000000e-01 : f32
// CHECK-NEXT: %[[V11:.*]] = math.fma %[[VC_7]], %[[V6]], %[[VC_6]] : f32
// CHECK-NEXT: %[[VC_8:.*]] = arith.constant 2.44331568E-5 : f32
// CHECK-NEXT: %[[VC_9:.*]] = arith.constant -0.00138873165 : f32
// CHECK-NEXT: %[[V12:.*]] = math.fma %[[VC_8]], %[[V6]], %[[VC_9]] : f32
// CHECK-NEXT: %[[VC_10:.*]] = arith.constant 0.0416666456 : f32
// CHECK-NEXT: %[[V13:.*]] = math.fma %[[V12]], %[[V6]], %[[VC_10]] : f32
// CHECK-NEXT: %[[V14:.*]] = arith.mulf %[[V6]], %[[V6]] : f32
// CHECK-NEXT: %[[V15:.*]] = math.fma %[[V14]], %[[V13]], %[[V11]] : f32
// CHECK-NEXT: %[[VC_11:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT: %[[V16:.*]] = arith.mulf %[[V1]], %[[VC_11]] : f32
// CHECK-NEXT: %[[V17:.*]] = math.floor %[[V16]] : f32
// CHECK-NEXT: %[[VC_12:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-NEXT: %[[V18:.*]] = arith.mulf %[[VC_12]], %[[V17]] : f32
// CHECK-NEXT: %[[V19:.*]] = arith.subf %[[V1]], %[[V18]] : f32
// CHECK-NEXT: %[[VC_13:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[VC_14:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[V20:.*]] = arith.mulf %[[V19]], %[[VC_14]] : f32
// CHECK-NEXT: %[[V21:.*]] = math.floor %[[V20]] : f32
// CHECK-NEXT: %[[VC_15:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[V22:.*]] = arith.mulf %[[VC_15]], %[[V21]] : f32
// CHECK-NEXT: %[[V23:.*]] = arith.subf %[[V19]], %[[V22]] : f32
// CHECK-NEXT: %[[V24:.*]] = arith.cmpf oeq, %[[V23]], %[[VC_13]] : f32
// CHECK-NEXT: %[[VC_16:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[V25:.*]] = arith.cmpf oge, %[[V19]], %[[VC_16]] : f32
// CHECK-NEXT: %[[V26:.*]] = arith.select %[[V24]], %[[V15]], %[[V10]] : f32
// CHECK-NEXT: %[[V27:.*]] = arith.negf %[[V26]] : f32
// CHECK-NEXT: %[[V28:.*]] = arith.select %[[V25]], %[[V27]], %[[V26]] : f32
// CHECK-NEXT: return %[[V28]] : f32
func.func @sin(%x: f32) -> f32 {
  %0 = math.sin %x : f32
  return %0 : f32
}

// -----

// powf: 2^(y log2|x|) (log2 then approximated, exp2 left to llc's
// ex2.approx), the parity of an integral y signing a negative base, NaN for
// a negative base and a non-integral y, 1 for y = 0, x = 1 and |x| = 1 with
// an infinite y.
// CHECK-LABEL: func.func @pow
// CHECK:       %[[A:.*]] = math.absf %arg0 : f32
// CHECK:       %[[P:.*]] = arith.mulf %arg1, %{{.*}} : f32
// CHECK-NEXT:  %[[R:.*]] = math.exp2 %[[P]] : f32
// CHECK:       %[[F:.*]] = math.floor %arg1 : f32
// CHECK-NEXT:  %[[INT:.*]] = arith.cmpf oeq, %[[F]], %arg1 : f32
// CHECK:       %[[ODD:.*]] = arith.andi %[[INT]], %{{.*}} : i1
// CHECK:       %[[SIGN:.*]] = math.copysign %{{.*}}, %arg0 : f32
// CHECK:       %[[NEGR:.*]] = arith.negf %[[R]] : f32
// CHECK:       %[[SIGNED:.*]] = arith.select %{{.*}}, %[[NEGR]], %[[R]] : f32
// CHECK:       %[[NOTINT:.*]] = arith.cmpf one, %{{.*}}, %arg1 : f32
// CHECK:       %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK:       %[[R2:.*]] = arith.select %{{.*}}, %[[NAN]], %[[SIGNED]] : f32
// CHECK:       %[[YZERO:.*]] = arith.cmpf oeq, %arg1, %{{.*}} : f32
// CHECK:       %[[XONE:.*]] = arith.cmpf oeq, %arg0, %{{.*}} : f32
// CHECK-NEXT:  %[[ONE:.*]] = arith.ori %{{.*}}, %[[XONE]] : i1
// CHECK-NEXT:  %[[C1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:  %[[OUT:.*]] = arith.select %[[ONE]], %[[C1]], %[[R2]] : f32
// CHECK-NEXT:  return %[[OUT]] : f32
func.func @pow(%x: f32, %y: f32) -> f32 {
  %0 = math.powf %x, %y : f32
  return %0 : f32
}
