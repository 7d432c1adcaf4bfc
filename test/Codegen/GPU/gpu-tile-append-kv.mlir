// RUN: pe-opt %s --pe-gpu-tile-append-kv -split-input-file | FileCheck %s
// Numerics are checked end to end in python/tests/test_kv_cache.py (every
// layout and rope, f32 and bf16, run on the CPU through --target=gpu-on-cpu);
// this file checks the kernel's structure.

// Paged nhd, bf16, a rope over all 64 channels: the slots checked first, the
// cos/sin rows of the T positions computed once; then the slot each token
// writes (-1 where a later token names the same slot: the scan over the
// tokens after it), and one parallel loop over (1, token, KV head) whose
// thread reads its key row in 16-byte chunks (8 bf16), rotates each pair of
// chunks in f32 and stores the results, rounded once, straight into the
// cache row (slot / 16, slot mod 16, h); the value row is copied the same
// way. The caches are written as the buffers they are (not read-only),
// taken before the rows' so that a read of an aliasing tensor comes after
// their write.
// CHECK-LABEL: func.func @paged_nhd
// CHECK: func.call @pe_runtime_slot_out_of_range
// CHECK: %[[TABLES:.*]]:2 = linalg.generic
// CHECK: math.cos
// CHECK: math.sin
// CHECK: %[[WRITTEN:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]
// CHECK: %[[T:.*]] = linalg.index 0
// CHECK: %[[SLOT:.*]] = tensor.extract %[[SLOTS:[a-z0-9_]+]][%[[T]]]
// CHECK: %[[NEXT:.*]] = arith.addi %[[T]], %c1
// CHECK: %[[NONE_LATER:.*]] = scf.for %[[L:[a-z0-9_]+]] = %[[NEXT]] to
// CHECK: %[[OTHER:.*]] = tensor.extract %[[SLOTS]][%[[L]]]
// CHECK: arith.cmpi ne, %[[OTHER]], %[[SLOT]]
// CHECK: %[[KEPT:.*]] = arith.andi %{{.*}}, %[[NONE_LATER]]
// CHECK: arith.select %[[KEPT]], %[[SLOT]], %c-1_i64
// CHECK: %[[KC:.*]] = bufferization.to_buffer %arg2 : tensor<?x16x8x64xbf16>
// CHECK: %[[VC:.*]] = bufferization.to_buffer %arg3 : tensor<?x16x8x32xbf16>
// CHECK: %[[K:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK: %[[V:.*]] = bufferization.to_buffer %arg1 read_only
// CHECK: %[[COS:.*]] = bufferization.to_buffer %[[TABLES]]#0 read_only : tensor<?x1x32xf32>
// CHECK: %[[SIN:.*]] = bufferization.to_buffer %[[TABLES]]#1 read_only
// CHECK-COUNT-6: func.call @pe_runtime_size_mismatch(%c20_i64
// CHECK: %[[WS:.*]] = bufferization.to_buffer %[[WRITTEN]] read_only
// CHECK: scf.parallel (%{{.*}}, %[[TOK:[a-z0-9_]+]], %[[H:[a-z0-9_]+]]) =
// CHECK: %[[W:.*]] = memref.load %[[WS]][%[[TOK]]]
// CHECK: %[[WRITE:.*]] = arith.cmpi sge, %[[W]], %c0_i64
// CHECK: scf.if %[[WRITE]] {
// CHECK: %[[AT:.*]] = arith.index_cast %[[W]]
// CHECK: %[[PAGE:.*]] = arith.divui %[[AT]], %[[PS:.*]] : index
// CHECK: %[[ROW:.*]] = arith.remui %[[AT]], %[[PS]] : index
// CHECK: %[[C:.*]] = vector.load %[[COS]][%[[TOK]], %{{.*}}, %[[P0:.*]]] {alignment = 16 : i64} : memref<?x1x32xf32>, vector<8xf32>
// CHECK: %[[S:.*]] = vector.load %[[SIN]][%[[TOK]], %{{.*}}, %[[P0]]] {alignment = 16 : i64}
// CHECK: %[[X1:.*]] = vector.load %[[K]][%[[TOK]], %[[H]], %[[P0]]] {alignment = 16 : i64} : memref<?x8x64xbf16>, vector<8xbf16>
// CHECK: %[[X2:.*]] = vector.load %[[K]][%[[TOK]], %[[H]], %[[P1:.*]]] {alignment = 16 : i64}
// CHECK: math.fma
// CHECK: math.fma
// CHECK: %[[Y1:.*]] = arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: vector.store %[[Y1]], %[[KC]][%[[PAGE]], %[[ROW]], %[[H]], %[[P0]]] {alignment = 16 : i64}
// CHECK: %[[Y2:.*]] = arith.truncf
// CHECK: vector.store %[[Y2]], %[[KC]][%[[PAGE]], %[[ROW]], %[[H]], %[[P1]]] {alignment = 16 : i64}
// CHECK-COUNT-3: math.fma
// CHECK: %[[V0:.*]] = vector.load %[[V]][%[[TOK]], %[[H]], %{{.*}}] {alignment = 16 : i64} : memref<?x8x32xbf16>, vector<8xbf16>
// CHECK: vector.store %[[V0]], %[[VC]][%[[PAGE]], %[[ROW]], %[[H]], %{{.*}}] {alignment = 16 : i64}
// CHECK: scf.reduce
// CHECK: %[[NK:.*]] = bufferization.to_tensor %[[KC]] restrict writable
// CHECK: %[[NV:.*]] = bufferization.to_tensor %[[VC]] restrict writable
// CHECK: return %[[NK]], %[[NV]]
// CHECK-NOT: pe.append_kv
// CHECK-NOT: tensor.insert_slice
func.func @paged_nhd(%k: tensor<?x8x64xbf16>, %v: tensor<?x8x32xbf16>,
                     %kc: tensor<?x16x8x64xbf16> {pe.in_place}, %vc: tensor<?x16x8x32xbf16> {pe.in_place},
                     %slots: tensor<?xi64>, %pos: tensor<?xi64>)
    -> (tensor<?x16x8x64xbf16>, tensor<?x16x8x32xbf16>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : tensor<?xi64>) positions(%pos : tensor<?xi64>)
           layout(nhd) rope(#pe.rope<theta = 10000.0, rotary_dim = 64>)
           : tensor<?x8x64xbf16>, tensor<?x8x32xbf16> -> tensor<?x16x8x64xbf16>, tensor<?x16x8x32xbf16>
  return %a, %b : tensor<?x16x8x64xbf16>, tensor<?x16x8x32xbf16>
}

