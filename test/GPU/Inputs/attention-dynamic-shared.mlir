// Gemma's heads (D = Dv = 256), DeepSeek-V3's expanded latent heads
// (D = 192, Dv = 128) and the largest tiles (D = 256, Dv = 128: 32 keys),
// bf16, static shapes: the tensor-core kernel's tiles exceed 48 KiB, so they
// are dynamic shared memory asked for at launch.
func.func @gemma(%q: tensor<1x8x64x256xbf16>, %k: tensor<1x4x64x256xbf16>,
                 %v: tensor<1x4x64x256xbf16>) -> tensor<1x8x64x256xbf16> {
  %o = pe.attention %q, %k, %v causal rope(#pe.rope<rotary_dim = 256>)
       : tensor<1x8x64x256xbf16>, tensor<1x4x64x256xbf16>, tensor<1x4x64x256xbf16> -> tensor<1x8x64x256xbf16>
  return %o : tensor<1x8x64x256xbf16>
}

func.func @mla(%q: tensor<1x8x64x192xbf16>, %k: tensor<1x8x64x192xbf16>,
               %v: tensor<1x8x64x128xbf16>) -> tensor<1x8x64x128xbf16> {
  %o = pe.attention %q, %k, %v causal
       rope(#pe.rope<rotary_dim = 64, style = interleaved, rotary_offset = 128>)
       : tensor<1x8x64x192xbf16>, tensor<1x8x64x192xbf16>, tensor<1x8x64x128xbf16> -> tensor<1x8x64x128xbf16>
  return %o : tensor<1x8x64x128xbf16>
}

func.func @widest(%q: tensor<1x8x64x256xbf16>, %k: tensor<1x2x64x256xbf16>,
                  %v: tensor<1x2x64x128xbf16>) -> tensor<1x8x64x128xbf16> {
  %o = pe.attention %q, %k, %v causal
       : tensor<1x8x64x256xbf16>, tensor<1x2x64x256xbf16>, tensor<1x2x64x128xbf16> -> tensor<1x8x64x128xbf16>
  return %o : tensor<1x8x64x128xbf16>
}
