// MLA-shaped rotation: the rope block trails the head (channels 64..127 of
// 128 rotate, 0..63 pass through), in the tensor-core attention kernel and
// in the RoPE kernel.
func.func @mla(%q: tensor<1x16x?x128xbf16>, %k: tensor<1x16x?x128xbf16>,
               %v: tensor<1x16x?x128xbf16>) -> tensor<1x16x?x128xbf16> {
  %o = pe.attention %q, %k, %v causal
       rope(#pe.rope<theta = 10000.0, rotary_dim = 64, rotary_offset = 64>)
       : tensor<1x16x?x128xbf16>, tensor<1x16x?x128xbf16>, tensor<1x16x?x128xbf16> -> tensor<1x16x?x128xbf16>
  return %o : tensor<1x16x?x128xbf16>
}

func.func @rope_block(%x: tensor<1x?x16x192xbf16>, %p: tensor<?xi64>) -> tensor<1x?x16x192xbf16> {
  %y = pe.rope #pe.rope<rotary_dim = 64, rotary_offset = 128> %x, %p layout(bshd) : tensor<1x?x16x192xbf16>, tensor<?xi64>
  return %y : tensor<1x?x16x192xbf16>
}