// -----

// Paged hnd: the cache row of a slot is (slot / page, h, slot mod page).
// CHECK-LABEL: func.func @paged_hnd
// CHECK: scf.parallel (%{{.*}}, %[[TOK:[a-z0-9_]+]], %[[H:[a-z0-9_]+]]) =
// CHECK: %[[PAGE:.*]] = arith.divui
// CHECK: %[[ROW:.*]] = arith.remui
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[PAGE]], %[[H]], %[[ROW]], %{{.*}}] {alignment = 16 : i64} : memref<?x4x8x16xf32>, vector<4xf32>
func.func @paged_hnd(%k: tensor<?x4x16xf32>, %v: tensor<?x4x16xf32>,
                     %kc: tensor<?x4x8x16xf32> {pe.in_place}, %vc: tensor<?x4x8x16xf32> {pe.in_place},
                     %slots: tensor<?xi32>) -> (tensor<?x4x8x16xf32>, tensor<?x4x8x16xf32>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : tensor<?xi32>) layout(hnd)
           : tensor<?x4x16xf32>, tensor<?x4x16xf32> -> tensor<?x4x8x16xf32>, tensor<?x4x8x16xf32>
  return %a, %b : tensor<?x4x8x16xf32>, tensor<?x4x8x16xf32>
}

// -----

