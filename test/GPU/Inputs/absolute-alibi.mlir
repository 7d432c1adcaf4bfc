// Sinusoidal (concat, fairseq), learned and ALiBi: elementwise kernels whose
// stores pe-gpu-vectorize-loops turns into 16-byte vectors.
func.func @absolute(%pos: tensor<2x24xi64>, %wpe: tensor<64x32xf32>, %q: tensor<20xi32>)
    -> (tensor<2x24x64xf32>, tensor<2x24x32xf32>, tensor<12x20x20xf32>) {
  %sin = pe.sinusoidal %pos layout(concat) spacing(fairseq) : tensor<2x24xi64> -> tensor<2x24x64xf32>
  %learned = pe.learned %wpe[%pos] : tensor<64x32xf32>, tensor<2x24xi64> -> tensor<2x24x32xf32>
  %s = pe.alibi_slopes : tensor<12xf32>
  %b = pe.alibi_bias causal %s, %q, %q : tensor<12xf32>, tensor<20xi32>, tensor<20xi32> -> tensor<12x20x20xf32>
  return %sin, %learned, %b : tensor<2x24x64xf32>, tensor<2x24x32xf32>, tensor<12x20x20xf32>
}
