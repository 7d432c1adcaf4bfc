// RUN: pe-opt %s -canonicalize -split-input-file | FileCheck %s
//
// Every fold and canonicalization of the pe dialect. Expected constants were
// obtained independently of the compiler, from the closed forms written next
// to each case, evaluated with Python (math / numpy float64, then rounded to
// the element type with numpy.float32), and match as printed by MLIR. The
// exhaustive comparison with python/pe/reference.py is python/tests/test_folds.py.

// inv_freq[i] = 10000^(-2i/8) = 1, 0.1, 0.01, 0.001.
// CHECK-LABEL: func.func @freq_default
// CHECK: arith.constant dense<[1.000000e+00, 1.000000e-01, 0.00999999977, 1.000000e-03]> : tensor<4xf32>
// CHECK-NOT: pe.rope_frequencies
func.func @freq_default() -> tensor<4xf32> {
  %0 = pe.rope_frequencies #pe.rope<rotary_dim = 8> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Linear: 10000^(-2i/4) / 4 = 0.25, 0.0025.
// CHECK-LABEL: func.func @freq_linear
// CHECK: arith.constant dense<[2.500000e-01, 2.500000e-03]> : tensor<2xf32>
func.func @freq_linear() -> tensor<2xf32> {
  %0 = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.linear<factor = 4.0>> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// NTK: theta' = 10000 * 2^(4/2) = 40000; 40000^(-1/2) = 0.005.
// CHECK-LABEL: func.func @freq_ntk
// CHECK: arith.constant dense<[1.000000e+00, 5.000000e-03]> : tensor<2xf32>
func.func @freq_ntk() -> tensor<2xf32> {
  %0 = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.ntk<factor = 2.0>> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Dynamic NTK with L_max = 4: seq_len 4 leaves the base (1, 0.01); seq_len 8
// gives theta' = 10000 (2*8/4 - 1)^(4/2) = 90000, 90000^(-1/2) = 1/300.
// Without a constant seq_len there is nothing to fold.
// CHECK-LABEL: func.func @freq_dynamic_ntk
// CHECK-DAG: arith.constant dense<[1.000000e+00, 0.00999999977]> : tensor<2xf32>
// CHECK-DAG: arith.constant dense<[1.000000e+00, 0.00333333341]> : tensor<2xf32>
// CHECK: pe.rope_frequencies {{.*}} seq_len %{{.*}} -> tensor<2xf32>
func.func @freq_dynamic_ntk(%n: index) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %short = arith.constant 4 : index
  %long = arith.constant 8 : index
  %0 = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 4>> seq_len %short -> tensor<2xf32>
  %1 = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 4>> seq_len %long -> tensor<2xf32>
  %2 = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 4>> seq_len %n -> tensor<2xf32>
  return %0, %1, %2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Proportional (HF v5): k = floor(0.5 * 8 / 2) = 2 pairs rotate at
// 10000^(-2i/8) / 2 = 0.5, 0.05; the other two have frequency 0.
// CHECK-LABEL: func.func @freq_proportional
// CHECK: arith.constant dense<[5.000000e-01, 5.000000e-02, 0.000000e+00, 0.000000e+00]> : tensor<4xf32>
func.func @freq_proportional() -> tensor<4xf32> {
  %0 = pe.rope_frequencies #pe.rope<rotary_dim = 8, scaling = #pe.proportional<factor = 2.0, partial_rotary_factor = 0.5>> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A static scaling ignores seq_len, constant or not.
// CHECK-LABEL: func.func @freq_static_with_seq_len
// CHECK: arith.constant dense<[2.500000e-01, 2.500000e-03]> : tensor<2xf32>
// CHECK-NOT: pe.rope_frequencies
func.func @freq_static_with_seq_len(%n: index) -> tensor<2xf32> {
  %0 = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.linear<factor = 4.0>> seq_len %n -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// LongRoPE, L0 = 4096: seq_len 4096 uses short factors, 1/(ext[i] 10000^(2i/4))
// = 1/1, 1/(2*100); seq_len 4097 the long ones: 1/4, 1/(8*100).
// CHECK-LABEL: func.func @freq_longrope
// CHECK-DAG: arith.constant dense<[1.000000e+00, 5.000000e-03]> : tensor<2xf64>
// CHECK-DAG: arith.constant dense<[2.500000e-01, 1.250000e-03]> : tensor<2xf64>
func.func @freq_longrope() -> (tensor<2xf64>, tensor<2xf64>) {
  %short = arith.constant 4096 : index
  %long = arith.constant 4097 : index
  %0 = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.longrope<short_factor = [1.0, 2.0], long_factor = [4.0, 8.0], original_max_position_embeddings = 4096>> seq_len %short -> tensor<2xf64>
  %1 = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.longrope<short_factor = [1.0, 2.0], long_factor = [4.0, 8.0], original_max_position_embeddings = 4096>> seq_len %long -> tensor<2xf64>
  return %0, %1 : tensor<2xf64>, tensor<2xf64>
}

// -----

// ALiBi, H = 6 (n = 4): 2^(-8(h+1)/4) for h < 4, then 2^(-4(2j+1)/4):
// [1/4, 1/16, 1/64, 1/256, 1/2, 1/8] (the paper's interleaving).
// max_bias = 16, H = 4: 2^(-16(h+1)/4) = 2^-4, 2^-8, 2^-12, 2^-16.
// H = 3 (n = 2): 2^-4, 2^-8, then 2^(-4/2) = 1/4.
// CHECK-LABEL: func.func @slopes
// CHECK-DAG: arith.constant dense<[2.500000e-01, 6.250000e-02, 1.562500e-02, 3.906250e-03, 5.000000e-01, 1.250000e-01]> : tensor<6xf32>
// CHECK-DAG: arith.constant dense<[6.250000e-02, 3.906250e-03, 2.44140625E-4, 1.52587891E-5]> : tensor<4xf32>
// CHECK-DAG: arith.constant dense<[6.250000e-02, 3.906250e-03, 2.500000e-01]> : tensor<3xf64>
// CHECK-NOT: pe.alibi_slopes
func.func @slopes() -> (tensor<6xf32>, tensor<4xf32>, tensor<3xf64>) {
  %0 = pe.alibi_slopes : tensor<6xf32>
  %1 = pe.alibi_slopes max_bias(16.0) : tensor<4xf32>
  %2 = pe.alibi_slopes : tensor<3xf64>
  return %0, %1, %2 : tensor<6xf32>, tensor<4xf32>, tensor<3xf64>
}

// -----

// Tables at constant positions 0, 1 and 2^20 for inv_freq (1, 0.01):
// cos/sin of 0, 1, 0.01, 1048576 and 10485.76 (math.cos/math.sin in double).
// CHECK-LABEL: func.func @tables
// CHECK-DAG: arith.constant dense<{{\[}}[1.000000e+00, 1.000000e+00], [0.540302277, 0.999949991], [0.943808376, 0.640015661]]> : tensor<3x2xf32>
// CHECK-DAG: arith.constant dense<{{\[}}[0.000000e+00, 0.000000e+00], [0.841470957, 0.00999983306], [0.330493152, -0.768361866]]> : tensor<3x2xf32>
// CHECK-NOT: pe.rope_tables
func.func @tables() -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %pos = arith.constant dense<[0, 1, 1048576]> : tensor<3xi32>
  %c, %s = pe.rope_tables #pe.rope<rotary_dim = 4> %pos : tensor<3xi32> -> tensor<3x2xf32>
  return %c, %s : tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

// YaRN's magnitude multiplies cos and sin: at position 0, cos = m = 1 + 0.1 ln 4.
// CHECK-LABEL: func.func @tables_yarn
// CHECK-DAG: arith.constant dense<1.13862944> : tensor<1x2xf32>
// CHECK-DAG: arith.constant dense<0.000000e+00> : tensor<1x2xf32>
func.func @tables_yarn() -> (tensor<1x2xf32>, tensor<1x2xf32>) {
  %pos = arith.constant dense<0> : tensor<1xi64>
  %c, %s = pe.rope_tables #pe.rope<rotary_dim = 4, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 64>> %pos : tensor<1xi64> -> tensor<1x2xf32>
  return %c, %s : tensor<1x2xf32>, tensor<1x2xf32>
}

// -----

// Dynamic NTK in a table sees seq_len = max(positions) + 1 = 8, so inv_freq is
// (1, 1/300): sin(7) and sin(7/300).
// CHECK-LABEL: func.func @tables_dynamic
// CHECK: arith.constant dense<{{\[}}[0.000000e+00, 0.000000e+00], [0.656986594, 0.0233312156]]> : tensor<2x2xf32>
func.func @tables_dynamic() -> tensor<2x2xf32> {
  %pos = arith.constant dense<[0, 7]> : tensor<2xi32>
  %c, %s = pe.rope_tables #pe.rope<rotary_dim = 4, scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 4>> %pos : tensor<2xi32> -> tensor<2x2xf32>
  return %s : tensor<2x2xf32>
}

// -----

// Tables of runtime positions stay.
// CHECK-LABEL: func.func @tables_runtime
// CHECK: pe.rope_tables
func.func @tables_runtime(%pos: tensor<2xi32>) -> tensor<2x2xf32> {
  %c, %s = pe.rope_tables #pe.rope<rotary_dim = 4> %pos : tensor<2xi32> -> tensor<2x2xf32>
  return %s : tensor<2x2xf32>
}

// -----

// Sinusoidal, dim 4, positions 0 and 3. Paper spacing: w = (1, 10000^(-2/4) =
// 0.01), interleaved [sin 3w0, cos 3w0, sin 3w1, cos 3w1]. fairseq spacing:
// w_k = exp(-k ln(10000)/(2-1)) = (1, 1e-4), concat [sin | cos].
// CHECK-LABEL: func.func @sinusoidal
// CHECK-DAG: arith.constant dense<{{\[}}[0.000000e+00, 1.000000e+00, 0.000000e+00, 1.000000e+00], [1.411200e-01, -0.989992499, 0.029995501, 0.999550044]]> : tensor<2x4xf32>
// CHECK-DAG: arith.constant dense<{{\[}}[0.000000e+00, 0.000000e+00, 1.000000e+00, 1.000000e+00], [1.411200e-01, 2.99999985E-4, -0.989992499, 0.99999994]]> : tensor<2x4xf32>
// CHECK-NOT: pe.sinusoidal
func.func @sinusoidal() -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %pos = arith.constant dense<[0, 3]> : tensor<2xi32>
  %0 = pe.sinusoidal %pos : tensor<2xi32> -> tensor<2x4xf32>
  %1 = pe.sinusoidal %pos layout(concat) spacing(fairseq) : tensor<2xi32> -> tensor<2x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// A rotation by position 0 is the identity...
// CHECK-LABEL: func.func @identity
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x3x8xf32>
// CHECK-NOT: pe.rope
// CHECK: return %[[X]], %[[X]]
func.func @identity(%x: tensor<1x2x3x8xf32>) -> (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) {
  %zero = arith.constant dense<0> : tensor<3xi32>
  %zeros = arith.constant dense<0> : tensor<1x3xi64>
  %0 = pe.rope #pe.rope<rotary_dim = 8> %x, %zero : tensor<1x2x3x8xf32>, tensor<3xi32>
  %1 = pe.rope #pe.rope<rotary_dim = 4, style = interleaved, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>> %x, %zeros : tensor<1x2x3x8xf32>, tensor<1x3xi64>
  return %0, %1 : tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>
}

// -----

// ...but not when a magnitude factor scales it (YaRN m = 1 + 0.1 ln 4), nor
// at a non-zero position.
// CHECK-LABEL: func.func @not_identity
// CHECK-COUNT-2: pe.rope
func.func @not_identity(%x: tensor<1x2x3x8xf32>) -> (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) {
  %zero = arith.constant dense<0> : tensor<3xi32>
  %some = arith.constant dense<[0, 0, 1]> : tensor<3xi32>
  %0 = pe.rope #pe.rope<rotary_dim = 8, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 64>> %x, %zero : tensor<1x2x3x8xf32>, tensor<3xi32>
  %1 = pe.rope #pe.rope<rotary_dim = 8> %x, %some : tensor<1x2x3x8xf32>, tensor<3xi32>
  return %0, %1 : tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>
}

// -----

// rope(rope(x, p1), p2) = rope(x, p1 + p2) when the angles add; the sum of
// i32 positions is formed in i64, where it cannot overflow.
// CHECK-LABEL: func.func @compose
// CHECK-SAME: (%[[X:.*]]: tensor<1x?x2x8xf32>, %[[P1:.*]]: tensor<?xi32>, %[[P2:.*]]: tensor<?xi32>)
// CHECK-DAG: %[[W1:.*]] = arith.extsi %[[P1]] : tensor<?xi32> to tensor<?xi64>
// CHECK-DAG: %[[W2:.*]] = arith.extsi %[[P2]] : tensor<?xi32> to tensor<?xi64>
// CHECK: %[[SUM:.*]] = arith.addi %[[W1]], %[[W2]] : tensor<?xi64>
// CHECK: %[[R:.*]] = pe.rope #pe.rope<rotary_dim = 8, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>> %[[X]], %[[SUM]] layout(bshd)
// CHECK-NOT: pe.rope
// CHECK: return %[[R]]
func.func @compose(%x: tensor<1x?x2x8xf32>, %p1: tensor<?xi32>, %p2: tensor<?xi32>) -> tensor<1x?x2x8xf32> {
  %0 = pe.rope #pe.rope<rotary_dim = 8, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>> %x, %p1 layout(bshd) : tensor<1x?x2x8xf32>, tensor<?xi32>
  %1 = pe.rope #pe.rope<rotary_dim = 8, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>> %0, %p2 layout(bshd) : tensor<1x?x2x8xf32>, tensor<?xi32>
  return %1 : tensor<1x?x2x8xf32>
}

// -----

// A chain of rotations by one p composes to one rotation by n p (a single
// product, however long the chain).
// CHECK-LABEL: func.func @compose_chain
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x8xf32>, %[[P:.*]]: tensor<4xi32>)
// CHECK-DAG: %[[N:.*]] = arith.constant dense<3> : tensor<4xi64>
// CHECK-DAG: %[[W:.*]] = arith.extsi %[[P]] : tensor<4xi32> to tensor<4xi64>
// CHECK: %[[NP:.*]] = arith.muli %[[W]], %[[N]] : tensor<4xi64>
// CHECK: %[[R:.*]] = pe.rope #pe.rope<rotary_dim = 8> %[[X]], %[[NP]]
// CHECK-NOT: pe.rope
// CHECK: return %[[R]]
func.func @compose_chain(%x: tensor<1x2x4x8xf32>, %p: tensor<4xi32>) -> tensor<1x2x4x8xf32> {
  %0 = pe.rope #pe.rope<rotary_dim = 8> %x, %p : tensor<1x2x4x8xf32>, tensor<4xi32>
  %1 = pe.rope #pe.rope<rotary_dim = 8> %0, %p : tensor<1x2x4x8xf32>, tensor<4xi32>
  %2 = pe.rope #pe.rope<rotary_dim = 8> %1, %p : tensor<1x2x4x8xf32>, tensor<4xi32>
  return %2 : tensor<1x2x4x8xf32>
}

// -----

// i64 positions could overflow when added (p1 + p2 wrapping changes the
// angle): such chains stay, unless the positions are known to fit in 32
// bits (extended from i32, or constants in range).
// CHECK-LABEL: func.func @compose_i64
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x8xf32>, %[[P:.*]]: tensor<4xi64>, %[[Q:.*]]: tensor<4xi32>)
// CHECK: %[[R0:.*]] = pe.rope #pe.rope<rotary_dim = 8> %[[X]], %[[P]]
// CHECK: %[[R1:.*]] = pe.rope #pe.rope<rotary_dim = 8> %[[R0]], %[[P]]
// CHECK: %[[W:.*]] = arith.extsi %[[Q]] : tensor<4xi32> to tensor<4xi64>
// CHECK: %[[S:.*]] = arith.addi %[[W]], %{{.*}} : tensor<4xi64>
// CHECK: %[[R2:.*]] = pe.rope #pe.rope<rotary_dim = 8> %[[X]], %[[S]]
// CHECK-NOT: pe.rope
// CHECK: return %[[R1]], %[[R2]]
func.func @compose_i64(%x: tensor<1x2x4x8xf32>, %p: tensor<4xi64>, %q: tensor<4xi32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) {
  %0 = pe.rope #pe.rope<rotary_dim = 8> %x, %p : tensor<1x2x4x8xf32>, tensor<4xi64>
  %1 = pe.rope #pe.rope<rotary_dim = 8> %0, %p : tensor<1x2x4x8xf32>, tensor<4xi64>
  %w = arith.extsi %q : tensor<4xi32> to tensor<4xi64>
  %c = arith.constant dense<[1, 2, 3, 2147483647]> : tensor<4xi64>
  %2 = pe.rope #pe.rope<rotary_dim = 8> %x, %w : tensor<1x2x4x8xf32>, tensor<4xi64>
  %3 = pe.rope #pe.rope<rotary_dim = 8> %2, %c : tensor<1x2x4x8xf32>, tensor<4xi64>
  return %1, %3 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
}

// -----

// An i32 product or sum of positions may have wrapped in i32: it counts as
// an arbitrary i32 value (never as k p), and the sum of the two rotations'
// positions is formed in i64 from the wrapped values.
// CHECK-LABEL: func.func @compose_narrow_product
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x8xf32>, %[[P:.*]]: tensor<4xi32>)
// CHECK: %[[TRIPLE:.*]] = arith.muli %[[P]], %{{.*}} : tensor<4xi32>
// CHECK-DAG: %[[W1:.*]] = arith.extsi %[[TRIPLE]] : tensor<4xi32> to tensor<4xi64>
// CHECK-DAG: %[[W2:.*]] = arith.extsi %[[P]] : tensor<4xi32> to tensor<4xi64>
// CHECK: arith.addi %[[W1]], %[[W2]] : tensor<4xi64>
// CHECK-NOT: dense<4>
func.func @compose_narrow_product(%x: tensor<1x2x4x8xf32>, %p: tensor<4xi32>) -> tensor<1x2x4x8xf32> {
  %three = arith.constant dense<3> : tensor<4xi32>
  %q = arith.muli %p, %three : tensor<4xi32>
  %0 = pe.rope #pe.rope<rotary_dim = 8> %x, %q : tensor<1x2x4x8xf32>, tensor<4xi32>
  %1 = pe.rope #pe.rope<rotary_dim = 8> %0, %p : tensor<1x2x4x8xf32>, tensor<4xi32>
  return %1 : tensor<1x2x4x8xf32>
}

// -----

// Angles do not add under a magnitude factor (m^2 != m), a sequence-length
// dependent scaling, different configurations, or when the inner rotation is
// also used elsewhere.
// CHECK-LABEL: func.func @no_compose
// CHECK-NOT: arith.addi
// CHECK-COUNT-8: pe.rope
func.func @no_compose(%x: tensor<1x2x4x8xf32>, %p1: tensor<4xi32>, %p2: tensor<4xi32>)
    -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) {
  %0 = pe.rope #pe.rope<rotary_dim = 8, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 64>> %x, %p1 : tensor<1x2x4x8xf32>, tensor<4xi32>
  %1 = pe.rope #pe.rope<rotary_dim = 8, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 64>> %0, %p2 : tensor<1x2x4x8xf32>, tensor<4xi32>
  %2 = pe.rope #pe.rope<rotary_dim = 8, scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 4>> %x, %p1 : tensor<1x2x4x8xf32>, tensor<4xi32>
  %3 = pe.rope #pe.rope<rotary_dim = 8, scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 4>> %2, %p2 : tensor<1x2x4x8xf32>, tensor<4xi32>
  %4 = pe.rope #pe.rope<rotary_dim = 8> %x, %p1 : tensor<1x2x4x8xf32>, tensor<4xi32>
  %5 = pe.rope #pe.rope<rotary_dim = 8, theta = 500000.0> %4, %p2 : tensor<1x2x4x8xf32>, tensor<4xi32>
  %6 = pe.rope #pe.rope<rotary_dim = 8> %x, %p1 : tensor<1x2x4x8xf32>, tensor<4xi32>
  %7 = pe.rope #pe.rope<rotary_dim = 8> %6, %p2 : tensor<1x2x4x8xf32>, tensor<4xi32>
  return %1, %3, %5, %6, %7 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
}

// -----

// A table at the largest int64 position folds: its sequence length (for the
// dynamic scaling) saturates instead of overflowing. Only the fold is checked
// here; the values at large positions are checked in python/tests.
// CHECK-LABEL: func.func @tables_int64_max
// CHECK: arith.constant dense<{{.*}}> : tensor<1x2xf32>
// CHECK-NOT: pe.rope_tables
func.func @tables_int64_max() -> tensor<1x2xf32> {
  %pos = arith.constant dense<9223372036854775807> : tensor<1xi64>
  %c, %s = pe.rope_tables #pe.rope<rotary_dim = 4, scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 4>> %pos : tensor<1xi64> -> tensor<1x2xf32>
  return %c : tensor<1x2xf32>
}
