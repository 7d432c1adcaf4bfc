// Two libraries export @prefill (two-libraries.test):
// this one for 4 heads, prefill-2-heads.mlir for 2.
func.func @prefill(%x: tensor<1x4x?x32xf32>, %pos: tensor<?xi64>) -> tensor<1x4x?x32xf32> {
  %y = pe.rope #pe.rope<theta = 10000.0, rotary_dim = 32> %x, %pos : tensor<1x4x?x32xf32>, tensor<?xi64>
  return %y : tensor<1x4x?x32xf32>
}

func.func @lookup(%table: tensor<4x2xf32>, %pos: tensor<?xi64>) -> tensor<?x2xf32> {
  %e = pe.learned %table[%pos] : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  return %e : tensor<?x2xf32>
}
