// Qwen2-VL's text attention (M-RoPE, sections [16, 24, 24] over temporal,
// height and width positions; GQA 28/4, causal) in bf16, and its vision
// tower's rotation (two ladders, height and width, over 80 channels).
func.func @qwen2_vl_attention(%q: tensor<1x28x?x128xbf16>, %k: tensor<1x4x?x128xbf16>,
                              %v: tensor<1x4x?x128xbf16>, %p: tensor<3x?xi64>)
    -> tensor<1x28x?x128xbf16> {
  %o = pe.attention %q, %k, %v causal
         rope(#pe.rope<theta = 1000000.0, rotary_dim = 128, sections = [16, 24, 24]>)
         rope_positions(%p, %p : tensor<3x?xi64>, tensor<3x?xi64>)
         : tensor<1x28x?x128xbf16>, tensor<1x4x?x128xbf16>, tensor<1x4x?x128xbf16>
         -> tensor<1x28x?x128xbf16>
  return %o : tensor<1x28x?x128xbf16>
}

func.func @vision_rope(%x: tensor<1x16x?x80xbf16>, %hw: tensor<2x?xi32>) -> tensor<1x16x?x80xbf16> {
  %y = pe.rope #pe.rope<rotary_dim = 80, sections = [20, 20], section_mode = vision>
         %x, %hw : tensor<1x16x?x80xbf16>, tensor<2x?xi32>
  return %y : tensor<1x16x?x80xbf16>
}
