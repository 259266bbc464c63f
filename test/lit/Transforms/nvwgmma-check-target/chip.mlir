// RUN: nvwgmma-opt %s --nvwgmma-check-target="chip=sm_90" -verify-diagnostics

func.func @target_c1_sm90() {
  // expected-error @+1 {{target must be sm_90a for 'nvwgmma.fence', but got sm_90 (target_c1)}}
  nvwgmma.fence
  return
}
