// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=skylake-avx512" --pe-tile-append-kv -split-input-file | FileCheck %s
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=x86-64-v3" --pe-tile-append-kv -split-input-file | FileCheck %s --check-prefix=AVX2
// Numerics are checked end to end in python/tests/test_kv_cache.py (every
// layout, dtype and rope against the float64 reference); this file checks
// the kernel's structure.

// Paged nhd, bf16: the slots checked first, the cos/sin rows of the T
// positions computed once ([T, 1, r/2]), then per token and head each pair
// of 16-channel vectors read, widened, rotated and rounded once, and
// written straight into the cache at (slot / 16, slot mod 16, h): no rotated
// copy of the keys, no insert_slice.
// CHECK-LABEL: func.func @paged_nhd
// CHECK: func.call @pe_runtime_slot_out_of_range
// CHECK: %[[COS:.*]] = bufferization.to_buffer %{{.*}}#0 read_only : tensor<?x1x32xf32>
// CHECK: %[[SIN:.*]] = bufferization.to_buffer %{{.*}}#1 read_only : tensor<?x1x32xf32>
// CHECK: %[[K:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK: %[[V:.*]] = bufferization.to_buffer %arg1 read_only
// CHECK: scf.for %[[T:[a-z0-9_]+]] = %{{.*}} iter_args(%[[KC:.*]] = %{{.*}}, %[[VC:.*]] = %{{.*}})
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : i64
// CHECK: scf.if
// CHECK: %[[PAGE:.*]] = arith.divui %{{.*}}, %c16
// CHECK: %[[ROW:.*]] = arith.remui %{{.*}}, %c16
// CHECK: scf.for %[[H:[a-z0-9_]+]] = %{{.*}} iter_args(%[[KH:.*]] = %[[KC]], %[[VH:.*]] = %[[VC]])
// CHECK-DAG: vector.load %[[COS]][%[[T]], %{{.*}}, %{{.*}}] : memref<?x1x32xf32>, vector<16xf32>
// CHECK-DAG: vector.load %[[SIN]][%[[T]], %{{.*}}, %{{.*}}] : memref<?x1x32xf32>, vector<16xf32>
// CHECK: %[[X0:.*]] = vector.load %[[K]][%[[T]], %[[H]], %{{.*}}] : memref<?x8x64xbf16>, vector<16xbf16>
// CHECK: arith.extf %[[X0]] : vector<16xbf16> to vector<16xf32>
// CHECK: math.fma
// CHECK: math.fma
// CHECK: %[[Y0:.*]] = arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: %[[W0:.*]] = vector.transfer_write %[[Y0]], %[[KH]][%[[PAGE]], %[[ROW]], %[[H]], %{{.*}}] {in_bounds = [true]} : vector<16xbf16>, tensor<?x16x8x64xbf16>
// CHECK: vector.transfer_write %{{.*}}, %[[W0]]
// CHECK: %[[V0:.*]] = vector.load %[[V]][%[[T]], %[[H]], %{{.*}}] : memref<?x8x32xbf16>, vector<16xbf16>
// CHECK: vector.transfer_write %[[V0]], %[[VH]][%[[PAGE]], %[[ROW]], %[[H]], %{{.*}}]
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[KC]], %[[VC]]
// CHECK-NOT: tensor.insert_slice
// CHECK-NOT: pe.append_kv
// AVX2-LABEL: func.func @paged_nhd
// AVX2: vector.load %{{.*}} : memref<?x8x64xbf16>, vector<8xbf16>
// AVX2-NOT: pe.append_kv
func.func @paged_nhd(%k: tensor<?x8x64xbf16>, %v: tensor<?x8x32xbf16>, %kc: tensor<?x16x8x64xbf16>,
                     %vc: tensor<?x16x8x32xbf16>, %s: tensor<?xi64>, %p: tensor<?xi32>)
    -> (tensor<?x16x8x64xbf16>, tensor<?x16x8x32xbf16>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%s : tensor<?xi64>) positions(%p : tensor<?xi32>)
           layout(nhd) rope(#pe.rope<theta = 10000.0, rotary_dim = 64>)
           : tensor<?x8x64xbf16>, tensor<?x8x32xbf16> -> tensor<?x16x8x64xbf16>, tensor<?x16x8x32xbf16>
  return %a, %b : tensor<?x16x8x64xbf16>, tensor<?x16x8x32xbf16>
}

// -----

// Paged hnd, a partial rotary block: rows at (page, h, slot mod 16); the
// 32 channels past the rotated block copied as they are.
// CHECK-LABEL: func.func @paged_hnd_partial
// CHECK: %[[PAGE:[0-9]+]] = arith.divui
// CHECK: %[[ROW:[0-9]+]] = arith.remui
// CHECK: scf.for %[[H:[a-z0-9_]+]] =
// CHECK: math.fma
// CHECK: vector.transfer_write %{{.*}}[%[[PAGE]], %[[H]], %[[ROW]], %{{.*}}] {in_bounds = [true]} : vector<16xf32>, tensor<?x4x16x64xf32>
// CHECK: %[[PASS:.*]] = vector.load %{{.*}}[%{{.*}}, %[[H]], %c32{{.*}}] : memref<?x4x64xf32>, vector<16xf32>
// CHECK-NEXT: vector.transfer_write %[[PASS]], %{{.*}}[%[[PAGE]], %[[H]], %[[ROW]], %c32{{.*}}]
func.func @paged_hnd_partial(%k: tensor<?x4x64xf32>, %v: tensor<?x4x64xf32>, %kc: tensor<?x4x16x64xf32>,
                             %vc: tensor<?x4x16x64xf32>, %s: tensor<?xi32>, %p: tensor<?xi64>)
    -> (tensor<?x4x16x64xf32>, tensor<?x4x16x64xf32>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%s : tensor<?xi32>) positions(%p : tensor<?xi64>)
           layout(hnd) rope(#pe.rope<theta = 10000.0, rotary_dim = 32>)
           : tensor<?x4x64xf32>, tensor<?x4x64xf32> -> tensor<?x4x16x64xf32>, tensor<?x4x16x64xf32>
  return %a, %b : tensor<?x4x16x64xf32>, tensor<?x4x16x64xf32>
}

