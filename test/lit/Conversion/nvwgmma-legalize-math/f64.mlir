// RUN: nvwgmma-opt %s --nvwgmma-legalize-math --split-input-file -verify-diagnostics

// PTX has no f64 transcendental instruction and the approximations are f32:
// the op is reported instead of reaching llc, which would abort.

func.func @math_c1_exp(%x: f64) -> f64 {
  // expected-error @+1 {{operand of 'math.exp' must be f32, f16 or bf16, or a 1-D vector of them (nvwgmma computes it in f32, lane by lane; PTX has no f64 instruction for it), but got f64 (math_c1)}}
  %0 = math.exp %x : f64
  return %0 : f64
}

// -----

func.func @math_c1_exp2_vector(%x: vector<2xf64>) -> vector<2xf64> {
  // expected-error @+1 {{operand of 'math.exp2' must be f32, f16 or bf16, or a 1-D vector of them (nvwgmma computes it in f32, lane by lane; PTX has no f64 instruction for it), but got vector<2xf64> (math_c1)}}
  %0 = math.exp2 %x fastmath<afn> : vector<2xf64>
  return %0 : vector<2xf64>
}

// -----

func.func @math_c1_atan2(%x: f64) -> f64 {
  // expected-error @+1 {{operand of 'math.atan2' must be f32, f16 or bf16, or a 1-D vector of them (nvwgmma computes it in f32, lane by lane; PTX has no f64 instruction for it), but got f64 (math_c1)}}
  %0 = math.atan2 %x, %x : f64
  return %0 : f64
}

// -----

// f64 ops PTX does have are left alone.
func.func @f64_native(%x: f64) -> f64 {
  %0 = math.sqrt %x : f64
  %1 = math.fma %0, %x, %x : f64
  %2 = math.absf %1 : f64
  return %2 : f64
}

// -----

// Shapes the pass does not compute lane by lane are refused too, not
// crashed on (upstream's approximations would build vector ops).
func.func @math_c1_tensor(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand of 'math.exp' must be f32, f16 or bf16, or a 1-D vector of them (nvwgmma computes it in f32, lane by lane; PTX has no f64 instruction for it), but got tensor<4xf32> (math_c1)}}
  %0 = math.exp %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @math_c1_2d_vector(%x: vector<2x2xf32>) -> vector<2x2xf32> {
  // expected-error @+1 {{but got vector<2x2xf32> (math_c1)}}
  %0 = math.tanh %x : vector<2x2xf32>
  return %0 : vector<2x2xf32>
}

// -----

func.func @math_c1_scalable(%x: vector<[4]xf32>) -> vector<[4]xf32> {
  // expected-error @+1 {{but got vector<[4]xf32> (math_c1)}}
  %0 = math.sin %x : vector<[4]xf32>
  return %0 : vector<[4]xf32>
}

// -----

func.func @math_c1_fp8(%x: f8E4M3FN) -> f8E4M3FN {
  // expected-error @+1 {{but got f8E4M3FN (math_c1)}}
  %0 = math.exp %x : f8E4M3FN
  return %0 : f8E4M3FN
}

// -----

func.func @math_c1_fpowi_f80(%x: f80, %n: i32) -> f80 {
  // expected-error @+1 {{operand of 'math.fpowi' must be f64, f32, f16 or bf16, or a 1-D vector of them (nvwgmma computes it in f32, lane by lane; PTX has no f64 instruction for it), but got f80 (math_c1)}}
  %0 = math.fpowi %x, %n : f80, i32
  return %0 : f80
}

// -----

// fpowi on f64 is multiplications: accepted.
func.func @fpowi_f64(%x: f64, %n: i32) -> f64 {
  %0 = math.fpowi %x, %n : f64, i32
  return %0 : f64
}
