// RUN: pe-opt %s --pe-specialize-rope-scaling=max-seq-len=8192 | FileCheck %s --check-prefix=CHECK-LONG
// RUN: pe-opt %s --pe-specialize-rope-scaling=max-seq-len=4096 | FileCheck %s --check-prefix=CHECK-SHORT
// RUN: not pe-opt %s --pe-specialize-rope-scaling 2>&1 | FileCheck %s --check-prefix=CHECK-NOLEN
// RUN: not pe-opt %s --pe-specialize-rope-scaling=max-seq-len=-3 2>&1 | FileCheck %s --check-prefix=CHECK-NEGLEN

// CHECK-NOLEN: error: pe-specialize-rope-scaling needs max-seq-len > 0, but got 0
// CHECK-NEGLEN: error: pe-specialize-rope-scaling needs max-seq-len > 0, but got -3

// LongRoPE switches to the long factors only beyond L0 = 4096.
// CHECK-LONG-LABEL: func.func @longrope
// CHECK-LONG: pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.longrope<short_factor = [1.0, 2.0], long_factor = [4.0, 8.0], original_max_position_embeddings = 4096, select = long>>
// CHECK-SHORT-LABEL: func.func @longrope
// CHECK-SHORT: pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.longrope<short_factor = [1.0, 2.0], long_factor = [4.0, 8.0], original_max_position_embeddings = 4096, select = short>>
func.func @longrope() -> tensor<2xf32> {
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.longrope<short_factor = [1, 2], long_factor = [4, 8], original_max_position_embeddings = 4096>> -> tensor<2xf32>
  return %f : tensor<2xf32>
}

// A fixed choice is kept whatever the length.
// CHECK-LONG-LABEL: func.func @longrope_fixed
// CHECK-LONG: select = short
// CHECK-SHORT-LABEL: func.func @longrope_fixed
// CHECK-SHORT: select = short
func.func @longrope_fixed() -> tensor<2xf32> {
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.longrope<short_factor = [1, 2], long_factor = [4, 8], original_max_position_embeddings = 4096, select = short>> -> tensor<2xf32>
  return %f : tensor<2xf32>
}

// Dynamic NTK becomes a plain base: theta' = 10000 (2 N / 4096 - 1)^(8/6).
// N = 8192: 10000 * 3^(4/3) (python3: 43267.487109222245);
// N = 4096 (within the original context): the base is unchanged.
// CHECK-LONG-LABEL: func.func @dynamic_ntk
// CHECK-LONG: pe.attention %{{.*}}, %{{.*}}, %{{.*}} causal rope(#pe.rope<theta = 43267.48710922{{[0-9]*}}, rotary_dim = 8>)
// CHECK-SHORT-LABEL: func.func @dynamic_ntk
// CHECK-SHORT: pe.attention %{{.*}}, %{{.*}}, %{{.*}} causal rope(#pe.rope<rotary_dim = 8>)
func.func @dynamic_ntk(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %o = pe.attention %q, %k, %k causal rope(#pe.rope<rotary_dim = 8, scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 4096>>) : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}

// Other scalings are left alone.
// CHECK-LONG-LABEL: func.func @static
// CHECK-LONG: scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>
func.func @static(%p: tensor<4xi32>) -> tensor<4x4xf32> {
  %c, %s = pe.rope_tables #pe.rope<rotary_dim = 8, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>> %p : tensor<4xi32> -> tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}
