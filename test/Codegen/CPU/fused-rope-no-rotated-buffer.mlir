// After fusion and the flash-attention lowering, the only buffer of the
// query's size is the attention's result: no rotated Q or K is allocated, and
// nothing of size Sq x Skv exists. (The unfused reference lowering, for
// contrast, allocates both rotated tensors and the score matrix.)
// RUN: pe-opt %s --pe-fuse-rope-into-attention --pe-share-rope-tables --pe-set-target="triple=x86_64-linux-gnu cpu=skylake-avx512" --pe-tile-attention --pe-lower-to-linalg --canonicalize --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=CHECK-FUSED
// RUN: pe-opt %s --pe-lower-to-linalg --canonicalize --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=CHECK-REFERENCE

#llama3 = #pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>

// CHECK-FUSED-LABEL: func.func @layer
// CHECK-FUSED-NOT: memref.alloc() {{.*}}: memref<1x{{8|32}}x2048x128xf32>
// CHECK-FUSED-NOT: memref.copy
// CHECK-FUSED: memref.alloc() : memref<1x32x2048x128xf32>
// CHECK-FUSED-NOT: memref.alloc() {{.*}}: memref<1x{{8|32}}x2048x128xf32>
// CHECK-FUSED-NOT: 2048x2048
// CHECK-FUSED-NOT: memref.copy
// CHECK-FUSED: return

// CHECK-REFERENCE-LABEL: func.func @layer
// CHECK-REFERENCE-DAG: memref.alloc() {{.*}}: memref<1x8x2048x64xf32>
// CHECK-REFERENCE-DAG: memref.alloc() {{.*}}: memref<1x8x4x2048x2048xf32>
func.func @layer(%q: tensor<1x32x2048x128xf32>, %k: tensor<1x8x2048x128xf32>, %v: tensor<1x8x2048x128xf32>, %p: tensor<2048xi32>) -> tensor<1x32x2048x128xf32> {
  %qr = pe.rope #llama3 %q, %p : tensor<1x32x2048x128xf32>, tensor<2048xi32>
  %kr = pe.rope #llama3 %k, %p : tensor<1x8x2048x128xf32>, tensor<2048xi32>
  %o = pe.attention %qr, %kr, %v q_positions(%p : tensor<2048xi32>) k_positions(%p : tensor<2048xi32>) causal : tensor<1x32x2048x128xf32>, tensor<1x8x2048x128xf32>, tensor<1x8x2048x128xf32> -> tensor<1x32x2048x128xf32>
  return %o : tensor<1x32x2048x128xf32>
}
