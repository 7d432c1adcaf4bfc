// gpt-oss attention: 64 query heads over 8 KV heads of 64 channels, bf16,
// a sliding window of 128 and one attention sink per query head.
func.func @gpt_oss(%q: tensor<1x64x?x64xbf16>, %k: tensor<1x8x?x64xbf16>, %v: tensor<1x8x?x64xbf16>, %s: tensor<64xbf16>) -> tensor<1x64x?x64xbf16> {
  %o = pe.attention %q, %k, %v sinks(%s : tensor<64xbf16>) causal window(128) : tensor<1x64x?x64xbf16>, tensor<1x8x?x64xbf16>, tensor<1x8x?x64xbf16> -> tensor<1x64x?x64xbf16>
  return %o : tensor<1x64x?x64xbf16>
}
