// RUN: nvwgmma-opt %s --nvwgmma-check-target="chip=sm_90" -verify-diagnostics

func.func @target_c1_sm90() {
  // expected-error @+1 {{'nvwgmma.fence' requires target sm_90a, but the target is sm_90 (target_c1)}}
  nvwgmma.fence
  return
}
