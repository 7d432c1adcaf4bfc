// Absorbed latent attention whose latent cache holds the keys rotated
// already (no RoPE in the op): the tensor-core kernel copies K by cp.async.
func.func @absorbed_rotated(%q: tensor<1x128x4x576xbf16>, %c: tensor<1x1x?x576xbf16>)
    -> tensor<1x128x4x512xbf16> {
  %c2 = arith.constant 2 : index
  %s = tensor.dim %c, %c2 : tensor<1x1x?x576xbf16>
  %v = tensor.extract_slice %c[0, 0, 0, 0] [1, 1, %s, 512] [1, 1, 1, 1] : tensor<1x1x?x576xbf16> to tensor<1x1x?x512xbf16>
  %o = pe.attention %q, %c, %v causal
       : tensor<1x128x4x576xbf16>, tensor<1x1x?x576xbf16>, tensor<1x1x?x512xbf16> -> tensor<1x128x4x512xbf16>
  return %o : tensor<1x128x4x512xbf16>
}
