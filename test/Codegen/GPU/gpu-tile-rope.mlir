// RUN: pe-opt %s --pe-gpu-tile-rope -split-input-file | FileCheck %s

// Partial rotary, half pairs, bshd, bf16: one scf.parallel over (batch,
// position, head, chunk) with the chunk innermost; 8 bf16 (16 bytes) per
// chunk. Chunks 0..3 rotate pairs (c, c + 32) with the f32 table chunk of
// the position; chunks 4..11 copy channels 64..127. Every access is a
// 16-byte aligned vector, and the three buffers' alignment is checked.
// CHECK-LABEL: func.func @partial_half_bshd
// CHECK: %[[X:.*]] = bufferization.to_buffer %arg0 read_only : tensor<2x?x8x128xbf16> to memref<2x?x8x128xbf16>
// CHECK: memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: %[[MOD:.*]] = arith.remui %{{.*}}, %c16
// CHECK: %[[BAD:.*]] = arith.cmpi ne, %[[MOD]]
// CHECK: scf.if %[[BAD]]
// CHECK: func.call @pe_runtime_size_mismatch(%c20_i64,
// CHECK-COUNT-2: memref.extract_aligned_pointer_as_index
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) : memref<2x?x8x128xbf16>
// CHECK: scf.parallel (%[[B:.*]], %[[S:.*]], %[[H:.*]], %[[C:.*]]) = ({{.*}}) to ({{.*}}, %c12) step
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[ROT:.*]] = arith.cmpi ult, %[[C]], %[[C4]]
// CHECK: scf.if %[[ROT]] {
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[PAIR:.*]] = arith.muli %[[C]], %[[C8]]
// CHECK: vector.load %{{.*}}[%[[S]], %[[PAIR]]] {alignment = 16 : i64} : memref<?x32xf32>, vector<8xf32>
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[PARTNER:.*]] = arith.addi %[[PAIR]], %[[C32]]
// CHECK: vector.load %[[X]][%[[B]], %[[S]], %[[H]], %[[PAIR]]] {alignment = 16 : i64} : memref<2x?x8x128xbf16>, vector<8xbf16>
// CHECK: vector.load %[[X]][%[[B]], %[[S]], %[[H]], %[[PARTNER]]] {alignment = 16 : i64}
// CHECK: math.fma
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[B]], %[[S]], %[[H]], %[[PAIR]]] {alignment = 16 : i64}
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[B]], %[[S]], %[[H]], %[[PARTNER]]] {alignment = 16 : i64}
// CHECK: } else {
// CHECK: %[[OFFSET:.*]] = arith.muli %[[C]], %{{.*}}
// CHECK: %[[CH:.*]] = arith.addi %{{.*}}, %[[OFFSET]]
// CHECK: %[[COPY:.*]] = vector.load %[[X]][%[[B]], %[[S]], %[[H]], %[[CH]]] {alignment = 16 : i64} : memref<2x?x8x128xbf16>, vector<8xbf16>
// CHECK: vector.store %[[COPY]], %[[OUT]][%[[B]], %[[S]], %[[H]], %[[CH]]] {alignment = 16 : i64}
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
func.func @partial_half_bshd(%x: tensor<2x?x8x128xbf16>, %pos: tensor<?xi64>) -> tensor<2x?x8x128xbf16> {
  %r = pe.rope #pe.rope<rotary_dim = 64> %x, %pos layout(bshd) : tensor<2x?x8x128xbf16>, tensor<?xi64>
  return %r : tensor<2x?x8x128xbf16>
}

// -----

// Interleaved f32 with per-batch positions, bhsd: a chunk of 4 pairs reads
// 8 channels (two 16-byte accesses), split into even and odd members by
// shuffles; the tables are indexed by (batch, position).
// CHECK-LABEL: func.func @interleaved_batch_positions
// CHECK: scf.parallel (%[[B:.*]], %[[H:.*]], %[[S:.*]], %[[C:.*]]) =
// CHECK: vector.load %{{.*}}[%[[B]], %[[S]], %{{.*}}] {alignment = 16 : i64} : memref<2x?x32xf32>, vector<4xf32>
// CHECK: vector.load %{{.*}}[%[[B]], %[[H]], %[[S]], %{{.*}}] {alignment = 16 : i64} : memref<2x4x?x64xf32>, vector<8xf32>
// CHECK-DAG: vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6]
// CHECK-DAG: vector.shuffle %{{.*}}, %{{.*}} [1, 3, 5, 7]
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 4, 1, 5, 2, 6, 3, 7]
func.func @interleaved_batch_positions(%x: tensor<2x4x?x64xf32>, %pos: tensor<2x?xi32>) -> tensor<2x4x?x64xf32> {
  %r = pe.rope #pe.rope<rotary_dim = 64, style = interleaved> %x, %pos : tensor<2x4x?x64xf32>, tensor<2x?xi32>
  return %r : tensor<2x4x?x64xf32>
}

// -----

// Rows that are not whole 16-byte chunks (r/2 = 3 f32) are left to the
// reference lowering.
// CHECK-LABEL: func.func @not_chunks
// CHECK: pe.rope
func.func @not_chunks(%x: tensor<1x2x3x6xf32>, %pos: tensor<3xi32>) -> tensor<1x2x3x6xf32> {
  %r = pe.rope #pe.rope<rotary_dim = 6> %x, %pos : tensor<1x2x3x6xf32>, tensor<3xi32>
  return %r : tensor<1x2x3x6xf32>
}
