// DeepSeek-V3's expanded latent attention (prefill): 16 heads of 128 own
// channels plus the 64 rotated channels of k_pe, one block per token that
// every key head shares; values of 128.
func.func @mla(%q: tensor<1x16x?x192xbf16>, %k: tensor<1x16x?x128xbf16>, %v: tensor<1x16x?x128xbf16>,
               %ks: tensor<1x1x?x64xbf16>, %p: tensor<?xi64>) -> tensor<1x16x?x128xbf16> {
  %o = pe.attention %q, %k, %v q_positions(%p : tensor<?xi64>) k_positions(%p : tensor<?xi64>)
         shared_key(%ks : tensor<1x1x?x64xbf16>) scale(0.1147) causal
         rope(#pe.rope<rotary_dim = 64, style = interleaved, rotary_offset = 128>)
         : tensor<1x16x?x192xbf16>, tensor<1x16x?x128xbf16>, tensor<1x16x?x128xbf16> -> tensor<1x16x?x128xbf16>
  return %o : tensor<1x16x?x128xbf16>
}
