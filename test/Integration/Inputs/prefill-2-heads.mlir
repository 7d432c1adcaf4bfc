// The same function name as prefill-4-heads.mlir, for 2 heads and a
// different theta.
func.func @prefill(%x: tensor<1x2x?x32xf32>, %pos: tensor<?xi64>) -> tensor<1x2x?x32xf32> {
  %y = pe.rope #pe.rope<theta = 500000.0, rotary_dim = 32> %x, %pos : tensor<1x2x?x32xf32>, tensor<?xi64>
  return %y : tensor<1x2x?x32xf32>
}
