// RUN: not pe-opt %s --pe-specialize-rope-scaling=max-seq-len=4611686018427387904 2>&1 | FileCheck %s

// A decided base that is not a finite number > 1 (the verifier's constraint
// on theta) is a diagnostic, never an attribute with theta = inf.
// CHECK: error: pe-specialize-rope-scaling: dynamic NTK at 4611686018427387904 positions gives theta = inf, which is not a finite number > 1
// CHECK-NOT: theta = inf
func.func @overflow() -> tensor<2xf32> {
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.dynamic_ntk<factor = 1.0e300, max_position_embeddings = 4>> -> tensor<2xf32>
  return %f : tensor<2xf32>
}
