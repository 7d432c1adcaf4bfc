// Every op and attribute of the pe dialect round-trips through the custom
// form, the generic form and bytecode.
// RUN: pe-opt %s | pe-opt | FileCheck %s
// RUN: pe-opt %s --mlir-print-op-generic | pe-opt | FileCheck %s
// RUN: pe-opt %s --emit-bytecode | pe-opt | FileCheck %s
// RUN: pe-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @frequencies
func.func @frequencies(%n: index) -> (tensor<64xf32>, tensor<64xf64>, tensor<8xf32>) {
  // CHECK: pe.rope_frequencies #pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>> -> tensor<64xf32>
  // GENERIC: "pe.rope_frequencies"() <{rope = #pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>}> : () -> tensor<64xf32>
  %0 = pe.rope_frequencies #pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>> -> tensor<64xf32>
  // CHECK: pe.rope_frequencies #pe.rope<rotary_dim = 128, scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 4096>> seq_len %{{.*}} -> tensor<64xf64>
  // GENERIC: "pe.rope_frequencies"(%{{.*}}) <{rope = #pe.rope<rotary_dim = 128, scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 4096>>}> : (index) -> tensor<64xf64>
  %1 = pe.rope_frequencies #pe.rope<rotary_dim = 128, scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 4096>> seq_len %n -> tensor<64xf64>
  // CHECK: pe.rope_frequencies #pe.rope<theta = 1000000.0, rotary_dim = 16, style = interleaved, scaling = #pe.longrope<short_factor = [1.0, 1.0, 1.5, 2.0, 2.0, 3.0, 4.0, 4.0], long_factor = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0], original_max_position_embeddings = 4096, factor = 32.0, attention_factor = 1.25, select = long>> -> tensor<8xf32>
  %2 = pe.rope_frequencies #pe.rope<theta = 1.0e6, rotary_dim = 16, style = interleaved,
         scaling = #pe.longrope<short_factor = [1.0, 1.0, 1.5, 2, 2, 3, 4, 4],
                                long_factor = [1, 2, 4, 8, 16, 32, 64, 128],
                                original_max_position_embeddings = 4096, factor = 32.0,
                                attention_factor = 1.25, select = long>> -> tensor<8xf32>
  return %0, %1, %2 : tensor<64xf32>, tensor<64xf64>, tensor<8xf32>
}

// CHECK-LABEL: func.func @scalings
func.func @scalings(%x: tensor<1x4x8x64xf32>, %p: tensor<8xi32>) -> (tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) {
  // CHECK: pe.rope #pe.rope<rotary_dim = 64, scaling = #pe.linear<factor = 4.0>> %{{.*}}, %{{.*}} : tensor<1x4x8x64xf32>, tensor<8xi32>
  %0 = pe.rope #pe.rope<rotary_dim = 64, scaling = #pe.linear<factor = 4.0>> %x, %p : tensor<1x4x8x64xf32>, tensor<8xi32>
  // CHECK: pe.rope #pe.rope<rotary_dim = 64, scaling = #pe.proportional<factor = 2.0, partial_rotary_factor = 0.25>>
  %p4 = pe.rope #pe.rope<rotary_dim = 64, scaling = #pe.proportional<factor = 2.0, partial_rotary_factor = 0.25>> %x, %p : tensor<1x4x8x64xf32>, tensor<8xi32>
  // CHECK: pe.rope #pe.rope<rotary_dim = 64, scaling = #pe.ntk<factor = 2.5>>
  %1 = pe.rope #pe.rope<rotary_dim = 64, scaling = #pe.ntk<factor = 2.5>> %x, %p : tensor<1x4x8x64xf32>, tensor<8xi32>
  // CHECK: pe.rope #pe.rope<rotary_dim = 64, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 4096, beta_fast = 16.0, beta_slow = 2.0, mscale = 0.707, mscale_all_dim = 1.0, truncate = false>>
  %2 = pe.rope #pe.rope<rotary_dim = 64, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 4096, beta_fast = 16.0, beta_slow = 2.0, mscale = 0.707, mscale_all_dim = 1.0, truncate = false>> %x, %p : tensor<1x4x8x64xf32>, tensor<8xi32>
  // CHECK: pe.rope #pe.rope<rotary_dim = 32, scaling = #pe.yarn<factor = 32.0, original_max_position_embeddings = 4096, attention_factor = 1.1>>
  %3 = pe.rope #pe.rope<rotary_dim = 32, scaling = #pe.yarn<factor = 32.0, original_max_position_embeddings = 4096, attention_factor = 1.1, truncate = true>> %x, %p : tensor<1x4x8x64xf32>, tensor<8xi32>
  return %0, %1, %2, %3 : tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>
}

