// Llama 4's chunked attention (attention_chunk_size = 8192; GQA 40/8, causal,
// RoPE) in bf16 on tensor cores, and a decode step of it.
func.func @llama4_chunked(%q: tensor<1x40x?x128xbf16>, %k: tensor<1x8x?x128xbf16>,
                          %v: tensor<1x8x?x128xbf16>) -> tensor<1x40x?x128xbf16> {
  %o = pe.attention %q, %k, %v causal chunk(8192) rope(#pe.rope<theta = 500000.0, rotary_dim = 128>)
         : tensor<1x40x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16>
         -> tensor<1x40x?x128xbf16>
  return %o : tensor<1x40x?x128xbf16>
}

func.func @llama4_chunked_decode(%q: tensor<4x40x1x128xbf16>, %k: tensor<4x8x?x128xbf16>,
                                 %v: tensor<4x8x?x128xbf16>) -> tensor<4x40x1x128xbf16> {
  %o = pe.attention %q, %k, %v causal chunk(8192)
         : tensor<4x40x1x128xbf16>, tensor<4x8x?x128xbf16>, tensor<4x8x?x128xbf16>
         -> tensor<4x40x1x128xbf16>
  return %o : tensor<4x40x1x128xbf16>
}

// Its NoPE layers: full causal attention with the queries tuned by position.
func.func @llama4_nope(%q: tensor<1x40x?x128xbf16>, %k: tensor<1x8x?x128xbf16>,
                       %v: tensor<1x8x?x128xbf16>) -> tensor<1x40x?x128xbf16> {
  %o = pe.attention %q, %k, %v causal
         temperature(#pe.temperature<floor_scale = 8192, attn_scale = 0.1>)
         : tensor<1x40x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16>
         -> tensor<1x40x?x128xbf16>
  return %o : tensor<1x40x?x128xbf16>
}