// Dense, slots [B, S] (i32): the scan over later tokens stays in the token's
// batch row, the parallel loop is over (batch row, token, head) and the
// cache row is [b, h, slot].
// CHECK-LABEL: func.func @dense_rows
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: %[[B:.*]] = linalg.index 0
// CHECK: scf.for %[[L:[a-z0-9_]+]] =
// CHECK: tensor.extract %arg4[%[[B]], %[[L]]] : tensor<2x?xi32>
// CHECK: scf.parallel (%[[BI:[a-z0-9_]+]], %[[TOK:[a-z0-9_]+]], %[[H:[a-z0-9_]+]]) =
// CHECK: %[[W:.*]] = memref.load %{{.*}}[%[[BI]], %[[TOK]]] : memref<2x?xi64>
// CHECK: %[[AT:.*]] = arith.index_cast %[[W]]
// CHECK: %[[X:.*]] = vector.load %{{.*}}[%[[BI]], %[[H]], %[[TOK]], %{{.*}}] {alignment = 16 : i64} : memref<2x4x?x32xf32>
// CHECK: vector.store %[[X]], %{{.*}}[%[[BI]], %[[H]], %[[AT]], %{{.*}}] {alignment = 16 : i64} : memref<2x4x64x32xf32>
func.func @dense_rows(%k: tensor<2x4x?x32xf32>, %v: tensor<2x4x?x16xf32>,
                      %kc: tensor<2x4x64x32xf32> {pe.in_place}, %vc: tensor<2x4x64x16xf32> {pe.in_place},
                      %slots: tensor<2x?xi32>) -> (tensor<2x4x64x32xf32>, tensor<2x4x64x16xf32>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : tensor<2x?xi32>)
           : tensor<2x4x?x32xf32>, tensor<2x4x?x16xf32> -> tensor<2x4x64x32xf32>, tensor<2x4x64x16xf32>
  return %a, %b : tensor<2x4x64x32xf32>, tensor<2x4x64x16xf32>
}

// -----

// Dense, a rope of interleaved pairs on channels 16..47 of 64 (f32, chunks
// of 4): the cos/sin row of token s is [s] for positions [S] shared by the
// batch; the pairs of channels 16..47 are read as 8-channel spans, split
// into even and odd members, rotated and zipped back; channels 0..15 and
// 48..63 are copied (at [b, h, slot]).
// CHECK-LABEL: func.func @dense_interleaved_offset
// CHECK: scf.parallel (%[[BI:[a-z0-9_]+]], %[[TOK:[a-z0-9_]+]], %[[H:[a-z0-9_]+]]) =
// CHECK: %[[AT:.*]] = arith.index_cast
// CHECK: vector.load %{{.*}}[%[[TOK]], %{{.*}}] {alignment = 16 : i64} : memref<?x16xf32>, vector<4xf32>
// CHECK: %[[C:.*]] = arith.addi %{{.*}}, %c16
// CHECK: %[[X:.*]] = vector.load %{{.*}}[%[[BI]], %[[H]], %[[TOK]], %[[C]]] {alignment = 16 : i64} : memref<2x2x?x64xf32>, vector<8xf32>
// CHECK: vector.shuffle %[[X]], %[[X]] [0, 2, 4, 6]
// CHECK: vector.shuffle %[[X]], %[[X]] [1, 3, 5, 7]
// CHECK: math.fma
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 4, 1, 5, 2, 6, 3, 7]
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[BI]], %[[H]], %[[AT]], %[[C]]] {alignment = 16 : i64} : memref<2x2x32x64xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[BI]], %[[H]], %[[AT]], %c0{{.*}}] {alignment = 16 : i64} : memref<2x2x32x64xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[BI]], %[[H]], %[[AT]], %c12{{.*}}] {alignment = 16 : i64} : memref<2x2x32x64xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[BI]], %[[H]], %[[AT]], %c48] {alignment = 16 : i64} : memref<2x2x32x64xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[BI]], %[[H]], %[[AT]], %c60] {alignment = 16 : i64} : memref<2x2x32x64xf32>, vector<4xf32>
func.func @dense_interleaved_offset(%k: tensor<2x2x?x64xf32>, %v: tensor<2x2x?x16xf32>,
                                    %kc: tensor<2x2x32x64xf32> {pe.in_place}, %vc: tensor<2x2x32x16xf32> {pe.in_place},
                                    %slots: tensor<2x?xi64>, %pos: tensor<?xi64>)
    -> (tensor<2x2x32x64xf32>, tensor<2x2x32x16xf32>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : tensor<2x?xi64>) positions(%pos : tensor<?xi64>)
           rope(#pe.rope<rotary_dim = 32, rotary_offset = 16, style = interleaved>)
           : tensor<2x2x?x64xf32>, tensor<2x2x?x16xf32> -> tensor<2x2x32x64xf32>, tensor<2x2x32x16xf32>
  return %a, %b : tensor<2x2x32x64xf32>, tensor<2x2x32x16xf32>
}