// CHECK-LABEL: func.func @rope_layouts
func.func @rope_layouts(%a: tensor<?x32x?x128xbf16>, %pa: tensor<?xi64>,
                        %b: tensor<2x?x8x64xf16>, %pb: tensor<2x?xi32>) -> (tensor<?x32x?x128xbf16>, tensor<2x?x8x64xf16>) {
  // CHECK: pe.rope #pe.rope<rotary_dim = 128> %{{.*}}, %{{.*}} : tensor<?x32x?x128xbf16>, tensor<?xi64>
  // GENERIC: "pe.rope"(%{{.*}}, %{{.*}}) <{layout = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0>, rope = #pe.rope<rotary_dim = 128>}> : (tensor<?x32x?x128xbf16>, tensor<?xi64>) -> tensor<?x32x?x128xbf16>
  %0 = pe.rope #pe.rope<theta = 10000.0, rotary_dim = 128, style = half> %a, %pa : tensor<?x32x?x128xbf16>, tensor<?xi64>
  // CHECK: pe.rope #pe.rope<rotary_dim = 32, style = interleaved> %{{.*}}, %{{.*}} layout(bshd) : tensor<2x?x8x64xf16>, tensor<2x?xi32>
  // GENERIC: "pe.rope"(%{{.*}}, %{{.*}}) <{layout = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0>, rope = #pe.rope<rotary_dim = 32, style = interleaved>}>
  %1 = pe.rope #pe.rope<rotary_dim = 32, style = interleaved> %b, %pb layout(bshd) : tensor<2x?x8x64xf16>, tensor<2x?xi32>
  return %0, %1 : tensor<?x32x?x128xbf16>, tensor<2x?x8x64xf16>
}

// CHECK-LABEL: func.func @rope_with_tables
// CHECK: %[[C:.*]], %[[S:.*]] = pe.rope_tables #pe.rope<rotary_dim = 32> %{{.*}} : tensor<?xi32> -> tensor<?x16xf32>
// CHECK: pe.rope #pe.rope<rotary_dim = 32> %{{.*}}, %{{.*}} layout(bshd) tables(%[[C]], %[[S]] : tensor<?x16xf32>, tensor<?x16xf32>) : tensor<2x?x4x32xf16>, tensor<?xi32>
// GENERIC: "pe.rope"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{layout = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1>, rope = #pe.rope<rotary_dim = 32>}>
func.func @rope_with_tables(%x: tensor<2x?x4x32xf16>, %p: tensor<?xi32>) -> tensor<2x?x4x32xf16> {
  %cos, %sin = pe.rope_tables #pe.rope<rotary_dim = 32> %p : tensor<?xi32> -> tensor<?x16xf32>
  %y = pe.rope #pe.rope<rotary_dim = 32> %x, %p layout(bshd) tables(%cos, %sin : tensor<?x16xf32>, tensor<?x16xf32>) : tensor<2x?x4x32xf16>, tensor<?xi32>
  return %y : tensor<2x?x4x32xf16>
}

