// RUN: pe-opt %s --pass-pipeline="builtin.module(pe-set-target{triple=x86_64-linux-gnu cpu=skylake-avx512},func.func(pe-tile-and-vectorize),canonicalize)" | FileCheck %s
// The width of the target's vectors: 8 f32 with AVX2.
// RUN: pe-opt %s --pass-pipeline="builtin.module(pe-set-target{triple=x86_64-linux-gnu cpu=znver2},func.func(pe-tile-and-vectorize),canonicalize)" | FileCheck %s --check-prefix=CHECK-W8
// RUN: pe-opt %s --pass-pipeline="builtin.module(func.func(pe-tile-and-vectorize{vector-width=8}),canonicalize)" | FileCheck %s --check-prefix=CHECK-W8
// RUN: not pe-opt %s --pass-pipeline="builtin.module(func.func(pe-tile-and-vectorize{vector-width=-1}))" 2>&1 | FileCheck %s --check-prefix=CHECK-BAD
// A width of 2^40 is a diagnostic, not an allocation of that many lanes:
// RUN: not pe-opt %s --pass-pipeline="builtin.module(func.func(pe-tile-and-vectorize{vector-width=1099511627776}))" 2>&1 | FileCheck %s --check-prefix=CHECK-HUGE

// What pe-tile-and-vectorize guarantees: every linalg op on tensors becomes
// loops whose innermost body works on 1-D vectors of `vector-width`
// elements along the innermost loop (one element along the others; an
// elementwise op on static shapes first collapsed to one loop); a
// partial last vector is masked; an innermost reduction is vectorized only
// in full vectors and otherwise left to scalar loops.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// An elementwise op on static shapes runs over its elements as one loop
// (the tensors collapsed to 1-D): whole vectors, and one masked tail for the
// whole op rather than one per row (4 x 33 = 132 = 8 x 16 + 4).
// CHECK-LABEL: func.func @elementwise
// CHECK: %[[X1:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<4x33xf32> into tensor<132xf32>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c132 step %c16 iter_args
// CHECK: %[[N:.*]] = affine.min
// CHECK: %[[M:.*]] = vector.create_mask %[[N]] : vector<16xi1>
// CHECK: %[[X:.*]] = vector.transfer_read %{{.*}}[%{{.*}}], %{{.*}}, %[[M]] {in_bounds = [true]} : tensor<?xf32>, vector<16xf32>
// CHECK: arith.mulf %[[X]], %[[X]] : vector<16xf32>
// CHECK: vector.transfer_write {{.*}}, %[[M]] {in_bounds = [true]} : vector<16xf32>, tensor<?xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4, 33] : tensor<132xf32> into tensor<4x33xf32>
// CHECK-W8-LABEL: func.func @elementwise
// CHECK-W8: scf.for %{{.*}} = %{{.*}} to %c132 step %c8
// CHECK-W8: vector.transfer_read {{.*}} : tensor<?xf32>, vector<8xf32>
func.func @elementwise(%x: tensor<4x33xf32>, %init: tensor<4x33xf32>) -> tensor<4x33xf32> {
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x33xf32>) outs(%init : tensor<4x33xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x33xf32>
  return %r : tensor<4x33xf32>
}

// A fill is the same stream of vectors.
// CHECK-LABEL: func.func @fill
// CHECK: scf.for %{{.*}} = %{{.*}} to %c99 step %c16 iter_args
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<?xf32>
// CHECK: tensor.expand_shape %{{.*}} output_shape [3, 33] : tensor<99xf32> into tensor<3x33xf32>
func.func @fill(%init: tensor<3x33xf32>) -> tensor<3x33xf32> {
  %zero = arith.constant 0.0 : f32
  %r = linalg.fill ins(%zero : f32) outs(%init : tensor<3x33xf32>) -> tensor<3x33xf32>
  return %r : tensor<3x33xf32>
}

// Not elementwise (a row broadcast): one vector along the innermost loop,
// one element along the others.
// CHECK-LABEL: func.func @broadcast_rows
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}}
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %[[C16:.*]] iter_args
// CHECK: vector.transfer_read %{{.*}}[%[[J]]], %{{.*}} {in_bounds = [true]} : tensor<64xf32>, vector<16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<4x64xf32>
func.func @broadcast_rows(%x: tensor<64xf32>, %init: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %r = linalg.generic {indexing_maps = [#col, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64xf32>) outs(%init : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

// A dynamic innermost extent: the last vector is masked.
// CHECK-LABEL: func.func @dynamic_inner
// CHECK: %[[N:.*]] = affine.min
// CHECK: %[[M:.*]] = vector.create_mask %[[N]] : vector<16xi1>
// CHECK: vector.transfer_read {{.*}}, %[[M]] {in_bounds = [true]} : tensor<1x?xf32>, vector<16xf32>
// CHECK: arith.mulf {{.*}} : vector<16xf32>
// CHECK: vector.transfer_write {{.*}}, %{{.*}} {in_bounds = [true]} : vector<16xf32>, tensor<1x?xf32>
func.func @dynamic_inner(%x: tensor<4x?xf32>, %init: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x?xf32>) outs(%init : tensor<4x?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x?xf32>
  return %r : tensor<4x?xf32>
}

// An innermost extent below the width: one vector of that extent.
// CHECK-LABEL: func.func @short_inner
// CHECK: vector.transfer_read {{.*}} : tensor<8xf32>, vector<8xf32>
// CHECK-NOT: vector<16xf32>
func.func @short_inner(%x: tensor<8xf32>, %init: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = linalg.generic {indexing_maps = [#col, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// An innermost reduction in whole vectors: a 1-D vector reduction.
// CHECK-LABEL: func.func @row_sum
// CHECK: %[[X:.*]] = vector.transfer_read {{.*}} : tensor<4x64xf32>, vector<16xf32>
// CHECK: vector.reduction <add>, %[[X]], %{{.*}} : vector<16xf32> into f32
func.func @row_sum(%x: tensor<4x64xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x64xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// 20 is not a multiple of 16: the reduction stays for scalar loops.
// CHECK-LABEL: func.func @ragged_row_sum
// CHECK-NOT: vector.
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
func.func @ragged_row_sum(%x: tensor<4x20xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x20xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// An empty iteration space (a static extent 0) is left as it is.
// CHECK-LABEL: func.func @empty
// CHECK-NOT: vector.
// CHECK: linalg.generic
func.func @empty(%x: tensor<0x64xf32>, %init: tensor<0x64xf32>) -> tensor<0x64xf32> {
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<0x64xf32>) outs(%init : tensor<0x64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<0x64xf32>
  return %r : tensor<0x64xf32>
}

// CHECK-BAD: error: pe-tile-and-vectorize needs 0 <= vector-width <= 64 (0: the target's), but got -1
// CHECK-HUGE: error: pe-tile-and-vectorize needs 0 <= vector-width <= 64 (0: the target's), but got 1099511627776
