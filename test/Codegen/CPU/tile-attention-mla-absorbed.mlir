// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=skylake-avx512" --pe-tile-attention -canonicalize | FileCheck %s
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=sapphirerapids" --pe-tile-attention="amx=true bf16-dot=true" -canonicalize | FileCheck %s
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=skylake-avx512" --pe-tile-attention="block-keys=96" | FileCheck %s --check-prefix=NAMED
// Numerics: python/tests/test_mla_absorbed.py.
// With AMX asked for, heads of 576 channels do not fit the AMX kernel's
// scratch (96-key tiles and bf16 weights): the plan falls back to the dot
// products or the f32 FMA kernel, not to the reference lowering.

// Absorbed multi-head latent attention: the values are the first 512
// channels of the one KV head (the latent c_kv before the rotated k_pe).
// The kernel is called with the latent's buffer as both keys and values
// (it reads channels e < 512 of each row as the value), so neither the
// slice nor a copy of the cache remains.
// CHECK-LABEL: func.func @absorbed
// CHECK-SAME: %[[C:[a-z0-9]+]]: tensor<?x1x?x576xbf16>
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[BUF:.*]] = bufferization.to_buffer %[[C]] read_only : tensor<?x1x?x576xbf16> to memref<?x1x?x576xbf16>
// CHECK-NOT: tensor.extract_slice
// CHECK-NOT: memref.copy
// CHECK: call @pe_attention_kernel(%{{.*}}, %[[BUF]], %[[BUF]],
// f32, 128 query heads of 576 channels on one KV head: 96-key tiles would
// take the task's scratch past its 1 MiB bound (128 rows of Q, O and
// scores, the K and V tiles, the buffers' skews), so the plan takes shorter
// tiles rather than the reference lowering. The tile size named as an
// option is kept, and then the op is left to the reference lowering.
// CHECK-LABEL: func.func @absorbed_f32
// CHECK-NOT: pe.attention
// CHECK: call @pe_attention_kernel{{(_[0-9]+)?}}(
// NAMED-LABEL: func.func @absorbed_f32
// NAMED: pe.attention
// CHECK-LABEL: func.func @other_slice
// CHECK: %[[S:.*]] = tensor.extract_slice
// CHECK: bufferization.to_buffer %[[S]] read_only
func.func @absorbed(%q: tensor<?x128x1x576xbf16>, %c: tensor<?x1x?x576xbf16>) -> tensor<?x128x1x512xbf16> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %c, %c0 : tensor<?x1x?x576xbf16>
  %s = tensor.dim %c, %c2 : tensor<?x1x?x576xbf16>
  %v = tensor.extract_slice %c[0, 0, 0, 0] [%b, 1, %s, 512] [1, 1, 1, 1] : tensor<?x1x?x576xbf16> to tensor<?x1x?x512xbf16>
  %o = pe.attention %q, %c, %v causal rope(#pe.rope<theta = 10000.0, rotary_dim = 64, rotary_offset = 512, style = interleaved>)
       : tensor<?x128x1x576xbf16>, tensor<?x1x?x576xbf16>, tensor<?x1x?x512xbf16> -> tensor<?x128x1x512xbf16>
  return %o : tensor<?x128x1x512xbf16>
}

func.func @absorbed_f32(%q: tensor<4x128x1x576xf32>, %c: tensor<4x1x4096x576xf32>) -> tensor<4x128x1x512xf32> {
  %v = tensor.extract_slice %c[0, 0, 0, 0] [4, 1, 4096, 512] [1, 1, 1, 1] : tensor<4x1x4096x576xf32> to tensor<4x1x4096x512xf32>
  %o = pe.attention %q, %c, %v causal rope(#pe.rope<theta = 10000.0, rotary_dim = 64, rotary_offset = 512, style = interleaved>)
       : tensor<4x128x1x576xf32>, tensor<4x1x4096x576xf32>, tensor<4x1x4096x512xf32> -> tensor<4x128x1x512xf32>
  return %o : tensor<4x128x1x512xf32>
}

// Values at another offset are not a prefix of the keys: sliced and copied.
func.func @other_slice(%q: tensor<1x16x1x576xf32>, %c: tensor<1x1x40x576xf32>) -> tensor<1x16x1x512xf32> {
  %v = tensor.extract_slice %c[0, 0, 0, 64] [1, 1, 40, 512] [1, 1, 1, 1] : tensor<1x1x40x576xf32> to tensor<1x1x40x512xf32>
  %o = pe.attention %q, %c, %v causal
       : tensor<1x16x1x576xf32>, tensor<1x1x40x576xf32>, tensor<1x1x40x512xf32> -> tensor<1x16x1x512xf32>
  return %o : tensor<1x16x1x512xf32>
}
