// RUN: pe-opt %s --pe-lower-to-linalg -split-input-file | FileCheck %s
// Numerics of the lowering are checked end to end in python/tests
// (test_kv_cache.py); this file checks its structure.

// Paged (nhd): the slots are checked against P * page_size first (-1 is
// allowed: a skipped token), the keys are rotated once as [T, 1, H, D]
// (bshd) by tables of their positions, then each token's [1, 1, H, D] rows
// are inserted at (slot / page_size, slot mod page_size) when the slot is in
// range.
// CHECK-LABEL: func.func @paged_nhd
// CHECK-SAME: (%[[K:.*]]: tensor<?x8x64xf32>, %[[V:.*]]: tensor<?x8x32xf32>, %[[KC:.*]]: tensor<?x16x8x64xf32>, %[[VC:.*]]: tensor<?x16x8x32xf32>, %[[S:.*]]: tensor<?xi64>, %[[P:.*]]: tensor<?xi32>)
// CHECK: call @pe_runtime_size_mismatch
// CHECK: %[[CAP:.*]] = arith.muli %{{.*}}, %c16_i64
// CHECK: scf.for
// CHECK: arith.cmpi slt, %{{.*}}, %c-1_i64
// CHECK: arith.cmpi sge, %{{.*}}, %[[CAP]]
// CHECK: func.call @pe_runtime_slot_out_of_range
// CHECK: %[[ROWS:.*]] = tensor.expand_shape %[[K]] {{\[\[}}0, 1], [2], [3]]
// CHECK: linalg.generic
// CHECK: math.cos
// CHECK: %[[ROT:.*]]:2 = linalg.generic
// CHECK: %[[LOOP:.*]]:2 = scf.for {{.*}} iter_args(%[[KA:.*]] = %[[KC]], %[[VA:.*]] = %[[VC]])
// CHECK: scf.if
// CHECK: arith.divui %{{.*}}, %c16
// CHECK: arith.remui %{{.*}}, %c16
// CHECK: tensor.extract_slice %{{.*}} [1, 1, 8, 64] [1, 1, 1, 1] : tensor<?x1x8x64xf32> to tensor<1x1x8x64xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}} [1, 1, 8, 64] [1, 1, 1, 1] : tensor<1x1x8x64xf32> into tensor<?x16x8x64xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}} [1, 1, 8, 32] [1, 1, 1, 1] : tensor<1x1x8x32xf32> into tensor<?x16x8x32xf32>
// CHECK: } else {
// CHECK: scf.yield
// CHECK: return
func.func @paged_nhd(%k: tensor<?x8x64xf32>, %v: tensor<?x8x32xf32>, %kc: tensor<?x16x8x64xf32>,
                     %vc: tensor<?x16x8x32xf32>, %s: tensor<?xi64>, %p: tensor<?xi32>)
    -> (tensor<?x16x8x64xf32>, tensor<?x16x8x32xf32>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%s : tensor<?xi64>) positions(%p : tensor<?xi32>) layout(nhd) rope(#pe.rope<rotary_dim = 64>) : tensor<?x8x64xf32>, tensor<?x8x32xf32> -> tensor<?x16x8x64xf32>, tensor<?x16x8x32xf32>
  return %a, %b : tensor<?x16x8x64xf32>, tensor<?x16x8x32xf32>
}

// -----

// Paged (hnd): a token's rows [1, H, 1, D] go to (page, :, row, :); without
// rope the keys are copied as they are.
// CHECK-LABEL: func.func @paged_hnd
// CHECK-NOT: math.cos
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 0, %{{.*}}, 0] [1, 8, 1, 64] [1, 1, 1, 1] : tensor<1x8x1x64xbf16> into tensor<32x8x16x64xbf16>
func.func @paged_hnd(%k: tensor<?x8x64xbf16>, %kc: tensor<32x8x16x64xbf16>, %s: tensor<?xi32>)
    -> tensor<32x8x16x64xbf16> {
  %a, %b = pe.append_kv %k, %k into %kc, %kc slots(%s : tensor<?xi32>) layout(hnd) : tensor<?x8x64xbf16>, tensor<?x8x64xbf16> -> tensor<32x8x16x64xbf16>, tensor<32x8x16x64xbf16>
  return %a : tensor<32x8x16x64xbf16>
}

// -----

// Dense: a loop over the batch and one over the tokens; slots [B, S] are
// read per (batch, token) and checked against Smax = 128.
// CHECK-LABEL: func.func @dense
// CHECK: arith.cmpi sge, %{{.*}}, %c128_i64
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %c2{{.*}} iter_args
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} iter_args
// CHECK: tensor.extract %{{.*}}[%[[B]], %[[T]]] : tensor<2x?xi64>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%[[B]], 0, %{{.*}}, 0] [1, 4, 1, 16] [1, 1, 1, 1] : tensor<1x4x1x16xf16> into tensor<2x4x128x16xf16>
func.func @dense(%k: tensor<2x4x?x16xf16>, %kc: tensor<2x4x128x16xf16>, %s: tensor<2x?xi64>)
    -> tensor<2x4x128x16xf16> {
  %a, %b = pe.append_kv %k, %k into %kc, %kc slots(%s : tensor<2x?xi64>) positions(%s : tensor<2x?xi64>) rope(#pe.rope<rotary_dim = 16, style = interleaved>) : tensor<2x4x?x16xf16>, tensor<2x4x?x16xf16> -> tensor<2x4x128x16xf16>, tensor<2x4x128x16xf16>
  return %a : tensor<2x4x128x16xf16>
}
