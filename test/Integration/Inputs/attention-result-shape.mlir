func.func @att(%q: tensor<1x1x?x4xf32>, %k: tensor<1x1x3x4xf32>) -> tensor<1x1x2x4xf32> {
  %o = pe.attention %q, %k, %k : tensor<1x1x?x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32> -> tensor<1x1x2x4xf32>
  return %o : tensor<1x1x2x4xf32>
}
func.func @main() {
  %q = arith.constant dense<1.0> : tensor<1x1x5x4xf32>
  %qd = tensor.cast %q : tensor<1x1x5x4xf32> to tensor<1x1x?x4xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x3x4xf32>
  %o = call @att(%qd, %k) : (tensor<1x1x?x4xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x2x4xf32>
  return
}
