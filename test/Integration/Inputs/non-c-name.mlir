func.func @"my-rope"(%x: tensor<1x1x4x32xf32>, %p: tensor<4xi32>) -> tensor<1x1x4x32xf32> {
  %y = pe.rope #pe.rope<rotary_dim = 32> %x, %p : tensor<1x1x4x32xf32>, tensor<4xi32>
  return %y : tensor<1x1x4x32xf32>
}
