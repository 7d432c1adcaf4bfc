// Absorbed latent attention (DeepSeek-V3's decode over the compressed
// cache): 128 query heads of 512 + 64 channels against one KV head whose
// first 512 channels are the values (a slice of the keys).
func.func @absorbed(%q: tensor<4x128x1x576xbf16>, %c: tensor<4x1x?x576xbf16>,
                    %qp: tensor<4x1xi64>, %kp: tensor<4x?xi64>) -> tensor<4x128x1x512xbf16> {
  %c2 = arith.constant 2 : index
  %s = tensor.dim %c, %c2 : tensor<4x1x?x576xbf16>
  %v = tensor.extract_slice %c[0, 0, 0, 0] [4, 1, %s, 512] [1, 1, 1, 1] : tensor<4x1x?x576xbf16> to tensor<4x1x?x512xbf16>
  %o = pe.attention %q, %c, %v q_positions(%qp : tensor<4x1xi64>) k_positions(%kp : tensor<4x?xi64>) causal
       rope(#pe.rope<theta = 10000.0, rotary_dim = 64, rotary_offset = 512, style = interleaved>)
       : tensor<4x128x1x576xbf16>, tensor<4x1x?x576xbf16>, tensor<4x1x?x512xbf16> -> tensor<4x128x1x512xbf16>
  return %o : tensor<4x128x1x512xbf16>
}
