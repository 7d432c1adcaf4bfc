func.func @att(%q: tensor<1x1x1x4xf32>, %k: tensor<1x1x?x4xf32>, %v: tensor<1x1x?x4xf32>) -> tensor<1x1x1x4xf32> {
  %o = pe.attention %q, %k, %v : tensor<1x1x1x4xf32>, tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32> -> tensor<1x1x1x4xf32>
  return %o : tensor<1x1x1x4xf32>
}
func.func @main() {
  %q = arith.constant dense<1.0> : tensor<1x1x1x4xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x5x4xf32>
  %v = arith.constant dense<1.0> : tensor<1x1x4x4xf32>
  %kd = tensor.cast %k : tensor<1x1x5x4xf32> to tensor<1x1x?x4xf32>
  %vd = tensor.cast %v : tensor<1x1x4x4xf32> to tensor<1x1x?x4xf32>
  %o = call @att(%q, %kd, %vd) : (tensor<1x1x1x4xf32>, tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32>) -> tensor<1x1x1x4xf32>
  return
}
