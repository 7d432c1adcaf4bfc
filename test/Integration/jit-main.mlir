// `pe-compile FILE --emit=jit` runs FILE's @main on the CPU.
// RUN: pe-compile %s --emit=jit | FileCheck %s
// RUN: pe-compile %s --emit=jit --vectorize=false | FileCheck %s
// RUN: pe-compile %s --emit=jit --num-threads=2 | FileCheck %s
// RUN: pe-compile %s --emit=jit --fuse=false | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)

func.func @print(%t: tensor<1x1x1x4xf32>) {
  %u = tensor.cast %t : tensor<1x1x1x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

func.func @main() {
  // x = (1, 0, 0, 1) at position 3, r = D = 4, theta = 10000: inv_freq =
  // (1, 0.01); pairs (0, 2) and (1, 3) rotate by 3 and 0.03 rad:
  // (cos 3, -sin 0.03, sin 3, cos 0.03) = (-0.989992, -0.0299955, 0.14112, 0.99955).
  // CHECK: {{\[}}[-0.989992, -0.0299955, 0.14112, 0.99955]
  %x = arith.constant dense<[[[[1.0, 0.0, 0.0, 1.0]]]]> : tensor<1x1x1x4xf32>
  %p = arith.constant dense<[3]> : tensor<1xi32>
  %half = pe.rope #pe.rope<rotary_dim = 4> %x, %p : tensor<1x1x1x4xf32>, tensor<1xi32>
  call @print(%half) : (tensor<1x1x1x4xf32>) -> ()

  // Interleaved pairs (0, 1) and (2, 3): (cos 3, sin 3, -sin 0.03, cos 0.03).
  // CHECK: {{\[}}[-0.989992, 0.14112, -0.0299955, 0.99955]
  %inter = pe.rope #pe.rope<rotary_dim = 4, style = interleaved> %x, %p : tensor<1x1x1x4xf32>, tensor<1xi32>
  call @print(%inter) : (tensor<1x1x1x4xf32>) -> ()

  // Partial rotary (r = 2): only pair (0, 1) rotates, by 3 rad:
  // (cos 3, sin 3, 0, 1).
  // CHECK: {{\[}}[-0.989992, 0.14112, 0, 1]
  %partial = pe.rope #pe.rope<rotary_dim = 2> %x, %p : tensor<1x1x1x4xf32>, tensor<1xi32>
  call @print(%partial) : (tensor<1x1x1x4xf32>) -> ()

  // Attention over 2 keys, causal, query at position 1: both keys visible,
  // scores q.k / sqrt(4) = (0, 1) so p = (1, e)/(1 + e); v rows (1,0,0,0)
  // and (0,0,0,2): out = (1/(1+e), 0, 0, 2e/(1+e)) = (0.268941, 0, 0, 1.46212).
  // CHECK: {{\[}}[0.268941, 0, 0, 1.46212]
  %q = arith.constant dense<[[[[0.0, 0.0, 0.0, 2.0]]]]> : tensor<1x1x1x4xf32>
  %k = arith.constant dense<[[[[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]]]> : tensor<1x1x2x4xf32>
  %v = arith.constant dense<[[[[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0]]]]> : tensor<1x1x2x4xf32>
  %o = pe.attention %q, %k, %v causal : tensor<1x1x1x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x1x4xf32>
  call @print(%o) : (tensor<1x1x1x4xf32>) -> ()

  // A window of 1 at query position 1 hides key 0: out = v[1].
  // CHECK: {{\[}}[0, 0, 0, 2]
  %w = pe.attention %q, %k, %v causal window(1) : tensor<1x1x1x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x1x4xf32>
  call @print(%w) : (tensor<1x1x1x4xf32>) -> ()

  // A query before every key sees nothing under the causal mask: 0, not NaN.
  // CHECK: {{\[}}[0, 0, 0, 0]
  %qp = arith.constant dense<[-1]> : tensor<1xi32>
  %none = pe.attention %q, %k, %v q_positions(%qp : tensor<1xi32>) causal : tensor<1x1x1x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x1x4xf32>
  call @print(%none) : (tensor<1x1x1x4xf32>) -> ()
  return
}
