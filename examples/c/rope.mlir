// A RoPE kernel for C callers: `pe-compile rope.mlir --emit=shared -o librope.so
// --header=rope.h` gives `int32_t rope_rope(...)`, `rope_rope_into(...)` and
// `rope_last_error()` (see rope_example.c and docs/c-abi.md).
func.func @rope(%x: tensor<1x8x?x64xf32>, %pos: tensor<?xi64>) -> tensor<1x8x?x64xf32> {
  %y = pe.rope #pe.rope<theta = 10000.0, rotary_dim = 64> %x, %pos : tensor<1x8x?x64xf32>, tensor<?xi64>
  return %y : tensor<1x8x?x64xf32>
}
