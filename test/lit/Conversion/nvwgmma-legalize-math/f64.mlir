// RUN: nvwgmma-opt %s --nvwgmma-legalize-math --split-input-file -verify-diagnostics

// PTX has no f64 transcendental instruction and the approximations are f32:
// the op is reported instead of reaching llc, which would abort.

func.func @math_c1_exp(%x: f64) -> f64 {
  // expected-error @+1 {{operand of 'math.exp' must be f32, f16 or bf16 (PTX has no f64 instruction for it, and nvwgmma approximates in f32), but got f64 (math_c1)}}
  %0 = math.exp %x : f64
  return %0 : f64
}

// -----

func.func @math_c1_exp2_vector(%x: vector<2xf64>) -> vector<2xf64> {
  // expected-error @+1 {{operand of 'math.exp2' must be f32, f16 or bf16 (PTX has no f64 instruction for it, and nvwgmma approximates in f32), but got vector<2xf64> (math_c1)}}
  %0 = math.exp2 %x fastmath<afn> : vector<2xf64>
  return %0 : vector<2xf64>
}

// -----

func.func @math_c1_atan2(%x: f64) -> f64 {
  // expected-error @+1 {{operand of 'math.atan2' must be f32, f16 or bf16 (PTX has no f64 instruction for it, and nvwgmma approximates in f32), but got f64 (math_c1)}}
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
