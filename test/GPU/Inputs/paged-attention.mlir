// A decode step of a serving engine: the new tokens' keys rotated (llama3)
// and written with their values into a paged bf16 cache in place (@append),
// then attention of the ragged batch over the pages (GQA 32/8, D = 128, RoPE
// on the queries; @decode_step).
func.func @decode_step(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>, %v: tensor<?x8x128xbf16>,
                       %kc: tensor<?x16x8x128xbf16> {pe.in_place}, %vc: tensor<?x16x8x128xbf16> {pe.in_place},
                       %slots: tensor<?xi64>, %pos: tensor<?xi64>, %bt: tensor<?x?xi32>,
                       %lens: tensor<?xi32>, %cu: tensor<?xi32>)
    -> (tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : tensor<?xi64>) positions(%pos : tensor<?xi64>)
           layout(nhd) rope(#pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>)
           : tensor<?x8x128xbf16>, tensor<?x8x128xbf16> -> tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
  %o = pe.paged_attention %q, %a, %b block_table(%bt : tensor<?x?xi32>) kv_lens(%lens : tensor<?xi32>)
       cu_seqlens(%cu : tensor<?xi32>) causal
       rope(#pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>)
       : tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16> -> tensor<?x32x128xbf16>
  return %o, %a, %b : tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
}
