// RUN: pe-opt %s --pe-expand-shared-key | FileCheck %s

// The block's batch and length checked against the key's, then keys of
// [B, Hkv, S, 128 + 64] whose channels c < 128 are the head's own and the
// others the shared block's channel c - 128 (both reads clamped in
// bounds); the attention keeps its rope, masks and positions.
// CHECK-LABEL: func.func @expand
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<?x8x?x192xf32>, %[[K:[a-z0-9]+]]: tensor<?x2x?x128xf32>, %[[V:[a-z0-9]+]]: tensor<?x2x?x128xf32>, %[[KS:[a-z0-9]+]]: tensor<?x1x?x64xf32>
// CHECK: %[[C35:.*]] = arith.constant 35 : i64
// CHECK: call @pe_runtime_size_mismatch(%[[C35]]
// CHECK: call @pe_runtime_size_mismatch(%{{.*}}
// CHECK: %[[EMPTY:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x2x?x192xf32>
// CHECK: %[[KEYS:.*]] = linalg.generic {{.*}} outs(%[[EMPTY]] : tensor<?x2x?x192xf32>)
// CHECK: %[[C:.*]] = linalg.index 3 : index
// CHECK: %[[OWN:.*]] = arith.cmpi ult, %[[C]], %[[C128:.*]] : index
// CHECK: %[[MINE:.*]] = tensor.extract %[[K]]
// CHECK: %[[BLOCK:.*]] = tensor.extract %[[KS]]
// CHECK: arith.select %[[OWN]], %[[MINE]], %[[BLOCK]] : f32
// CHECK: pe.attention %[[Q]], %[[KEYS]], %[[V]] causal rope(#pe.rope<rotary_dim = 64, rotary_offset = 128>) : tensor<?x8x?x192xf32>, tensor<?x2x?x192xf32>, tensor<?x2x?x128xf32> -> tensor<?x8x?x128xf32>
// CHECK-NOT: shared_key
func.func @expand(%q: tensor<?x8x?x192xf32>, %k: tensor<?x2x?x128xf32>, %v: tensor<?x2x?x128xf32>, %ks: tensor<?x1x?x64xf32>) -> tensor<?x8x?x128xf32> {
  %o = pe.attention %q, %k, %v shared_key(%ks : tensor<?x1x?x64xf32>) causal rope(#pe.rope<rotary_dim = 64, rotary_offset = 128>) : tensor<?x8x?x192xf32>, tensor<?x2x?x128xf32>, tensor<?x2x?x128xf32> -> tensor<?x8x?x128xf32>
  return %o : tensor<?x8x?x128xf32>
}

// Static sizes: no run-time check (the verifier compared them).
// CHECK-LABEL: func.func @static
// CHECK-NOT: pe_runtime_size_mismatch
// CHECK: linalg.generic
// CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x4x8x48xbf16>, tensor<1x4x8x48xbf16>, tensor<1x4x8x16xbf16> -> tensor<1x4x8x16xbf16>
func.func @static(%q: tensor<1x4x8x48xbf16>, %k: tensor<1x4x8x32xbf16>, %v: tensor<1x4x8x16xbf16>, %ks: tensor<1x1x8x16xbf16>) -> tensor<1x4x8x16xbf16> {
  %o = pe.attention %q, %k, %v shared_key(%ks : tensor<1x1x8x16xbf16>) : tensor<1x4x8x48xbf16>, tensor<1x4x8x32xbf16>, tensor<1x4x8x16xbf16> -> tensor<1x4x8x16xbf16>
  return %o : tensor<1x4x8x16xbf16>
}
