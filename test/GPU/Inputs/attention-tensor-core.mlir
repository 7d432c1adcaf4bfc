// pe.attention that the tensor-core kernel takes (pe-gpu-mma-attention):
// every RoPE style, ALiBi, masks, windows, GQA/MQA, D = 64 and 128.

// Llama 3 prefill: GQA 32/8, D = 128, causal, llama3 RoPE, bf16.
func.func @llama3(%q: tensor<1x32x?x128xbf16>, %k: tensor<1x8x?x128xbf16>,
                  %v: tensor<1x8x?x128xbf16>) -> tensor<1x32x?x128xbf16> {
  %o = pe.attention %q, %k, %v causal
       rope(#pe.rope<theta = 500000.0, rotary_dim = 128,
            scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>)
       : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16> -> tensor<1x32x?x128xbf16>
  return %o : tensor<1x32x?x128xbf16>
}

// MHA f16, D = 64, sliding window, interleaved partial RoPE with YaRN,
// arbitrary batched positions.
func.func @window_yarn(%q: tensor<?x8x?x64xf16>, %k: tensor<?x8x?x64xf16>,
                       %v: tensor<?x8x?x64xf16>, %qp: tensor<?x?xi64>,
                       %kp: tensor<?x?xi64>) -> tensor<?x8x?x64xf16> {
  %o = pe.attention %q, %k, %v q_positions(%qp : tensor<?x?xi64>) k_positions(%kp : tensor<?x?xi64>)
       causal window(256)
       rope(#pe.rope<theta = 10000.0, rotary_dim = 32, style = interleaved,
            scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 4096>>)
       : tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16> -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

// MQA with ALiBi and an additive mask, no RoPE, D = 64, Dv = 128.
func.func @alibi_mask(%q: tensor<2x16x?x64xbf16>, %k: tensor<2x1x?x64xbf16>,
                      %v: tensor<2x1x?x128xbf16>, %m: tensor<2x1x?x?xf32>) -> tensor<2x16x?x128xbf16> {
  %o = pe.attention %q, %k, %v mask(%m : tensor<2x1x?x?xf32>) alibi(8.0)
       : tensor<2x16x?x64xbf16>, tensor<2x1x?x64xbf16>, tensor<2x1x?x128xbf16> -> tensor<2x16x?x128xbf16>
  return %o : tensor<2x16x?x128xbf16>
}

// Phi-2: MHA f16, D = 80 (32-key tiles: 320 copies of 16 bytes per V tile,
// not a multiple of the 128 threads), partial RoPE (32 of 80), causal.
func.func @phi2(%q: tensor<1x32x?x80xf16>, %k: tensor<1x32x?x80xf16>,
                %v: tensor<1x32x?x80xf16>) -> tensor<1x32x?x80xf16> {
  %o = pe.attention %q, %k, %v causal rope(#pe.rope<theta = 10000.0, rotary_dim = 32>)
       : tensor<1x32x?x80xf16>, tensor<1x32x?x80xf16>, tensor<1x32x?x80xf16> -> tensor<1x32x?x80xf16>
  return %o : tensor<1x32x?x80xf16>
}

// Decode: one query of GQA 32/8 against a long KV cache, D = 128: the keys
// split across blocks (partial states), then merged.
func.func @decode(%q: tensor<1x32x1x128xbf16>, %k: tensor<1x8x?x128xbf16>,
                  %v: tensor<1x8x?x128xbf16>) -> tensor<1x32x1x128xbf16> {
  %o = pe.attention %q, %k, %v causal rope(#pe.rope<theta = 500000.0, rotary_dim = 128>)
       : tensor<1x32x1x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16> -> tensor<1x32x1x128xbf16>
  return %o : tensor<1x32x1x128xbf16>
}
