// Gemma 2's attention: logit soft-capping at 50, a sliding window, GQA,
// half-split RoPE, bf16 (D = 128 here: the tensor-core kernel's largest).
func.func @gemma2(%q: tensor<1x16x?x128xbf16>, %k: tensor<1x8x?x128xbf16>,
                  %v: tensor<1x8x?x128xbf16>) -> tensor<1x16x?x128xbf16> {
  %o = pe.attention %q, %k, %v causal window(4096)
       rope(#pe.rope<theta = 10000.0, rotary_dim = 128>) softcap(50.0)
       : tensor<1x16x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16> -> tensor<1x16x?x128xbf16>
  return %o : tensor<1x16x?x128xbf16>
}
