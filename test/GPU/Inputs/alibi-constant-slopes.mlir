func.func @mqa_alibi(%q: tensor<1x8x37x64xbf16>, %k: tensor<1x1x40x64xbf16>, %v: tensor<1x1x40x64xbf16>) -> tensor<1x8x37x64xbf16> {
  %o = pe.attention %q, %k, %v causal alibi(8.0) : tensor<1x8x37x64xbf16>, tensor<1x1x40x64xbf16>, tensor<1x1x40x64xbf16> -> tensor<1x8x37x64xbf16>
  return %o : tensor<1x8x37x64xbf16>
}
