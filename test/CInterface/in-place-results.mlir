// RUN: pe-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(pe-read-only-arguments),one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,pe-in-place-results)" -verify-diagnostics | FileCheck %s

// A pe.in_place argument (a KV cache) is writable, so the append writes
// into the caller's buffer; its result is dropped from the signature and the
// function records which arguments it updates. The other arguments stay
// read-only and the attention output is still returned.
// CHECK-LABEL: func.func @decode_step
// CHECK-SAME: (%[[K:.*]]: memref<1x2x1x8xf32>, %[[V:.*]]: memref<1x2x1x8xf32>, %[[KC:.*]]: memref<1x2x16x8xf32>, %[[VC:.*]]: memref<1x2x16x8xf32>, %{{.*}}: memref<1xi64>) -> memref<1x2x1x8xf32>
// CHECK-SAME: pe.in_place_arguments = array<i64: 2, 3>
// CHECK-NOT: memref.copy %[[KC]]
// CHECK: memref.subview %[[KC]]
// CHECK: return %{{.*}} : memref<1x2x1x8xf32>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @decode_step(%k: tensor<1x2x1x8xf32>, %v: tensor<1x2x1x8xf32>,
                       %kc: tensor<1x2x16x8xf32> {pe.in_place}, %vc: tensor<1x2x16x8xf32> {pe.in_place},
                       %pos: tensor<1xi64>)
    -> (tensor<1x2x16x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %p = tensor.extract %pos[%c0] : tensor<1xi64>
  %s = arith.index_cast %p : i64 to index
  %row = tensor.extract_slice %k[0, 0, 0, 0] [1, 2, 1, 8] [1, 1, 1, 1] : tensor<1x2x1x8xf32> to tensor<1x2x1x8xf32>
  %kc2 = tensor.insert_slice %row into %kc[0, 0, %s, 0] [1, 2, 1, 8] [1, 1, 1, 1] : tensor<1x2x1x8xf32> into tensor<1x2x16x8xf32>
  %vc2 = tensor.insert_slice %v into %vc[0, 0, %s, 0] [1, 2, 1, 8] [1, 1, 1, 1] : tensor<1x2x1x8xf32> into tensor<1x2x16x8xf32>
  %out = tensor.extract_slice %kc2[0, 0, 0, 0] [1, 2, 1, 8] [1, 1, 1, 1] : tensor<1x2x16x8xf32> to tensor<1x2x1x8xf32>
  return %kc2, %out, %vc2 : tensor<1x2x16x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x16x8xf32>
}

// -----

// The old value of the cache is read after the update: bufferization copies
// the cache, which is not an update in place.
// expected-error @+1 {{pe.in_place argument #0 must be updated in its own buffer and returned}}
func.func @read_after_update(%kc: tensor<16xf32> {pe.in_place}, %x: f32) -> (tensor<16xf32>, f32) {
  %c0 = arith.constant 0 : index
  %new = tensor.insert %x into %kc[%c0] : tensor<16xf32>
  %old = tensor.extract %kc[%c0] : tensor<16xf32>
  return %new, %old : tensor<16xf32>, f32
}

// -----

// An in-place argument that is not returned has no new value for the caller.
// expected-error @+1 {{pe.in_place argument #0 must be updated in its own buffer and returned}}
func.func @not_returned(%kc: tensor<16xf32> {pe.in_place}) -> f32 {
  %c0 = arith.constant 0 : index
  %old = tensor.extract %kc[%c0] : tensor<16xf32>
  return %old : f32
}