// -----

// Left to pe-lower-to-linalg: rows that are not whole 16-byte chunks (6 f32
// channels), a rotated half of 4 bf16 channels, a multi-stream rope, value
// rows of 20 bf16 channels beside an f32 key cache (chunks of 4 keys but 8
// values); and caches that are read elsewhere too (one tensor as both
// caches; a cache two appends start from), which the kernel's in-place
// writes could share with another reader.
// CHECK-LABEL: func.func @not_chunks
// CHECK: pe.append_kv
// CHECK-LABEL: func.func @half_not_chunks
// CHECK: pe.append_kv
// CHECK-LABEL: func.func @multi_stream
// CHECK: pe.append_kv
// CHECK-LABEL: func.func @value_lanes
// CHECK: pe.append_kv
// CHECK-LABEL: func.func @one_tensor_both_caches
// CHECK: pe.append_kv
// CHECK-LABEL: func.func @two_appends_from_one_cache
// CHECK: pe.append_kv
// CHECK: pe.append_kv
// CHECK-LABEL: func.func @casts_of_one_tensor
// CHECK: pe.append_kv
// CHECK-LABEL: func.func @cast_of_a_returned_cache
// CHECK: call @pe_runtime_slot_out_of_range
// CHECK: scf.parallel
// CHECK: pe.append_kv
func.func @not_chunks(%k: tensor<?x2x6xf32>, %v: tensor<?x2x8xf32>, %kc: tensor<?x4x2x6xf32>,
                      %vc: tensor<?x4x2x8xf32>, %slots: tensor<?xi64>) -> (tensor<?x4x2x6xf32>, tensor<?x4x2x8xf32>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : tensor<?xi64>) layout(nhd)
           : tensor<?x2x6xf32>, tensor<?x2x8xf32> -> tensor<?x4x2x6xf32>, tensor<?x4x2x8xf32>
  return %a, %b : tensor<?x4x2x6xf32>, tensor<?x4x2x8xf32>
}
func.func @half_not_chunks(%k: tensor<?x2x16xbf16>, %v: tensor<?x2x16xbf16>, %kc: tensor<?x4x2x16xbf16>,
                           %vc: tensor<?x4x2x16xbf16>, %slots: tensor<?xi64>, %pos: tensor<?xi64>)
    -> (tensor<?x4x2x16xbf16>, tensor<?x4x2x16xbf16>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : tensor<?xi64>) positions(%pos : tensor<?xi64>)
           layout(nhd) rope(#pe.rope<rotary_dim = 8>)
           : tensor<?x2x16xbf16>, tensor<?x2x16xbf16> -> tensor<?x4x2x16xbf16>, tensor<?x4x2x16xbf16>
  return %a, %b : tensor<?x4x2x16xbf16>, tensor<?x4x2x16xbf16>
}
func.func @multi_stream(%k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>, %kc: tensor<?x4x2x16xf32>,
                        %vc: tensor<?x4x2x16xf32>, %slots: tensor<?xi64>, %pos: tensor<3x?xi64>)
    -> (tensor<?x4x2x16xf32>, tensor<?x4x2x16xf32>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : tensor<?xi64>) positions(%pos : tensor<3x?xi64>)
           layout(nhd) rope(#pe.rope<rotary_dim = 16, sections = [2, 2, 4]>)
           : tensor<?x2x16xf32>, tensor<?x2x16xf32> -> tensor<?x4x2x16xf32>, tensor<?x4x2x16xf32>
  return %a, %b : tensor<?x4x2x16xf32>, tensor<?x4x2x16xf32>
}
func.func @value_lanes(%k: tensor<?x2x16xf32>, %v: tensor<?x2x20xbf16>, %kc: tensor<?x4x2x16xf32>,
                       %vc: tensor<?x4x2x20xbf16>, %slots: tensor<?xi64>) -> (tensor<?x4x2x16xf32>, tensor<?x4x2x20xbf16>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : tensor<?xi64>) layout(nhd)
           : tensor<?x2x16xf32>, tensor<?x2x20xbf16> -> tensor<?x4x2x16xf32>, tensor<?x4x2x20xbf16>
  return %a, %b : tensor<?x4x2x16xf32>, tensor<?x4x2x20xbf16>
}
func.func @one_tensor_both_caches(%k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>, %c: tensor<?x4x2x16xf32>,
                                  %slots: tensor<?xi64>) -> (tensor<?x4x2x16xf32>, tensor<?x4x2x16xf32>) {
  %a, %b = pe.append_kv %k, %v into %c, %c slots(%slots : tensor<?xi64>) layout(nhd)
           : tensor<?x2x16xf32>, tensor<?x2x16xf32> -> tensor<?x4x2x16xf32>, tensor<?x4x2x16xf32>
  return %a, %b : tensor<?x4x2x16xf32>, tensor<?x4x2x16xf32>
}
func.func @two_appends_from_one_cache(%k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>, %kc: tensor<?x4x2x16xf32>,
                                      %vc: tensor<?x4x2x16xf32>, %s1: tensor<?xi64>, %s2: tensor<?xi64>)
    -> (tensor<?x4x2x16xf32>, tensor<?x4x2x16xf32>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%s1 : tensor<?xi64>) layout(nhd)
           : tensor<?x2x16xf32>, tensor<?x2x16xf32> -> tensor<?x4x2x16xf32>, tensor<?x4x2x16xf32>
  %c, %d = pe.append_kv %k, %v into %kc, %vc slots(%s2 : tensor<?xi64>) layout(nhd)
           : tensor<?x2x16xf32>, tensor<?x2x16xf32> -> tensor<?x4x2x16xf32>, tensor<?x4x2x16xf32>
  return %a, %c : tensor<?x4x2x16xf32>, tensor<?x4x2x16xf32>
}
func.func @casts_of_one_tensor(%k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>, %c: tensor<4x4x2x16xf32>,
                               %slots: tensor<?xi64>) -> (tensor<?x4x2x16xf32>, tensor<?x4x2x16xf32>) {
  %kc = tensor.cast %c : tensor<4x4x2x16xf32> to tensor<?x4x2x16xf32>
  %vc = tensor.cast %c : tensor<4x4x2x16xf32> to tensor<?x4x2x16xf32>
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : tensor<?xi64>) layout(nhd)
           : tensor<?x2x16xf32>, tensor<?x2x16xf32> -> tensor<?x4x2x16xf32>, tensor<?x4x2x16xf32>
  return %a, %b : tensor<?x4x2x16xf32>, tensor<?x4x2x16xf32>
}
func.func @cast_of_a_returned_cache(%k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>, %kc: tensor<4x4x2x16xf32>,
                                    %vc: tensor<4x4x2x16xf32>, %s1: tensor<?xi64>, %s2: tensor<?xi64>)
    -> (tensor<4x4x2x16xf32>, tensor<?x4x2x16xf32>) {
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%s1 : tensor<?xi64>) layout(nhd)
           : tensor<?x2x16xf32>, tensor<?x2x16xf32> -> tensor<4x4x2x16xf32>, tensor<4x4x2x16xf32>
  %ca = tensor.cast %a : tensor<4x4x2x16xf32> to tensor<?x4x2x16xf32>
  %cb = tensor.cast %b : tensor<4x4x2x16xf32> to tensor<?x4x2x16xf32>
  %c, %d = pe.append_kv %k, %v into %ca, %cb slots(%s2 : tensor<?xi64>) layout(nhd)
           : tensor<?x2x16xf32>, tensor<?x2x16xf32> -> tensor<?x4x2x16xf32>, tensor<?x4x2x16xf32>
  return %a, %c : tensor<4x4x2x16xf32>, tensor<?x4x2x16xf32>
}
