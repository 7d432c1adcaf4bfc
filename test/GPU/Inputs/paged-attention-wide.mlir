// A paged attention of 1280-channel heads: more than the GPU kernel's 1024.
func.func @too_wide(%q: tensor<?x4x1280xf32>, %kc: tensor<?x4x1x1280xf32>, %vc: tensor<?x4x1x1280xf32>,
                    %bt: tensor<?x6xi32>, %lens: tensor<?xi32>, %cu: tensor<?xi64>) -> tensor<?x4x1280xf32> {
  %o = pe.paged_attention %q, %kc, %vc block_table(%bt : tensor<?x6xi32>)
       kv_lens(%lens : tensor<?xi32>) cu_seqlens(%cu : tensor<?xi64>) causal
       : tensor<?x4x1280xf32>, tensor<?x4x1x1280xf32>, tensor<?x4x1x1280xf32> -> tensor<?x4x1280xf32>
  return %o : tensor<?x4x1280xf32>
}
