// The new tokens' keys rotated (llama3) and written with their values into a
// paged bf16 cache (GQA 8 KV heads, D = 128) in place.
func.func @append(%k: tensor<?x8x128xbf16>, %v: tensor<?x8x128xbf16>,
                  %kc: tensor<?x16x8x128xbf16> {pe.in_place}, %vc: tensor<?x16x8x128xbf16> {pe.in_place},
                  %slots: tensor<?xi64>, %pos: tensor<?xi64>)
    -> (tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : tensor<?xi64>) positions(%pos : tensor<?xi64>)
           layout(nhd) rope(#pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>)
           : tensor<?x8x128xbf16>, tensor<?x8x128xbf16> -> tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
  return %a, %b : tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
}
