// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=skylake-avx512" --pe-tile-attention -canonicalize | FileCheck %s
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=sapphirerapids" --pe-tile-attention="amx=true bf16-dot=true" -canonicalize | FileCheck %s --check-prefix=AMX
// Numerics: python/tests/test_mla_shared_key.py.

// Multi-head latent attention, expanded form: key heads of 128 own channels
// and one rotated block of 64 shared by all heads. The kernel takes the
// block's buffer as an argument of its own (after the rope tables) and
// reads it while it packs each key tile: the rope pairs of channels
// 128 + (i, i + 32) from the block's channels (i, i + 32). No key tensor of
// 192 channels per head is built.
// CHECK-LABEL: func.func @shared
// CHECK-SAME: %[[KS:[a-z0-9]+]]: tensor<?x1x?x64xf32>
// CHECK-NOT: x2x?x192xf32
// CHECK: %[[BLOCK:.*]] = bufferization.to_buffer %[[KS]] read_only : tensor<?x1x?x64xf32> to memref<?x1x?x64xf32>
// CHECK: call @pe_attention_kernel{{.*}}, %[[BLOCK]], %{{.*}}) : (memref<?x8x?x192xf32>, memref<?x2x?x128xf32>, memref<?x2x?x128xf32>, memref<?xi64>, memref<?xi64>, memref<?x32xf32>, memref<?x32xf32>, memref<?x32xf32>, memref<?x32xf32>, memref<?x1x?x64xf32>, memref<?x8x?x128xf32>) -> ()
// The AMX kernel packs its bf16 key tiles the same way.
// AMX-LABEL: func.func @shared_bf16
// AMX: func.func private @pe_attention_kernel{{.*}}(%{{.*}}: memref<1x8x64x192xbf16>
// AMX-SAME: %[[KB:[a-z0-9]+]]: memref<1x1x64x64xbf16>
// AMX: vector.load %[[KB]]
// AMX: amx.tile_mulf
func.func @shared(%q: tensor<?x8x?x192xf32>, %k: tensor<?x2x?x128xf32>, %v: tensor<?x2x?x128xf32>, %ks: tensor<?x1x?x64xf32>) -> tensor<?x8x?x128xf32> {
  %o = pe.attention %q, %k, %v shared_key(%ks : tensor<?x1x?x64xf32>) causal rope(#pe.rope<rotary_dim = 64, rotary_offset = 128>) : tensor<?x8x?x192xf32>, tensor<?x2x?x128xf32>, tensor<?x2x?x128xf32> -> tensor<?x8x?x128xf32>
  return %o : tensor<?x8x?x128xf32>
}

func.func @shared_bf16(%q: tensor<1x8x64x192xbf16>, %k: tensor<1x2x64x128xbf16>, %v: tensor<1x2x64x128xbf16>, %ks: tensor<1x1x64x64xbf16>) -> tensor<1x8x64x128xbf16> {
  %o = pe.attention %q, %k, %v shared_key(%ks : tensor<1x1x64x64xbf16>) causal rope(#pe.rope<rotary_dim = 64, rotary_offset = 128>) : tensor<1x8x64x192xbf16>, tensor<1x2x64x128xbf16>, tensor<1x2x64x128xbf16> -> tensor<1x8x64x128xbf16>
  return %o : tensor<1x8x64x128xbf16>
}

// A rotated block that straddles the head's channels and the shared ones
// (channels 96 .. 159 against 128 own ones) is not read in place: the
// block is written into every key head first and the kernel reads keys of
// 192 channels.
// CHECK-LABEL: func.func @straddling
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<?x2x?x192xf32>)
// CHECK: call @pe_attention_kernel{{.*}} : (memref<?x8x?x192xf32>, memref<?x2x?x192xf32>,
// The kernels follow the functions: the first one's rope pairs read the
// block's channels (i, i + 32).
// CHECK-LABEL: func.func private @pe_attention_kernel(
// CHECK-SAME: %[[KB:[a-z0-9]+]]: memref<?x1x?x64xf32>
// CHECK: vector.load %[[KB]][%{{.*}}, %c0, %{{.*}}, %c0] : memref<?x1x?x64xf32>, vector<16xf32>
// CHECK: vector.load %[[KB]][%{{.*}}, %c0, %{{.*}}, %c32] : memref<?x1x?x64xf32>, vector<16xf32>
func.func @straddling(%q: tensor<?x8x?x192xf32>, %k: tensor<?x2x?x128xf32>, %v: tensor<?x2x?x128xf32>, %ks: tensor<?x1x?x64xf32>) -> tensor<?x8x?x128xf32> {
  %o = pe.attention %q, %k, %v shared_key(%ks : tensor<?x1x?x64xf32>) causal rope(#pe.rope<rotary_dim = 64, rotary_offset = 96>) : tensor<?x8x?x192xf32>, tensor<?x2x?x128xf32>, tensor<?x2x?x128xf32> -> tensor<?x8x?x128xf32>
  return %o : tensor<?x8x?x128xf32>
}
