// RUN: pe-opt %s --pe-lower-to-linalg -split-input-file | FileCheck %s
// Numerics are checked end to end in python/tests (test_kv_cache.py, through
// pe.paged_attention's reference lowering); this file checks the structure.

// The checks first (the sequence within the block table's rows, then, for
// such a sequence, its length and every page it reads), then a copy a page
// at a time: keys 16 i .. 16 i + 15 are the first rows of page
// block_table[b, i], [n, Hkv, D] transposed for nhd.
// CHECK-LABEL: func.func @nhd
// CHECK-SAME: (%[[C:.*]]: tensor<?x16x2x64xf32>, %[[BT:.*]]: tensor<?x32xi32>, %[[B:.*]]: index, %[[N:.*]]: index)
// CHECK: func.call @pe_runtime_sequence_out_of_range
// CHECK: scf.if
// CHECK: arith.muli %{{.*}}, %c16
// CHECK: func.call @pe_runtime_gather_length_out_of_range
// CHECK: scf.for
// CHECK: tensor.extract %[[BT]]
// CHECK: func.call @pe_runtime_gather_page_out_of_range
// CHECK: %[[BLOCKS:.*]] = arith.ceildivsi %[[N]], %c16
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[BLOCKS]] {{.*}} -> (tensor<1x2x?x64xf32>)
// CHECK: tensor.extract %[[BT]]
// CHECK: tensor.extract_slice %[[C]][%{{.*}}, 0, 0, 0] [1, %{{.*}}, 2, 64] [1, 1, 1, 1] : tensor<?x16x2x64xf32> to tensor<1x?x2x64xf32>
// CHECK: linalg.transpose {{.*}} permutation = [0, 2, 1, 3]
// CHECK: tensor.insert_slice %{{.*}}[0, 0, %{{.*}}, 0] [1, 2, %{{.*}}, 64] [1, 1, 1, 1] : tensor<1x2x?x64xf32> into tensor<1x2x?x64xf32>
// CHECK-NOT: pe.gather_pages
func.func @nhd(%c: tensor<?x16x2x64xf32>, %bt: tensor<?x32xi32>, %b: index, %n: index) -> tensor<1x2x?x64xf32> {
  %k = pe.gather_pages %c block_table(%bt : tensor<?x32xi32>) sequence(%b) length(%n) : tensor<?x16x2x64xf32> -> tensor<1x2x?x64xf32>
  return %k : tensor<1x2x?x64xf32>
}

// -----

// hnd pages hold a head's rows together: [1, Hkv, n, D] slices, no transpose.
// CHECK-LABEL: func.func @hnd
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, 0, 0, 0] [1, 2, %{{.*}}, 32] [1, 1, 1, 1] : tensor<?x2x8x32xbf16> to tensor<1x2x?x32xbf16>
// CHECK-NOT: linalg.transpose
// CHECK: tensor.insert_slice
func.func @hnd(%c: tensor<?x2x8x32xbf16>, %bt: tensor<4x?xi64>, %b: index, %n: index) -> tensor<1x2x?x32xbf16> {
  %k = pe.gather_pages %c block_table(%bt : tensor<4x?xi64>) sequence(%b) length(%n) layout(hnd) : tensor<?x2x8x32xbf16> -> tensor<1x2x?x32xbf16>
  return %k : tensor<1x2x?x32xbf16>
}
