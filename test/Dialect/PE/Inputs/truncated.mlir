func.func @f(%x: tensor<1x8x16x64xf32>, %p: tensor<16xi32>) -> tensor<1x8x16x64xf32> {
  %y = pe.rope #pe.rope<rotary_dim = 64, scaling = #pe.yarn<factor = 4.0,
