// A paged KV cache updated in place: 4 pages of 4 slots, 2 KV heads of 8
// channels. The new keys are rotated by their positions (RoPE, theta 10000,
// half pairs) as they are written; slot -1 skips a token.
func.func @append(%k: tensor<?x2x8xf32>, %v: tensor<?x2x8xf32>,
                  %kc: tensor<4x4x2x8xf32> {pe.in_place},
                  %vc: tensor<4x4x2x8xf32> {pe.in_place},
                  %slots: tensor<?xi64>, %pos: tensor<?xi64>)
    -> (tensor<4x4x2x8xf32>, tensor<4x4x2x8xf32>) {
  %kc2, %vc2 = pe.append_kv %k, %v into %kc, %vc slots(%slots : tensor<?xi64>)
                 positions(%pos : tensor<?xi64>) layout(nhd) rope(#pe.rope<rotary_dim = 8>)
                 : tensor<?x2x8xf32>, tensor<?x2x8xf32> -> tensor<4x4x2x8xf32>, tensor<4x4x2x8xf32>
  return %kc2, %vc2 : tensor<4x4x2x8xf32>, tensor<4x4x2x8xf32>
}
