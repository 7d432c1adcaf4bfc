// RoPE as models use it, for the GPU RoPE kernel's PTX checks.

// LLaMA 3.1: bf16, half pairs, bhsd, llama3 scaling.
func.func @llama_bf16(%x: tensor<1x32x?x128xbf16>, %pos: tensor<?xi32>) -> tensor<1x32x?x128xbf16> {
  %r = pe.rope #pe.rope<theta = 500000.0, rotary_dim = 128,
         scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>
         %x, %pos : tensor<1x32x?x128xbf16>, tensor<?xi32>
  return %r : tensor<1x32x?x128xbf16>
}

// GPT-J: f16, interleaved pairs, bshd, partial rotary (64 of 256 channels).
func.func @gptj_f16(%x: tensor<?x?x16x256xf16>, %pos: tensor<?x?xi64>) -> tensor<?x?x16x256xf16> {
  %r = pe.rope #pe.rope<rotary_dim = 64, style = interleaved> %x, %pos layout(bshd)
         : tensor<?x?x16x256xf16>, tensor<?x?xi64>
  return %r : tensor<?x?x16x256xf16>
}

// Q and K of one layer share their tables (pe-share-rope-tables): f32, YaRN.
func.func @shared_f32(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>, %pos: tensor<?xi32>)
    -> (tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>) {
  %rq = pe.rope #pe.rope<rotary_dim = 64,
          scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 4096>>
          %q, %pos : tensor<1x8x?x64xf32>, tensor<?xi32>
  %rk = pe.rope #pe.rope<rotary_dim = 64,
          scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 4096>>
          %k, %pos : tensor<1x2x?x64xf32>, tensor<?xi32>
  return %rq, %rk : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>
}

// Dynamic NTK: the frequencies depend on the longest position, so they are
// computed at run time (f64 exp on the GPU, no libdevice).
func.func @ntk_dynamic(%x: tensor<1x4x?x64xf32>, %pos: tensor<?xi32>) -> tensor<1x4x?x64xf32> {
  %r = pe.rope #pe.rope<rotary_dim = 64,
         scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 2048>>
         %x, %pos : tensor<1x4x?x64xf32>, tensor<?xi32>
  return %r : tensor<1x4x?x64xf32>
}
