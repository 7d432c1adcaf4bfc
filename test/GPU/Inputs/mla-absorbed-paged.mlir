// Absorbed latent attention served from a paged latent cache: 128 query
// heads of 512 + 64 channels against one KV head, the value cache the first
// 512 channels of the key cache.
func.func @paged(%q: tensor<?x128x576xbf16>, %cache: tensor<?x16x1x576xbf16>, %bt: tensor<?x?xi32>,
                 %lens: tensor<?xi32>, %cu: tensor<?xi32>) -> tensor<?x128x512xbf16> {
  %c0 = arith.constant 0 : index
  %p = tensor.dim %cache, %c0 : tensor<?x16x1x576xbf16>
  %v = tensor.extract_slice %cache[0, 0, 0, 0] [%p, 16, 1, 512] [1, 1, 1, 1] : tensor<?x16x1x576xbf16> to tensor<?x16x1x512xbf16>
  %o = pe.paged_attention %q, %cache, %v block_table(%bt : tensor<?x?xi32>)
       kv_lens(%lens : tensor<?xi32>) cu_seqlens(%cu : tensor<?xi32>) causal
       rope(#pe.rope<theta = 10000.0, rotary_dim = 64, rotary_offset = 512, style = interleaved>)
       : tensor<?x128x576xbf16>, tensor<?x16x1x576xbf16>, tensor<?x16x1x512xbf16> -> tensor<?x128x512xbf16>
  return %o : tensor<?x128x512xbf16>
}