// -----

// Dense, slots and positions per batch row: the tables [B, S, r/2] read at
// (b, s); rows written at [b, h, slot]. No rope: a copy.
// CHECK-LABEL: func.func @dense_batch_slots
// CHECK: scf.for %[[B:[a-z0-9_]+]] = %{{.*}} iter_args
// CHECK: scf.for %[[S:[a-z0-9_]+]] = %{{.*}} iter_args
// CHECK: memref.load %{{.*}}[%[[B]], %[[S]]] : memref<2x?xi64>
// CHECK: vector.load %{{.*}}[%[[B]], %[[S]], %{{.*}}] : memref<2x?x16xf32>, vector<16xf32>
// CHECK: vector.transfer_write %{{.*}}[%[[B]], %{{.*}}, %{{.*}}, %{{.*}}] {in_bounds = [true]} : vector<16xf32>, tensor<2x2x64x32xf32>
// CHECK-LABEL: func.func @dense_no_rope
// CHECK-NOT: math.fma
// CHECK: vector.transfer_write
// CHECK-NOT: pe.append_kv
func.func @dense_batch_slots(%k: tensor<2x2x?x32xf32>, %v: tensor<2x2x?x32xf32>, %kc: tensor<2x2x64x32xf32>,
                             %vc: tensor<2x2x64x32xf32>, %s: tensor<2x?xi64>, %p: tensor<2x?xi64>)
    -> (tensor<2x2x64x32xf32>, tensor<2x2x64x32xf32>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%s : tensor<2x?xi64>) positions(%p : tensor<2x?xi64>)
           rope(#pe.rope<theta = 10000.0, rotary_dim = 32, style = interleaved>)
           : tensor<2x2x?x32xf32>, tensor<2x2x?x32xf32> -> tensor<2x2x64x32xf32>, tensor<2x2x64x32xf32>
  return %a, %b : tensor<2x2x64x32xf32>, tensor<2x2x64x32xf32>
}
func.func @dense_no_rope(%k: tensor<1x2x?x32xf32>, %v: tensor<1x2x?x32xf32>, %kc: tensor<1x2x64x32xf32>,
                         %vc: tensor<1x2x64x32xf32>, %s: tensor<?xi64>)
    -> (tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%s : tensor<?xi64>)
           : tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32> -> tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return %a, %b : tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
}

// -----

// Left to pe-lower-to-linalg: rows that are not whole vectors, and a
// multi-stream rope.
// CHECK-LABEL: func.func @not_whole_vectors
// CHECK: pe.append_kv
// CHECK-LABEL: func.func @multi_stream
// CHECK: pe.append_kv
// AVX2-LABEL: func.func @not_whole_vectors
// AVX2-NEXT: pe.append_kv
// AVX2-LABEL: func.func @multi_stream
// AVX2-NEXT: pe.append_kv
// CHECK-LABEL: func.func @rows_are_the_cache
// CHECK-NEXT: pe.append_kv
func.func @not_whole_vectors(%k: tensor<?x2x20xf32>, %v: tensor<?x2x20xf32>, %kc: tensor<?x4x2x20xf32>,
                             %vc: tensor<?x4x2x20xf32>, %s: tensor<?xi64>)
    -> (tensor<?x4x2x20xf32>, tensor<?x4x2x20xf32>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%s : tensor<?xi64>) layout(nhd)
           : tensor<?x2x20xf32>, tensor<?x2x20xf32> -> tensor<?x4x2x20xf32>, tensor<?x4x2x20xf32>
  return %a, %b : tensor<?x4x2x20xf32>, tensor<?x4x2x20xf32>
}
func.func @multi_stream(%k: tensor<?x2x64xf32>, %v: tensor<?x2x64xf32>, %kc: tensor<?x4x2x64xf32>,
                        %vc: tensor<?x4x2x64xf32>, %s: tensor<?xi64>, %p: tensor<3x?xi64>)
    -> (tensor<?x4x2x64xf32>, tensor<?x4x2x64xf32>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%s : tensor<?xi64>) positions(%p : tensor<3x?xi64>)
           layout(nhd) rope(#pe.rope<theta = 10000.0, rotary_dim = 64, sections = [8, 12, 12]>)
           : tensor<?x2x64xf32>, tensor<?x2x64xf32> -> tensor<?x4x2x64xf32>, tensor<?x4x2x64xf32>
  return %a, %b : tensor<?x4x2x64xf32>, tensor<?x4x2x64xf32>
}

// The new rows are the cache itself: writing in place while reading them
// could read rows already overwritten, so the reference lowering keeps it.
func.func @rows_are_the_cache(%kc: tensor<1x2x8x16xf32>, %vc: tensor<1x2x8x16xf32>, %s: tensor<8xi64>)
    -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  %a, %b = pe.append_kv %kc, %vc into %kc, %vc slots(%s : tensor<8xi64>)
           : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %a, %b : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}
