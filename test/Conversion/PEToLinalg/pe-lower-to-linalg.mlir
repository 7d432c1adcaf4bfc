// RUN: pe-opt %s --pe-lower-to-linalg -split-input-file | FileCheck %s
// Numerics of the lowering are checked end to end in python/tests
// (test_compiled.py); this file checks its structure.

// RoPE: f64 angle p * f formed exactly (FMA for the product's error),
// reduced with a two-part 2 pi, f32 cos/sin once per (position, frequency);
// the pair members are two slices of x, rotated with one FMA each.
// CHECK-LABEL: func.func @rope
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x?x64xf16>, %[[P:.*]]: tensor<?xi32>)
// CHECK-NOT: pe.
// CHECK: %[[F:.*]] = arith.constant dense<{{.*}}> : tensor<16xf64>
// CHECK: %[[T:.*]]:2 = linalg.generic {{.*}} ins(%[[P]], %[[F]] : tensor<?xi32>, tensor<16xf64>) outs({{.*}} : tensor<?x16xf32>, tensor<?x16xf32>)
// CHECK: arith.sitofp %{{.*}} : i32 to f64
// CHECK: math.fma {{.*}} : f64
// CHECK: math.roundeven {{.*}} : f64
// CHECK: arith.truncf {{.*}} : f64 to f32
// CHECK: math.cos {{.*}} : f32
// CHECK: math.sin {{.*}} : f32
// CHECK: %[[X0:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0] [2, 4, %{{.*}}, 16] [1, 1, 1, 1]
// CHECK: %[[X1:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 16] [2, 4, %{{.*}}, 16] [1, 1, 1, 1]
// CHECK: %[[R:.*]]:2 = linalg.generic {{.*}} ins(%[[X0]], %[[X1]], %[[T]]#0, %[[T]]#1 : {{.*}})
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: math.fma
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[R]]#0 into %[[X]][0, 0, 0, 0]
// CHECK: tensor.insert_slice %[[R]]#1 into %[[I0]][0, 0, 0, 16]
func.func @rope(%x: tensor<2x4x?x64xf16>, %p: tensor<?xi32>) -> tensor<2x4x?x64xf16> {
  %y = pe.rope #pe.rope<rotary_dim = 32> %x, %p : tensor<2x4x?x64xf16>, tensor<?xi32>
  return %y : tensor<2x4x?x64xf16>
}

// -----

// Interleaved pairs (2i, 2i + 1) are strided slices; BSHD tables broadcast
// over heads (loop d2) and index (b, s, i) for per-batch positions.
// CHECK: #[[TABLE:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @rope_interleaved_bshd
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [2, %{{.*}}, 8, 32] [1, 1, 1, 2]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 1] [2, %{{.*}}, 8, 32] [1, 1, 1, 2]
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[TABLE]], #[[TABLE]], #{{.*}}, #{{.*}}]
func.func @rope_interleaved_bshd(%x: tensor<2x?x8x64xbf16>, %p: tensor<2x?xi64>) -> tensor<2x?x8x64xbf16> {
  %y = pe.rope #pe.rope<rotary_dim = 64, style = interleaved> %x, %p layout(bshd) : tensor<2x?x8x64xbf16>, tensor<2x?xi64>
  return %y : tensor<2x?x8x64xbf16>
}

// -----

