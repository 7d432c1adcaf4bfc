// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=sapphirerapids" --pe-tile-attention | FileCheck %s
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=znver2" --pe-tile-attention | FileCheck %s --check-prefix=AVX2
// RUN: pe-opt %s --pe-set-target="triple=aarch64-linux-gnu cpu=neoverse-v2" --pe-tile-attention | FileCheck %s --check-prefix=NEON
// Numerics: python/tests/test_tile_attention.py (decode-7-rows and the other
// decode cases, every target).

// Decode of 3 rows (1 query x 3 heads of one KV head), bf16 without RoPE:
// the keys are read in place and widened as they are loaded (no key tile),
// and the rows' scores share one reduction: the halves of rows 0 and 1 are
// added into one vector, those of row 2 and a zero vector into another,
// then the two vectors' halves again (4 rows in blocks of 4 lanes on
// AVX-512, of 2 on AVX2), then the lanes of each block within the vector;
// lanes 0, 4, 8 (0, 2, 4) hold the 3 sums, stored as one vector.
// CHECK-LABEL: func.func private @pe_attention_kernel(
// CHECK: %[[K:.*]] = vector.load %arg1[{{.*}}] : memref<1x1x?x64xbf16>, vector<16xbf16>
// CHECK-NEXT: arith.extf %[[K]] : vector<16xbf16> to vector<16xf32>
// CHECK: vector.shuffle %[[R0:.*]], %[[R1:.*]] [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23] : vector<16xf32>, vector<16xf32>
// CHECK-NEXT: vector.shuffle %[[R0]], %[[R1]] [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31]
// CHECK: vector.shuffle %[[R2:.*]], %[[ZERO:.*]] [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27]
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13]
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14]
// CHECK: %[[SUMS:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 4, 8] : vector<16xf32>, vector<16xf32>
// CHECK: vector.store %[[SUMS]], %{{.*}} : memref<16x16xf32>, vector<3xf32>
// CHECK-NOT: vector.reduction
// AVX2-LABEL: func.func private @pe_attention_kernel(
// AVX2: %[[K:.*]] = vector.load %arg1[{{.*}}] : memref<1x1x?x64xbf16>, vector<8xbf16>
// AVX2-NEXT: arith.extf %[[K]] : vector<8xbf16> to vector<8xf32>
// AVX2: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 8, 9, 10, 11] : vector<8xf32>, vector<8xf32>
// AVX2: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 4, 5, 8, 9, 12, 13] : vector<8xf32>, vector<8xf32>
// AVX2: vector.shuffle %{{.*}}, %{{.*}} [1, 0, 3, 2, 5, 4, 7, 6] : vector<8xf32>, vector<8xf32>
// AVX2: %[[SUMS:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4] : vector<8xf32>, vector<8xf32>
// AVX2: vector.store %[[SUMS]], %{{.*}} : memref<16x8xf32>, vector<3xf32>
// Tiles of 16 keys on x86 (the scores S^T: keys x rows above), of 32 on
// other ISAs.
// NEON-LABEL: func.func private @pe_attention_kernel(
// NEON: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<32x4xf32>
func.func @decode_bf16_three_rows(%q: tensor<1x3x1x64xbf16>, %k: tensor<1x1x?x64xbf16>, %v: tensor<1x1x?x64xbf16>) -> tensor<1x3x1x64xbf16> {
  %o = pe.attention %q, %k, %v : tensor<1x3x1x64xbf16>, tensor<1x1x?x64xbf16>, tensor<1x1x?x64xbf16> -> tensor<1x3x1x64xbf16>
  return %o : tensor<1x3x1x64xbf16>
}
