func.func @att(%q: tensor<1x1x1x4xf32>, %k: tensor<1x1x3x4xf32>, %kp: tensor<?xi64>) -> tensor<1x1x1x4xf32> {
  %o = pe.attention %q, %k, %k k_positions(%kp : tensor<?xi64>) causal rope(#pe.rope<rotary_dim = 4>) : tensor<1x1x1x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32> -> tensor<1x1x1x4xf32>
  return %o : tensor<1x1x1x4xf32>
}
func.func @main() {
  %q = arith.constant dense<1.0> : tensor<1x1x1x4xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x3x4xf32>
  %kp = arith.constant dense<[0, 1, 2, 3, 4, 5, 6]> : tensor<7xi64>
  %kpd = tensor.cast %kp : tensor<7xi64> to tensor<?xi64>
  %o = call @att(%q, %k, %kpd) : (tensor<1x1x1x4xf32>, tensor<1x1x3x4xf32>, tensor<?xi64>) -> tensor<1x1x1x4xf32>
  return
}
