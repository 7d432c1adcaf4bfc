func.func @rope(%x: tensor<1x1x?x4xf32>, %p: tensor<?xi32>) -> tensor<1x1x?x4xf32> {
  %y = pe.rope #pe.rope<rotary_dim = 4> %x, %p : tensor<1x1x?x4xf32>, tensor<?xi32>
  return %y : tensor<1x1x?x4xf32>
}
func.func private @printMemrefF32(tensor<*xf32>)
func.func @main() {
  %x = arith.constant dense<1.0> : tensor<1x1x3x4xf32>
  %xd = tensor.cast %x : tensor<1x1x3x4xf32> to tensor<1x1x?x4xf32>
  %p = arith.constant dense<[0, 1]> : tensor<2xi32>
  %pd = tensor.cast %p : tensor<2xi32> to tensor<?xi32>
  %y = call @rope(%xd, %pd) : (tensor<1x1x?x4xf32>, tensor<?xi32>) -> tensor<1x1x?x4xf32>
  %u = tensor.cast %y : tensor<1x1x?x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