// CHECK-LABEL: func.func @tables
func.func @tables(%p: tensor<?xi32>, %bp: tensor<4x?xi64>) -> (tensor<?x32xf32>, tensor<4x?x8xbf16>) {
  // CHECK: %cos, %sin = pe.rope_tables #pe.rope<rotary_dim = 64> %{{.*}} : tensor<?xi32> -> tensor<?x32xf32>
  // GENERIC: "pe.rope_tables"(%{{.*}}) <{rope = #pe.rope<rotary_dim = 64>}> : (tensor<?xi32>) -> (tensor<?x32xf32>, tensor<?x32xf32>)
  %cos, %sin = pe.rope_tables #pe.rope<rotary_dim = 64> %p : tensor<?xi32> -> tensor<?x32xf32>
  // CHECK: pe.rope_tables #pe.rope<rotary_dim = 8, rotary_offset = 64> %{{.*}} : tensor<?xi32> -> tensor<?x4xf32>
  %c4, %s4 = pe.rope_tables #pe.rope<rotary_offset = 64, rotary_dim = 8> %p : tensor<?xi32> -> tensor<?x4xf32>
  // The rotary details print after the scaling, defaults omitted.
  // CHECK: pe.rope_tables #pe.rope<theta = 500000.0, rotary_dim = 8, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 64, extrapolation_factor = 0.5>, freq_factors = [1.0, 2.0, 4.0, 8.0], magnitude = 0.75> %{{.*}} : tensor<?xi32> -> tensor<?x4xf32>
  %c3, %s3 = pe.rope_tables #pe.rope<magnitude = 0.75, freq_factors = [1.0, 2.0, 4.0, 8.0], theta = 500000.0, rotary_dim = 8, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 64, extrapolation_factor = 0.5>> %p : tensor<?xi32> -> tensor<?x4xf32>
  // CHECK: pe.rope_tables #pe.rope<rotary_dim = 16, scaling = #pe.yarn<factor = 2.0, original_max_position_embeddings = 2048>> %{{.*}} : tensor<4x?xi64> -> tensor<4x?x8xbf16>
  %c2, %s2 = pe.rope_tables #pe.rope<rotary_dim = 16, scaling = #pe.yarn<factor = 2.0, original_max_position_embeddings = 2048>> %bp : tensor<4x?xi64> -> tensor<4x?x8xbf16>
  return %cos, %c2 : tensor<?x32xf32>, tensor<4x?x8xbf16>
}

// CHECK-LABEL: func.func @absolute
func.func @absolute(%p: tensor<?xi32>, %bp: tensor<2x16xi64>, %wpe: tensor<1024x768xf16>, %ts: tensor<4xf32>) -> (tensor<?x512xf32>, tensor<2x16x64xbf16>, tensor<?x768xf16>, tensor<2x16x768xf16>) {
  // CHECK: pe.sinusoidal %{{.*}} : tensor<?xi32> -> tensor<?x512xf32>
  // GENERIC: "pe.sinusoidal"(%{{.*}}) <{base = 1.000000e+04 : f64, layout = 0 : i32, scale = 1.000000e+00 : f64, spacing = 0 : i32}>
  %0 = pe.sinusoidal %p : tensor<?xi32> -> tensor<?x512xf32>
  // CHECK: pe.sinusoidal %{{.*}} base(5.000000e+02) layout(concat) spacing(fairseq) : tensor<2x16xi64> -> tensor<2x16x64xbf16>
  %1 = pe.sinusoidal %bp base(500.0) layout(concat) spacing(fairseq) : tensor<2x16xi64> -> tensor<2x16x64xbf16>
  // CHECK: pe.sinusoidal %{{.*}} layout(concat) odd(sin) : tensor<2x16xi64> -> tensor<2x16x7xf32>
  %m = pe.sinusoidal %bp layout(concat) odd(sin) : tensor<2x16xi64> -> tensor<2x16x7xf32>
  // CHECK: pe.sinusoidal %{{.*}} layout(concat) spacing(fairseq) odd(zero) padding_idx(1) : tensor<2x16xi64> -> tensor<2x16x9xf32>
  %f = pe.sinusoidal %bp layout(concat) spacing(fairseq) odd(zero) padding_idx(1) : tensor<2x16xi64> -> tensor<2x16x9xf32>
  // CHECK: pe.sinusoidal %{{.*}} layout(concat) freq_shift(0.000000e+00) scale(1.000000e+03) cos_first : tensor<4xf32> -> tensor<4x320xbf16>
  // GENERIC: "pe.sinusoidal"(%{{.*}}) <{base = 1.000000e+04 : f64, cos_first, freq_shift = 0.000000e+00 : f64, layout = 1 : i32, scale = 1.000000e+03 : f64, spacing = 0 : i32}> : (tensor<4xf32>) -> tensor<4x320xbf16>
  %t = pe.sinusoidal %ts layout(concat) freq_shift(0.0) scale(1000.0) cos_first : tensor<4xf32> -> tensor<4x320xbf16>
  // CHECK: pe.learned %{{.*}}[%{{.*}}] : tensor<1024x768xf16>, tensor<?xi32> -> tensor<?x768xf16>
  // GENERIC: "pe.learned"(%{{.*}}, %{{.*}}) : (tensor<1024x768xf16>, tensor<?xi32>) -> tensor<?x768xf16>
  %2 = pe.learned %wpe[%p] : tensor<1024x768xf16>, tensor<?xi32> -> tensor<?x768xf16>
  %3 = pe.learned %wpe[%bp] : tensor<1024x768xf16>, tensor<2x16xi64> -> tensor<2x16x768xf16>
  return %0, %1, %2, %3 : tensor<?x512xf32>, tensor<2x16x64xbf16>, tensor<?x768xf16>, tensor<2x16x768xf16>
}

