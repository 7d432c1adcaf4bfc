// One function per positional-encoding family, together using every op of the
// pe dialect. `pe-opt examples/every-op.mlir -canonicalize` folds what is
// known at compile time (frequencies, slopes, tables of constant positions).

// A LLaMA-3.1-8B attention layer: llama3-scaled RoPE on Q and K, GQA with 32
// query heads and 8 key/value heads, causal, over a KV cache whose keys sit at
// positions 0..Skv-1 and whose queries are the last Sq tokens.
func.func @llama31_layer(%q: tensor<1x32x?x128xbf16>, %k: tensor<1x8x?x128xbf16>,
                         %v: tensor<1x8x?x128xbf16>, %q_pos: tensor<?xi32>,
                         %k_pos: tensor<?xi32>) -> (tensor<1x32x?x128xbf16>, tensor<64xf32>) {
  %freqs = pe.rope_frequencies #pe.rope<theta = 500000.0, rotary_dim = 128,
             scaling = #pe.llama3<factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0,
                                  original_max_position_embeddings = 8192>> -> tensor<64xf32>
  %q_rot = pe.rope #pe.rope<theta = 500000.0, rotary_dim = 128,
             scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>
             %q, %q_pos : tensor<1x32x?x128xbf16>, tensor<?xi32>
  %k_rot = pe.rope #pe.rope<theta = 500000.0, rotary_dim = 128,
             scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>
             %k, %k_pos : tensor<1x8x?x128xbf16>, tensor<?xi32>
  %out = pe.attention %q_rot, %k_rot, %v q_positions(%q_pos : tensor<?xi32>)
           k_positions(%k_pos : tensor<?xi32>) causal
           : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16>
           -> tensor<1x32x?x128xbf16>
  return %out, %freqs : tensor<1x32x?x128xbf16>, tensor<64xf32>
}

// The same attention with RoPE fused into the op, YaRN scaling and a 4096-token
// sliding window (Mistral-style), and the cos/sin tables of the first 4
// positions (constant, so they fold).
func.func @yarn_window(%q: tensor<2x16x?x64xf32>, %k: tensor<2x4x?x64xf32>,
                       %v: tensor<2x4x?x64xf32>) -> (tensor<2x16x?x64xf32>, tensor<4x16xf32>) {
  %out = pe.attention %q, %k, %v causal window(4096)
           rope(#pe.rope<rotary_dim = 32, style = interleaved,
                scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 4096>>)
           : tensor<2x16x?x64xf32>, tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32> -> tensor<2x16x?x64xf32>
  %pos = arith.constant dense<[0, 1, 2, 3]> : tensor<4xi32>
  %cos, %sin = pe.rope_tables #pe.rope<rotary_dim = 32,
                 scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 4096>>
                 %pos : tensor<4xi32> -> tensor<4x16xf32>
  return %out, %sin : tensor<2x16x?x64xf32>, tensor<4x16xf32>
}

// BLOOM-style ALiBi with 12 heads (not a power of two): slopes fold, the bias
// is explicit here and fused into attention in the second form.
func.func @alibi(%q: tensor<1x12x?x64xf16>, %k: tensor<1x12x?x64xf16>, %v: tensor<1x12x?x64xf16>,
                 %q_pos: tensor<?xi32>, %k_pos: tensor<?xi32>)
    -> (tensor<1x12x?x64xf16>, tensor<1x12x?x64xf16>) {
  %slopes = pe.alibi_slopes : tensor<12xf32>
  %bias = pe.alibi_bias causal %slopes, %q_pos, %k_pos
            : tensor<12xf32>, tensor<?xi32>, tensor<?xi32> -> tensor<12x?x?xf32>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %bias, %c1 : tensor<12x?x?xf32>
  %skv = tensor.dim %bias, %c2 : tensor<12x?x?xf32>
  %mask = tensor.expand_shape %bias [[0, 1], [2], [3]] output_shape [1, 12, %sq, %skv]
            : tensor<12x?x?xf32> into tensor<1x12x?x?xf32>
  %explicit = pe.attention %q, %k, %v mask(%mask : tensor<1x12x?x?xf32>)
                : tensor<1x12x?x64xf16>, tensor<1x12x?x64xf16>, tensor<1x12x?x64xf16> -> tensor<1x12x?x64xf16>
  %fused = pe.attention %q, %k, %v q_positions(%q_pos : tensor<?xi32>)
             k_positions(%k_pos : tensor<?xi32>) causal alibi(8.0)
             : tensor<1x12x?x64xf16>, tensor<1x12x?x64xf16>, tensor<1x12x?x64xf16> -> tensor<1x12x?x64xf16>
  return %explicit, %fused : tensor<1x12x?x64xf16>, tensor<1x12x?x64xf16>
}

// Absolute encodings: a fairseq sinusoidal table and a GPT-2 learned table.
func.func @absolute(%pos: tensor<2x?xi64>, %wpe: tensor<1024x768xf32>)
    -> (tensor<2x?x512xf32>, tensor<2x?x768xf32>) {
  %sin = pe.sinusoidal %pos layout(concat) spacing(fairseq) : tensor<2x?xi64> -> tensor<2x?x512xf32>
  %learned = pe.learned %wpe[%pos] : tensor<1024x768xf32>, tensor<2x?xi64> -> tensor<2x?x768xf32>
  return %sin, %learned : tensor<2x?x512xf32>, tensor<2x?x768xf32>
}

// A diffusion timestep embedding: fractional timesteps, [cos | sin],
// diffusers' frequency shift 0, and a zero last channel (odd width).
func.func @timestep(%t: tensor<?xf32>) -> tensor<?x321xbf16> {
  %e = pe.sinusoidal %t layout(concat) freq_shift(0.0) cos_first odd(zero) : tensor<?xf32> -> tensor<?x321xbf16>
  return %e : tensor<?x321xbf16>
}
