// RUN: pe-opt %s --pe-fuse-rope-into-append -split-input-file | FileCheck %s

// Dense: the bhsd rotation of the new keys moves into the append.
// CHECK-LABEL: func.func @dense
// CHECK-SAME: (%[[K:.*]]: tensor<1x8x?x64xf32>, %[[C:.*]]: tensor<1x8x256x64xf32>, %[[P:.*]]: tensor<?xi64>)
// CHECK-NOT: pe.rope
// CHECK: pe.append_kv %[[K]], %[[K]] into %[[C]], %[[C]] slots(%[[P]] : tensor<?xi64>) positions(%[[P]] : tensor<?xi64>) rope(#pe.rope<rotary_dim = 64>)
func.func @dense(%k: tensor<1x8x?x64xf32>, %c: tensor<1x8x256x64xf32>, %p: tensor<?xi64>) -> tensor<1x8x256x64xf32> {
  %r = pe.rope #pe.rope<rotary_dim = 64> %k, %p : tensor<1x8x?x64xf32>, tensor<?xi64>
  %a, %b = pe.append_kv %r, %k into %c, %c slots(%p : tensor<?xi64>) : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x256x64xf32>, tensor<1x8x256x64xf32>
  return %a : tensor<1x8x256x64xf32>
}

// -----

// Paged: the keys [T, H, D] are a bshd rotation of [1, T, H, D] collapsed;
// positions [1, T] are collapsed to [T].
// CHECK-LABEL: func.func @paged
// CHECK-SAME: (%[[K:.*]]: tensor<1x?x8x64xf32>, %[[V:.*]]: tensor<?x8x64xf32>, %[[C:.*]]: tensor<16x16x8x64xf32>, %[[S:.*]]: tensor<?xi64>, %[[P:.*]]: tensor<1x?xi32>)
// CHECK-NOT: pe.rope
// CHECK-DAG: %[[K2:.*]] = tensor.collapse_shape %[[K]] {{\[\[}}0, 1], [2], [3]]
// CHECK-DAG: %[[P2:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1]]
// CHECK: pe.append_kv %[[K2]], %[[V]] into %[[C]], %[[C]] slots(%[[S]] : tensor<?xi64>) positions(%[[P2]] : tensor<?xi32>) layout(nhd) rope(#pe.rope<theta = 1000000.0, rotary_dim = 32, style = interleaved>)
func.func @paged(%k: tensor<1x?x8x64xf32>, %v: tensor<?x8x64xf32>, %c: tensor<16x16x8x64xf32>, %s: tensor<?xi64>, %p: tensor<1x?xi32>) -> tensor<16x16x8x64xf32> {
  %r = pe.rope #pe.rope<theta = 1000000.0, rotary_dim = 32, style = interleaved> %k, %p layout(bshd) : tensor<1x?x8x64xf32>, tensor<1x?xi32>
  %rk = tensor.collapse_shape %r [[0, 1], [2], [3]] : tensor<1x?x8x64xf32> into tensor<?x8x64xf32>
  %a, %b = pe.append_kv %rk, %v into %c, %c slots(%s : tensor<?xi64>) layout(nhd) : tensor<?x8x64xf32>, tensor<?x8x64xf32> -> tensor<16x16x8x64xf32>, tensor<16x16x8x64xf32>
  return %a : tensor<16x16x8x64xf32>
}

// -----

// Not fused: a bhsd rotation of a paged cache's keys (its sequence axis is
// not the token axis), rotations by given tables, an append that already
// rotates.
// CHECK-LABEL: func.func @kept
// CHECK: %[[R:.*]] = pe.rope {{.*}} tables(
// CHECK: pe.append_kv %[[R]]
// CHECK: %[[R2:.*]] = pe.rope
// CHECK: pe.append_kv %[[R2]], {{.*}} rope(
func.func @kept(%k: tensor<1x8x?x64xf32>, %c: tensor<1x8x256x64xf32>, %p: tensor<?xi64>, %cos: tensor<?x32xf32>, %sin: tensor<?x32xf32>) -> (tensor<1x8x256x64xf32>, tensor<1x8x256x64xf32>) {
  %r = pe.rope #pe.rope<rotary_dim = 64> %k, %p tables(%cos, %sin : tensor<?x32xf32>, tensor<?x32xf32>) : tensor<1x8x?x64xf32>, tensor<?xi64>
  %a, %b = pe.append_kv %r, %k into %c, %c slots(%p : tensor<?xi64>) : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x256x64xf32>, tensor<1x8x256x64xf32>
  %r2 = pe.rope #pe.rope<rotary_dim = 64> %k, %p : tensor<1x8x?x64xf32>, tensor<?xi64>
  %d, %e = pe.append_kv %r2, %k into %c, %c slots(%p : tensor<?xi64>) positions(%p : tensor<?xi64>) rope(#pe.rope<rotary_dim = 64>) : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x256x64xf32>, tensor<1x8x256x64xf32>
  return %a, %d : tensor<1x8x256x64xf32>, tensor<1x8x256x64xf32>
}

// -----

// A multi-stream rotation stays outside the append (pe.append_kv rotates by
// one position stream).
// CHECK-LABEL: func.func @multi_stream_stays
// CHECK: %[[KR:.*]] = pe.rope #pe.rope<rotary_dim = 16, sections = [2, 3, 3]>
// CHECK: pe.append_kv %[[KR]], %{{.*}} into %{{.*}}, %{{.*}} slots(%{{.*}} : tensor<4xi64>) :
func.func @multi_stream_stays(%k: tensor<1x2x4x16xf32>, %c: tensor<1x2x8x16xf32>, %s: tensor<4xi64>, %p: tensor<3x4xi64>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  %kr = pe.rope #pe.rope<rotary_dim = 16, sections = [2, 3, 3]> %k, %p : tensor<1x2x4x16xf32>, tensor<3x4xi64>
  %nk, %nv = pe.append_kv %kr, %k into %c, %c slots(%s : tensor<4xi64>) : tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %nk, %nv : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}
