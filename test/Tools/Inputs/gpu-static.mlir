// Static shapes: every grid, size and scalar is known when compiling, so the
// manifest lists the steps a host replays.
func.func @rope(%x: tensor<1x4x8x64xf32>, %pos: tensor<8xi32>) -> tensor<1x4x8x64xf32> {
  %r = pe.rope #pe.rope<rotary_dim = 64> %x, %pos : tensor<1x4x8x64xf32>, tensor<8xi32>
  return %r : tensor<1x4x8x64xf32>
}