// Empty tensors are valid whatever their other dimensions.
// CHECK-LABEL: func.func @empty
// CHECK: pe.sinusoidal %{{.*}} : tensor<4611686018427387904x0xi32> -> tensor<4611686018427387904x0x64xf32>
func.func @empty(%p: tensor<4611686018427387904x0xi32>) -> tensor<4611686018427387904x0x64xf32> {
  %e = pe.sinusoidal %p : tensor<4611686018427387904x0xi32> -> tensor<4611686018427387904x0x64xf32>
  return %e : tensor<4611686018427387904x0x64xf32>
}

// CHECK-LABEL: func.func @alibi
func.func @alibi(%qp: tensor<16xi32>, %kp: tensor<?xi32>, %bq: tensor<2x16xi64>) -> (tensor<12x16x?xf32>, tensor<2x12x16x?xbf16>) {
  // CHECK: pe.alibi_slopes : tensor<12xf32>
  // GENERIC: "pe.alibi_slopes"() <{max_bias = 8.000000e+00 : f64}> : () -> tensor<12xf32>
  %s = pe.alibi_slopes : tensor<12xf32>
  // CHECK: pe.alibi_slopes max_bias(1.600000e+01) : tensor<12xf64>
  %s64 = pe.alibi_slopes max_bias(16.0) : tensor<12xf64>
  // CHECK: pe.alibi_bias causal %{{.*}}, %{{.*}}, %{{.*}} : tensor<12xf32>, tensor<16xi32>, tensor<?xi32> -> tensor<12x16x?xf32>
  // GENERIC: "pe.alibi_bias"(%{{.*}}, %{{.*}}, %{{.*}}) <{mode = 0 : i32}>
  %0 = pe.alibi_bias causal %s, %qp, %kp : tensor<12xf32>, tensor<16xi32>, tensor<?xi32> -> tensor<12x16x?xf32>
  // CHECK: pe.alibi_bias symmetric %{{.*}}, %{{.*}}, %{{.*}} : tensor<12xf32>, tensor<2x16xi64>, tensor<?xi32> -> tensor<2x12x16x?xbf16>
  %1 = pe.alibi_bias symmetric %s, %bq, %kp : tensor<12xf32>, tensor<2x16xi64>, tensor<?xi32> -> tensor<2x12x16x?xbf16>
  return %0, %1 : tensor<12x16x?xf32>, tensor<2x12x16x?xbf16>
}

// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<1x32x?x128xbf16>, %k: tensor<1x8x?x128xbf16>, %v: tensor<1x8x?x128xbf16>,
                     %qp: tensor<?xi32>, %kp: tensor<?xi32>, %mask: tensor<1x1x?x?xf32>,
                     %q1: tensor<?x8x1x64xf32>, %k1: tensor<?x1x4096x64xf32>, %v1: tensor<?x1x4096x32xf32>, %bkp: tensor<?x4096xi64>)
    -> (tensor<1x32x?x128xbf16>, tensor<1x32x?x128xbf16>, tensor<?x8x1x32xf32>, tensor<1x32x?x128xbf16>) {
  // CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} causal : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16> -> tensor<1x32x?x128xbf16>
  // GENERIC: "pe.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>}>
  %0 = pe.attention %q, %k, %v causal : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16> -> tensor<1x32x?x128xbf16>
  // CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<1x1x?x?xf32>) q_positions(%{{.*}} : tensor<?xi32>) k_positions(%{{.*}} : tensor<?xi32>) scale(1.250000e-01) causal window(4096) rope(#pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>) : tensor<1x32x?x128xbf16>
  // GENERIC: "pe.attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>, rope = #pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>, scale = 1.250000e-01 : f64, window = 4096 : i64}>
  %1 = pe.attention %q, %k, %v mask(%mask : tensor<1x1x?x?xf32>) q_positions(%qp : tensor<?xi32>) k_positions(%kp : tensor<?xi32>)
         scale(0.125) causal window(4096)
         rope(#pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>)
         : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16> -> tensor<1x32x?x128xbf16>
  // MQA decode with per-batch key positions and a value head dim of 32.
  // CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} k_positions(%{{.*}} : tensor<?x4096xi64>) alibi(8.000000e+00) : tensor<?x8x1x64xf32>, tensor<?x1x4096x64xf32>, tensor<?x1x4096x32xf32> -> tensor<?x8x1x32xf32>
  %2 = pe.attention %q1, %k1, %v1 k_positions(%bkp : tensor<?x4096xi64>) alibi(8.0) : tensor<?x8x1x64xf32>, tensor<?x1x4096x64xf32>, tensor<?x1x4096x32xf32> -> tensor<?x8x1x32xf32>
  // CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} window(128) softcap(5.000000e+01) : tensor<1x32x?x128xbf16>
  // GENERIC: "pe.attention"({{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>, softcap = 5.000000e+01 : f64, window = 128 : i64}>
  %3 = pe.attention %q, %k, %v window(128) softcap(50.0) : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16> -> tensor<1x32x?x128xbf16>
  return %0, %1, %2, %3 : tensor<1x32x?x128xbf16>, tensor<1x32x?x128xbf16>, tensor<?x8x1x32xf32>, tensor<1x32x?x128xbf16>
}

// Real parameters print as the shortest decimal that reads back to the same
// double (a hex form would read back as an integer).
// CHECK-LABEL: func.func @exact_parameters
// CHECK: #pe.rope<theta = 123456789.0, rotary_dim = 8, scaling = #pe.yarn<factor = 0.1, original_max_position_embeddings = 64, beta_fast = 1.0e+16, beta_slow = 1.0e-05, attention_factor = 0.30000000000000004>>
// CHECK: #pe.rope<theta = 1.0e+300, rotary_dim = 8, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 64, beta_fast = 9999999999999998.0, beta_slow = 5.0e-324, mscale = -0.0, mscale_all_dim = 0.0001>>
func.func @exact_parameters() -> (tensor<4xf32>, tensor<4xf32>) {
  %f = pe.rope_frequencies #pe.rope<theta = 123456789.0, rotary_dim = 8, scaling = #pe.yarn<factor = 0.1, original_max_position_embeddings = 64, beta_fast = 1.0e16, beta_slow = 0.00001, attention_factor = 0.30000000000000004>> -> tensor<4xf32>
  %g = pe.rope_frequencies #pe.rope<theta = 1.0e300, rotary_dim = 8, scaling = #pe.yarn<factor = 4, original_max_position_embeddings = 64, beta_fast = 9999999999999998.0, beta_slow = 4.9406564584124654e-324, mscale = -0.0, mscale_all_dim = 0.0001>> -> tensor<4xf32>
  return %f, %g : tensor<4xf32>, tensor<4xf32>
}

// KV cache appends: dense (the default layout, not printed), paged nhd and
// hnd, with and without a rotation of the keys.
// CHECK-LABEL: func.func @append_kv
// CHECK: pe.append_kv %{{.*}}, %{{.*}} into %{{.*}}, %{{.*}} slots(%{{.*}} : tensor<?xi64>) : tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16> -> tensor<1x8x4096x128xbf16>, tensor<1x8x4096x128xbf16>
// CHECK: pe.append_kv %{{.*}}, %{{.*}} into %{{.*}}, %{{.*}} slots(%{{.*}} : tensor<?xi64>) positions(%{{.*}} : tensor<?xi32>) layout(nhd) rope(#pe.rope<theta = 500000.0, rotary_dim = 128>) : tensor<?x8x128xf32>, tensor<?x8x64xf32> -> tensor<?x16x8x128xf32>, tensor<?x16x8x64xf32>
// CHECK: pe.append_kv %{{.*}}, %{{.*}} into %{{.*}}, %{{.*}} slots(%{{.*}} : tensor<?xi32>) layout(hnd) : tensor<?x8x128xf16>
func.func @append_kv(%k: tensor<1x8x?x128xbf16>, %kc: tensor<1x8x4096x128xbf16>, %s: tensor<?xi64>,
                     %pk: tensor<?x8x128xf32>, %pv: tensor<?x8x64xf32>, %pkc: tensor<?x16x8x128xf32>,
                     %pvc: tensor<?x16x8x64xf32>, %pos: tensor<?xi32>,
                     %hk: tensor<?x8x128xf16>, %hc: tensor<64x8x16x128xf16>, %hs: tensor<?xi32>)
    -> (tensor<1x8x4096x128xbf16>, tensor<?x16x8x128xf32>, tensor<64x8x16x128xf16>) {
  %a, %b = pe.append_kv %k, %k into %kc, %kc slots(%s : tensor<?xi64>) : tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16> -> tensor<1x8x4096x128xbf16>, tensor<1x8x4096x128xbf16>
  %c, %d = pe.append_kv %pk, %pv into %pkc, %pvc slots(%s : tensor<?xi64>) positions(%pos : tensor<?xi32>) layout(nhd) rope(#pe.rope<theta = 500000.0, rotary_dim = 128>) : tensor<?x8x128xf32>, tensor<?x8x64xf32> -> tensor<?x16x8x128xf32>, tensor<?x16x8x64xf32>
  %e, %f = pe.append_kv %hk, %hk into %hc, %hc slots(%hs : tensor<?xi32>) layout(hnd) : tensor<?x8x128xf16>, tensor<?x8x128xf16> -> tensor<64x8x16x128xf16>, tensor<64x8x16x128xf16>
  return %a, %c, %e : tensor<1x8x4096x128xbf16>, tensor<?x16x8x128xf32>, tensor<64x8x16x128xf16>
}

// Paged attention: nhd (the default layout, not printed) and hnd.
// CHECK-LABEL: func.func @paged_attention
// CHECK: pe.paged_attention %{{.*}}, %{{.*}}, %{{.*}} block_table(%{{.*}} : tensor<8x64xi32>) kv_lens(%{{.*}} : tensor<8xi32>) cu_seqlens(%{{.*}} : tensor<9xi32>) causal rope(#pe.rope<theta = 500000.0, rotary_dim = 128>) : tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16> -> tensor<?x32x128xbf16>
// CHECK: pe.paged_attention %{{.*}}, %{{.*}}, %{{.*}} block_table(%{{.*}} : tensor<8x64xi32>) kv_lens(%{{.*}} : tensor<8xi32>) cu_seqlens(%{{.*}} : tensor<9xi32>) layout(hnd) scale(1.250000e-01) window(256) alibi(8.000000e+00) softcap(3.000000e+01) : tensor<?x8x64xf32>, tensor<?x1x16x64xf32>, tensor<?x1x16x32xf32> -> tensor<?x8x32xf32>
func.func @paged_attention(%q: tensor<?x32x128xbf16>, %kc: tensor<?x16x8x128xbf16>, %bt: tensor<8x64xi32>,
                           %lens: tensor<8xi32>, %cu: tensor<9xi32>, %q2: tensor<?x8x64xf32>,
                           %kc2: tensor<?x1x16x64xf32>, %vc2: tensor<?x1x16x32xf32>)
    -> (tensor<?x32x128xbf16>, tensor<?x8x32xf32>) {
  %0 = pe.paged_attention %q, %kc, %kc block_table(%bt : tensor<8x64xi32>) kv_lens(%lens : tensor<8xi32>) cu_seqlens(%cu : tensor<9xi32>) causal rope(#pe.rope<theta = 500000.0, rotary_dim = 128>) : tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16> -> tensor<?x32x128xbf16>
  %1 = pe.paged_attention %q2, %kc2, %vc2 block_table(%bt : tensor<8x64xi32>) kv_lens(%lens : tensor<8xi32>) cu_seqlens(%cu : tensor<9xi32>) layout(hnd) scale(0.125) window(256) alibi(8.0) softcap(30.0) : tensor<?x8x64xf32>, tensor<?x1x16x64xf32>, tensor<?x1x16x32xf32> -> tensor<?x8x32xf32>
  return %0, %1 : tensor<?x32x128xbf16>, tensor<?x8x32xf32>
}

// One sequence's rows of a paged cache: nhd (the default, not printed) and hnd.
// CHECK-LABEL: func.func @gather_pages
// CHECK: pe.gather_pages %{{.*}} block_table(%{{.*}} : tensor<8x64xi32>) sequence(%{{.*}}) length(%{{.*}}) : tensor<?x16x8x128xbf16> -> tensor<1x8x?x128xbf16>
// CHECK: pe.gather_pages %{{.*}} block_table(%{{.*}} : tensor<8x64xi32>) sequence(%{{.*}}) length(%{{.*}}) layout(hnd) : tensor<?x1x16x32xf32> -> tensor<1x1x?x32xf32>
func.func @gather_pages(%kc: tensor<?x16x8x128xbf16>, %vc: tensor<?x1x16x32xf32>, %bt: tensor<8x64xi32>,
                        %b: index, %n: index) -> (tensor<1x8x?x128xbf16>, tensor<1x1x?x32xf32>) {
  %0 = pe.gather_pages %kc block_table(%bt : tensor<8x64xi32>) sequence(%b) length(%n) layout(nhd) : tensor<?x16x8x128xbf16> -> tensor<1x8x?x128xbf16>
  %1 = pe.gather_pages %vc block_table(%bt : tensor<8x64xi32>) sequence(%b) length(%n) layout(hnd) : tensor<?x1x16x32xf32> -> tensor<1x1x?x32xf32>
  return %0, %1 : tensor<1x8x?x128xbf16>, tensor<1x1x?x32xf32>
}

// Attention sinks: one logit per query head.
// CHECK-LABEL: func.func @attention_sinks
// CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} sinks(%{{.*}} : tensor<8xbf16>) causal window(128) : tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x8x?x64xbf16>
func.func @attention_sinks(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x2x?x64xbf16>, %s: tensor<8xbf16>) -> tensor<1x8x?x64xbf16> {
  %o = pe.attention %q, %k, %k sinks(%s : tensor<8xbf16>) causal window(128) : tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x8x?x64xbf16>
  return %o : tensor<1x8x?x64xbf16>
}

// Multi-head latent attention: each key head's 128 channels, then the
// rotated block that every head shares (192 query channels).
// CHECK-LABEL: func.func @attention_shared_key
// GENERIC: "pe.attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 1>
// CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} shared_key(%{{.*}} : tensor<2x1x?x64xbf16>) causal rope(#pe.rope<rotary_dim = 64, rotary_offset = 128>) : tensor<2x16x?x192xbf16>, tensor<2x16x?x128xbf16>, tensor<2x16x?x128xbf16> -> tensor<2x16x?x128xbf16>
func.func @attention_shared_key(%q: tensor<2x16x?x192xbf16>, %k: tensor<2x16x?x128xbf16>, %ks: tensor<2x1x?x64xbf16>) -> tensor<2x16x?x128xbf16> {
  %o = pe.attention %q, %k, %k shared_key(%ks : tensor<2x1x?x64xbf16>) causal rope(#pe.rope<rotary_dim = 64, rotary_offset = 128>) : tensor<2x16x?x192xbf16>, tensor<2x16x?x128xbf16>, tensor<2x16x?x128xbf16> -> tensor<2x16x?x128xbf16>
  return %o : tensor<2x16x?x128xbf16>
}

// Multi-stream RoPE: positions [A, S] or [B, A, S], tables per token.
// CHECK-LABEL: func.func @multi_stream
func.func @multi_stream(%x: tensor<2x4x?x128xbf16>, %p: tensor<3x?xi64>, %bp: tensor<2x4x?xi32>,
                        %q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>, %qp: tensor<1x3x?xi64>, %kp: tensor<3x?xi64>)
    -> (tensor<2x4x?x128xbf16>, tensor<2x?x32xf32>, tensor<1x8x?x64xf32>) {
  // CHECK: pe.rope #pe.rope<theta = 1000000.0, rotary_dim = 128, sections = [16, 24, 24]> %{{.*}}, %{{.*}} : tensor<2x4x?x128xbf16>, tensor<3x?xi64>
  %y = pe.rope #pe.rope<theta = 1000000.0, rotary_dim = 128, sections = [16, 24, 24], section_mode = contiguous> %x, %p : tensor<2x4x?x128xbf16>, tensor<3x?xi64>
  // CHECK: pe.rope_tables #pe.rope<rotary_dim = 64, style = interleaved, sections = [8, 8, 8, 8], section_mode = axes> %{{.*}} : tensor<2x4x?xi32> -> tensor<2x?x32xf32>
  %c, %s = pe.rope_tables #pe.rope<rotary_dim = 64, style = interleaved, sections = [8, 8, 8, 8], section_mode = axes> %bp : tensor<2x4x?xi32> -> tensor<2x?x32xf32>
  // CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} causal rope(#pe.rope<rotary_dim = 64, sections = [12, 10, 10], section_mode = interleaved>) rope_positions(%{{.*}}, %{{.*}} : tensor<1x3x?xi64>, tensor<3x?xi64>)
  // GENERIC: "pe.attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 1, 1, 0>
  %o = pe.attention %q, %k, %k causal rope(#pe.rope<rotary_dim = 64, sections = [12, 10, 10], section_mode = interleaved>) rope_positions(%qp, %kp : tensor<1x3x?xi64>, tensor<3x?xi64>) : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  return %y, %c, %o : tensor<2x4x?x128xbf16>, tensor<2x?x32xf32>, tensor<1x8x?x64xf32>
}

// Chunked attention (Llama 4), also over a paged cache.
// CHECK-LABEL: func.func @chunked
// CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} causal chunk(8192) rope(#pe.rope<rotary_dim = 64>) :
// GENERIC: "pe.attention"{{.*}}chunk = 8192 : i64
// CHECK: pe.paged_attention {{.*}} causal window(128) chunk(64) :
func.func @chunked(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>, %pq: tensor<?x8x64xf32>,
                   %c: tensor<?x16x2x64xf32>, %bt: tensor<2x4xi32>, %l: tensor<2xi32>, %cu: tensor<3xi32>)
    -> (tensor<1x8x?x64xf32>, tensor<?x8x64xf32>) {
  %o = pe.attention %q, %k, %k causal chunk(8192) rope(#pe.rope<rotary_dim = 64>) : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  %p = pe.paged_attention %pq, %c, %c block_table(%bt : tensor<2x4xi32>) kv_lens(%l : tensor<2xi32>) cu_seqlens(%cu : tensor<3xi32>) causal window(128) chunk(64) : tensor<?x8x64xf32>, tensor<?x16x2x64xf32>, tensor<?x16x2x64xf32> -> tensor<?x8x64xf32>
  return %o, %p : tensor<1x8x?x64xf32>, tensor<?x8x64xf32>
}

// Query temperature tuning (Llama 4's NoPE layers).
// CHECK-LABEL: func.func @temperature
// CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} causal temperature(#pe.temperature<floor_scale = 8192, attn_scale = 0.1>) :
func.func @temperature(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %o = pe.attention %q, %k, %k causal temperature(#pe.temperature<floor_scale = 8192, attn_scale = 0.1>) : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}
