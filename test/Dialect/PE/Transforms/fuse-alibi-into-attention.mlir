// RUN: pe-opt %s --pe-fuse-alibi-into-attention --canonicalize -split-input-file | FileCheck %s
// Slopes already folded to constants (as in pe-cpu-pipeline) fuse as well:
// RUN: pe-opt %s --canonicalize --pe-fuse-alibi-into-attention --canonicalize -split-input-file | FileCheck %s

// A causal ALiBi bias used as the mask becomes alibi(8.0) causal inside the
// attention; slopes and bias are no longer computed.
// CHECK-LABEL: func.func @fuse
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: {{.*}}, %[[QP:[a-z0-9]+]]: tensor<?xi32>, %[[KP:[a-z0-9]+]]: tensor<?xi32>)
// CHECK-NOT: pe.alibi_
// CHECK: pe.attention %[[Q]], %[[Q]], %[[Q]] q_positions(%[[QP]] : tensor<?xi32>) k_positions(%[[KP]] : tensor<?xi32>) causal alibi(8.000000e+00)
// CHECK-NOT: mask(
func.func @fuse(%q: tensor<1x12x?x64xf32>, %qp: tensor<?xi32>, %kp: tensor<?xi32>) -> tensor<1x12x?x64xf32> {
  %s = pe.alibi_slopes : tensor<12xf32>
  %b = pe.alibi_bias causal %s, %qp, %kp : tensor<12xf32>, tensor<?xi32>, tensor<?xi32> -> tensor<12x?x?xf32>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %b, %c1 : tensor<12x?x?xf32>
  %skv = tensor.dim %b, %c2 : tensor<12x?x?xf32>
  %m = tensor.expand_shape %b [[0, 1], [2], [3]] output_shape [1, 12, %sq, %skv] : tensor<12x?x?xf32> into tensor<1x12x?x?xf32>
  %o = pe.attention %q, %q, %q mask(%m : tensor<1x12x?x?xf32>) : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return %o : tensor<1x12x?x64xf32>
}

// -----

// A batched (rank-4) bias; a symmetric bias fuses into a causal attention
// with the same positions, and max_bias carries over.
// CHECK-LABEL: func.func @symmetric_under_causal
// (The bias is added after soft-capping either way: the cap stays.)
// CHECK: pe.attention {{.*}} q_positions(%{{.*}} : tensor<2x8xi64>) k_positions(%{{.*}} : tensor<2x8xi64>) causal alibi(1.600000e+01) softcap(5.000000e+00)
func.func @symmetric_under_causal(%q: tensor<2x4x8x16xf32>, %p: tensor<2x8xi64>) -> tensor<2x4x8x16xf32> {
  %s = pe.alibi_slopes max_bias(16.0) : tensor<4xf32>
  %b = pe.alibi_bias symmetric %s, %p, %p : tensor<4xf32>, tensor<2x8xi64>, tensor<2x8xi64> -> tensor<2x4x8x8xf32>
  %o = pe.attention %q, %q, %q mask(%b : tensor<2x4x8x8xf32>) q_positions(%p : tensor<2x8xi64>) k_positions(%p : tensor<2x8xi64>) causal softcap(5.0) : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// Must not fuse: a symmetric bias without a causal mask; slopes that are not
// pe.alibi_slopes; attention positions that differ from the bias's; a causal
// attention at default positions; a mask that is not a bias.
// CHECK-LABEL: func.func @no_fuse
// CHECK-NOT: alibi(
// CHECK-COUNT-5: mask(
func.func @no_fuse(%q: tensor<1x4x8x16xf32>, %p: tensor<8xi32>, %p2: tensor<8xi32>, %slopes: tensor<4xf32>, %mask: tensor<1x4x8x8xf32>)
    -> (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) {
  %s = pe.alibi_slopes : tensor<4xf32>
  %sym = pe.alibi_bias symmetric %s, %p, %p : tensor<4xf32>, tensor<8xi32>, tensor<8xi32> -> tensor<4x8x8xf32>
  %symm = tensor.expand_shape %sym [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
  %o1 = pe.attention %q, %q, %q mask(%symm : tensor<1x4x8x8xf32>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  %own = pe.alibi_bias causal %slopes, %p, %p : tensor<4xf32>, tensor<8xi32>, tensor<8xi32> -> tensor<4x8x8xf32>
  %ownm = tensor.expand_shape %own [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
  %o2 = pe.attention %q, %q, %q mask(%ownm : tensor<1x4x8x8xf32>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  %c = pe.alibi_bias causal %s, %p, %p : tensor<4xf32>, tensor<8xi32>, tensor<8xi32> -> tensor<4x8x8xf32>
  %cm = tensor.expand_shape %c [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
  %o3 = pe.attention %q, %q, %q mask(%cm : tensor<1x4x8x8xf32>) q_positions(%p2 : tensor<8xi32>) k_positions(%p : tensor<8xi32>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  %o4 = pe.attention %q, %q, %q mask(%cm : tensor<1x4x8x8xf32>) causal : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  %o5 = pe.attention %q, %q, %q mask(%mask : tensor<1x4x8x8xf32>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o1, %o2, %o3, %o4, %o5 : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
}
