// pe.attention that the GPU attention kernel takes (D = 64): prefill with
// llama3 RoPE, GQA 32/8, causal, bf16; decode of one query with ALiBi and a
// window over a long KV cache (keys split across threads, then merged).
func.func @prefill(%q: tensor<1x32x?x64xbf16>, %k: tensor<1x8x?x64xbf16>,
                   %v: tensor<1x8x?x64xbf16>) -> tensor<1x32x?x64xbf16> {
  %o = pe.attention %q, %k, %v causal
       rope(#pe.rope<theta = 500000.0, rotary_dim = 64,
            scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>)
       : tensor<1x32x?x64xbf16>, tensor<1x8x?x64xbf16>, tensor<1x8x?x64xbf16> -> tensor<1x32x?x64xbf16>
  return %o : tensor<1x32x?x64xbf16>
}

func.func @decode(%q: tensor<1x16x1x64xf16>, %k: tensor<1x16x?x64xf16>,
                  %v: tensor<1x16x?x64xf16>) -> tensor<1x16x1x64xf16> {
  %o = pe.attention %q, %k, %v causal window(4096) alibi(8.0)
       : tensor<1x16x1x64xf16>, tensor<1x16x?x64xf16>, tensor<1x16x?x64xf16> -> tensor<1x16x1x64xf16>
  return %o : tensor<1x16x1x64xf16>
}