// A magnitude factor scales the tables: YaRN m = 1 + 0.1 ln 4.
// CHECK-LABEL: func.func @tables_yarn
// CHECK: %[[C:.*]] = math.cos
// CHECK: %[[M:.*]] = arith.constant 1.13862944 : f32
// CHECK: arith.mulf %[[C]], %[[M]] : f32
func.func @tables_yarn(%p: tensor<?xi32>) -> tensor<?x8xf32> {
  %c, %s = pe.rope_tables #pe.rope<rotary_dim = 16, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 64>> %p : tensor<?xi32> -> tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}

// -----

// Dynamic NTK at run time: seq_len = max(p) + 1, then
// inv_freq[i] = base[i] exp(-(2i/r) ln c), c = (s L / L_max - (s - 1))^(r/(r-2)).
// CHECK-LABEL: func.func @dynamic_ntk
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK: arith.maxsi
// CHECK: math.log {{.*}} : f64
// CHECK: math.exp {{.*}} : f64
func.func @dynamic_ntk(%p: tensor<?xi32>) -> tensor<?x8xf32> {
  %c, %s = pe.rope_tables #pe.rope<rotary_dim = 16, scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 64>> %p : tensor<?xi32> -> tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}

// -----

// LongRoPE picks the long factors when seq_len > L0 = 4096.
// CHECK-LABEL: func.func @longrope
// CHECK: %[[N:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[LONG:.*]] = arith.cmpi sgt, %[[N]], %{{.*}} : i64
// CHECK: arith.select %[[LONG]], %{{.*}}, %{{.*}} : tensor<2xf64>
func.func @longrope(%n: index) -> tensor<2xf32> {
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.longrope<short_factor = [1.0, 2.0], long_factor = [4.0, 8.0], original_max_position_embeddings = 4096>> seq_len %n -> tensor<2xf32>
  return %f : tensor<2xf32>
}

// -----

// Learned: every position is checked at run time before an in-bounds gather.
// CHECK: func.func private @pe_runtime_learned_out_of_range(i64, i64, i64)
// CHECK-LABEL: func.func @learned
// CHECK: scf.for
// CHECK: arith.cmpi slt
// CHECK: arith.cmpi sge
// CHECK: scf.if
// CHECK: func.call @pe_runtime_learned_out_of_range
// CHECK: linalg.generic
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<1024x64xf32>
func.func @learned(%t: tensor<1024x64xf32>, %p: tensor<2x?xi64>) -> tensor<2x?x64xf32> {
  %e = pe.learned %t[%p] : tensor<1024x64xf32>, tensor<2x?xi64> -> tensor<2x?x64xf32>
  return %e : tensor<2x?x64xf32>
}

// -----

// Sinusoidal: sin and cos halves, placed at even/odd channels (interleaved).
// CHECK-LABEL: func.func @sinusoidal
// CHECK: %[[SC:.*]]:2 = linalg.generic
// CHECK: math.sin
// CHECK: math.cos
// CHECK: tensor.insert_slice %[[SC]]#0 into %{{.*}}[0, 0] [%{{.*}}, 32] [1, 2]
// CHECK: tensor.insert_slice %[[SC]]#1 into %{{.*}}[0, 1] [%{{.*}}, 32] [1, 2]
func.func @sinusoidal(%p: tensor<?xi32>) -> tensor<?x64xf32> {
  %e = pe.sinusoidal %p : tensor<?xi32> -> tensor<?x64xf32>
  return %e : tensor<?x64xf32>
}

// -----

// Marian's odd dimension: 4 sin frequencies, then 3 cos channels of the cos
// block (layout(concat) odd(sin)).
// CHECK-LABEL: func.func @sinusoidal_odd_sin
// CHECK: %[[SC:.*]]:2 = linalg.generic
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK: %[[T:.*]] = tensor.empty(%{{.*}}) : tensor<?x7xf32>
// CHECK: %[[S:.*]] = tensor.insert_slice %[[SC]]#0 into %[[T]][0, 0] [%{{.*}}, 4] [1, 1]
// CHECK: %[[C:.*]] = tensor.extract_slice %[[SC]]#1[0, 0] [%{{.*}}, 3] [1, 1]
// CHECK: tensor.insert_slice %[[C]] into %[[S]][0, 4] [%{{.*}}, 3] [1, 1]
func.func @sinusoidal_odd_sin(%p: tensor<?xi32>) -> tensor<?x7xf32> {
  %e = pe.sinusoidal %p layout(concat) odd(sin) : tensor<?xi32> -> tensor<?x7xf32>
  return %e : tensor<?x7xf32>
}

// -----

// fairseq's pad row and zero channel: rows at position 1 are 0, and the
// last channel keeps the fill.
// CHECK-LABEL: func.func @sinusoidal_fairseq_pad
// CHECK: linalg.generic
// CHECK: %[[PAD:.*]] = arith.cmpi eq, %[[P:.*]], %c1_i64 : i64
// CHECK: arith.select %[[PAD]], %cst{{.*}}, %{{.*}} : f32
// CHECK: arith.select %[[PAD]], %cst{{.*}}, %{{.*}} : f32
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x9xf32>)
// CHECK: tensor.insert_slice %{{.*}} into %[[Z]][0, 0] [%{{.*}}, 4] [1, 1]
// CHECK: tensor.insert_slice %{{.*}}[0, 4] [%{{.*}}, 4] [1, 1]
func.func @sinusoidal_fairseq_pad(%p: tensor<?xi64>) -> tensor<?x9xf32> {
  %e = pe.sinusoidal %p layout(concat) spacing(fairseq) odd(zero) padding_idx(1) : tensor<?xi64> -> tensor<?x9xf32>
  return %e : tensor<?x9xf32>
}

// -----

// Timesteps (floats, widened exactly to f64), the scale folded into the
// frequencies, [cos | sin].
// CHECK-LABEL: func.func @sinusoidal_timesteps
// CHECK: arith.constant dense<[2.000000e+00, 0.2000{{[0-9]*}}, 0.0200{{[0-9]*}}, 0.0020{{[0-9]*}}]> : tensor<4xf64>
// CHECK: %[[SC:.*]]:2 = linalg.generic
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: tensor.insert_slice %[[SC]]#0 into %{{.*}}[0, 4] [4, 4] [1, 1]
// CHECK: tensor.insert_slice %[[SC]]#1 into %{{.*}}[0, 0] [4, 4] [1, 1]
func.func @sinusoidal_timesteps(%t: tensor<4xf32>) -> tensor<4x8xf32> {
  %e = pe.sinusoidal %t base(1000.0) layout(concat) freq_shift(1.0) scale(2.0) cos_first : tensor<4xf32> -> tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}

// -----

// ALiBi: slopes are constants; the causal bias is m (k - q), -inf ahead.
// k - q is formed without i64 overflow: |k - q| as an unsigned number,
// rounded once to f32, then its sign.
// CHECK-LABEL: func.func @alibi
// CHECK: arith.constant dense<[2.500000e-01, 6.250000e-02, 1.562500e-02, 3.906250e-03]> : tensor<4xf32>
// CHECK: linalg.generic
// CHECK: %[[GE:.*]] = arith.cmpi sge, %[[K:.*]], %[[Q:.*]] : i64
// CHECK: arith.uitofp {{.*}} : i64 to f32
// CHECK: %[[D:.*]] = arith.select %[[GE]]
// CHECK: math.fma %{{.*}}, %[[D]]
// CHECK: arith.cmpi sgt, %[[K]], %[[Q]] : i64
// CHECK: arith.select
func.func @alibi(%q: tensor<8xi32>, %k: tensor<8xi32>) -> tensor<4x8x8xf32> {
  %s = pe.alibi_slopes : tensor<4xf32>
  %b = pe.alibi_bias causal %s, %q, %k : tensor<4xf32>, tensor<8xi32>, tensor<8xi32> -> tensor<4x8x8xf32>
  return %b : tensor<4x8x8xf32>
}

// -----

// Attention, GQA 32/8: query heads reshaped to (8, 4); QK^T over d with the
// key indexed by the KV head; masks from positions; softmax with a zero-safe
// max and sum; PV where keys of weight 0 add nothing; collapsed back to 32
// heads. Causal: k > q; window: q >= k and q - k >= W as unsigned (exact for
// any i64 positions).
// CHECK-LABEL: func.func @attention
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 8, 4, %{{.*}}, 64] : tensor<1x32x?x64xbf16> into tensor<1x8x4x?x64xbf16>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK: %[[CAUSAL:.*]] = arith.cmpi sgt, %[[K:.*]], %[[Q:.*]] : i64
// CHECK: %[[ORDERED:.*]] = arith.cmpi sge, %[[Q]], %[[K]] : i64
// CHECK: %[[GAP:.*]] = arith.subi %[[Q]], %[[K]] : i64
// CHECK: %[[FAR:.*]] = arith.cmpi uge, %[[GAP]], %{{.*}} : i64
// CHECK: arith.andi %[[ORDERED]], %[[FAR]] : i1
// CHECK: arith.maxnumf
// CHECK: arith.cmpf oeq
// CHECK: math.exp
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] : tensor<1x8x4x?x64xbf16> into tensor<1x32x?x64xbf16>
func.func @attention(%q: tensor<1x32x?x64xbf16>, %k: tensor<1x8x?x64xbf16>, %v: tensor<1x8x?x64xbf16>) -> tensor<1x32x?x64xbf16> {
  %o = pe.attention %q, %k, %v causal window(128) : tensor<1x32x?x64xbf16>, tensor<1x8x?x64xbf16>, tensor<1x8x?x64xbf16> -> tensor<1x32x?x64xbf16>
  return %o : tensor<1x32x?x64xbf16>
}

// -----

// An empty sinusoidal table is an empty tensor (no slices of an empty
// dimension, which upstream's verifier rejects).
// CHECK-LABEL: func.func @sinusoidal_empty
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4611686018427387904x0x64xf32>
// CHECK-NEXT: return %[[E]]
func.func @sinusoidal_empty(%p: tensor<4611686018427387904x0xi32>) -> tensor<4611686018427387904x0x64xf32> {
  %e = pe.sinusoidal %p : tensor<4611686018427387904x0xi32> -> tensor<4611686018427387904x0x64xf32>
  return %e : tensor<4611686018427387904x0x64xf32>
}
