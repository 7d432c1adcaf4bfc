// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=skylake-avx512" --pe-tile-rope -split-input-file | FileCheck %s
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=skylake-avx512" --pe-tile-rope="threads=2" -split-input-file | FileCheck %s --check-prefix=CHECK-THREADS
// RUN: not pe-opt %s --pe-tile-rope="threads=0" -split-input-file 2>&1 | FileCheck %s --check-prefix=CHECK-BAD

// CHECK-BAD: pe-tile-rope: threads must be positive

// Half-split, bhsd: per head, per position of the block, the pairs
// (c, c + 64) rotated 16 at a time with the f32 table row, and the result
// stored non-temporally into one 64-byte aligned buffer.
// CHECK-LABEL: func.func @half_bhsd
// CHECK: %[[X:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<2x8x?x128xbf16>
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}}
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}}
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %{{.*}}
// CHECK: scf.for %[[S:.*]] = %{{.*}} to %{{.*}}
// CHECK: vector.load %{{.*}}[%[[S]], %{{.*}}] : memref<?x64xf32>, vector<16xf32>
// CHECK: %[[X0:.*]] = vector.load %[[X]][%[[B]], %[[H]], %[[S]], %{{.*}}] : memref<2x8x?x128xbf16>, vector<16xbf16>
// CHECK: arith.extf %[[X0]] : vector<16xbf16> to vector<16xf32>
// CHECK: math.fma
// CHECK: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[B]], %[[H]], %[[S]], %{{.*}}] {alignment = 32 : i64, nontemporal = true}
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
func.func @half_bhsd(%x: tensor<2x8x?x128xbf16>, %p: tensor<?xi32>) -> tensor<2x8x?x128xbf16> {
  %y = pe.rope #pe.rope<theta = 500000.0, rotary_dim = 128> %x, %p : tensor<2x8x?x128xbf16>, tensor<?xi32>
  return %y : tensor<2x8x?x128xbf16>
}

// CHECK-THREADS-LABEL: func.func @half_bhsd
// CHECK-THREADS: scf.parallel (%{{.*}}, %{{.*}}) =

// -----

// A rotated block at an offset (MLA's trailing rope block): channels 0..63
// copied, pairs (64 + c, 64 + c + 16) rotated.
// CHECK-LABEL: func.func @offset_block
// CHECK: %[[X:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK: %[[C0:.*]] = arith.addi %[[PAIR:.*]], %c64 : index
// CHECK: %[[C1:.*]] = arith.addi %[[PAIR]], %c80 : index
// CHECK: vector.load %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %[[C0]]] : memref<1x4x?x96xf32>, vector<16xf32>
// CHECK: vector.load %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %[[C1]]] : memref<1x4x?x96xf32>, vector<16xf32>
// CHECK: math.fma
// Then the 64 channels before the block, 16 at a time.
// CHECK: vector.load %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %c0{{.*}}] : memref<1x4x?x96xf32>, vector<16xf32>
// CHECK: vector.load %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %c48{{.*}}] : memref<1x4x?x96xf32>, vector<16xf32>
// CHECK-NOT: vector.load %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %c96
func.func @offset_block(%x: tensor<1x4x?x96xf32>, %p: tensor<?xi64>) -> tensor<1x4x?x96xf32> {
  %y = pe.rope #pe.rope<rotary_dim = 32, rotary_offset = 64> %x, %p : tensor<1x4x?x96xf32>, tensor<?xi64>
  return %y : tensor<1x4x?x96xf32>
}

// -----

// Interleaved partial rotary on bshd with shared tables: pairs (2i, 2i+1)
// deinterleaved by shuffles; channels 32..63 copied.
// CHECK-LABEL: func.func @interleaved_bshd_tables
// CHECK-NOT: linalg.generic
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17,
// CHECK: vector.store
func.func @interleaved_bshd_tables(%x: tensor<1x?x4x64xf32>, %p: tensor<1x?xi64>, %c: tensor<1x?x16xf32>, %s: tensor<1x?x16xf32>) -> tensor<1x?x4x64xf32> {
  %y = pe.rope #pe.rope<rotary_dim = 32, style = interleaved> %x, %p layout(bshd) tables(%c, %s : tensor<1x?x16xf32>, tensor<1x?x16xf32>) : tensor<1x?x4x64xf32>, tensor<1x?xi64>
  return %y : tensor<1x?x4x64xf32>
}

// -----

// r/2 = 4 is not a whole vector: left to pe-lower-to-linalg.
// CHECK-LABEL: func.func @narrow
// CHECK: pe.rope
func.func @narrow(%x: tensor<1x2x3x8xf32>, %p: tensor<3xi32>) -> tensor<1x2x3x8xf32> {
  %y = pe.rope #pe.rope<rotary_dim = 8> %x, %p : tensor<1x2x3x8xf32>, tensor<3xi32>
  return %y : tensor<1x2x3x8xf32>
}

// -----

// A row of 2^21 channels is a loop over vectors of pairs, not 2^16 unrolled
// rotations (compile time stays that of a small row).
// CHECK-LABEL: func.func @long_rows
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[HALF:.*]] step %[[LANES:.*]] {
// CHECK: vector.load %{{.*}} : memref<?x1048576xf32>, vector<16xf32>
// CHECK-COUNT-2: vector.store
func.func @long_rows(%x: tensor<1x1x?x2097152xf32>, %p: tensor<?xi32>) -> tensor<1x1x?x2097152xf32> {
  %y = pe.rope #pe.rope<rotary_dim = 2097152> %x, %p : tensor<1x1x?x2097152xf32>, tensor<?xi32>
  return %y : tensor<1x1x?x2097152xf32>
}
