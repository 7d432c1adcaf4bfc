// RUN: pe-opt %s -split-input-file -verify-diagnostics

// One case per verifier error of pe_gpu.mma_attention (PEGPUOps.cpp).

// mma_attention: m16n8k16 products need head dims that are multiples of 16.
func.func @mma_attention_head_dim(%q: memref<1x4x?x72xbf16>, %k: memref<1x4x?x72xbf16>,
                                  %v: memref<1x4x?x72xbf16>, %p: memref<?xi64>,
                                  %o: memref<1x4x?x72xbf16>) {
  // expected-error @+1 {{expects head dims that are multiples of 16 up to 256, or value heads up to 512 with query/key heads up to 576 that are multiples of 32, got 72 and 72}}
  pe_gpu.mma_attention %q, %k, %v into %o positions(%p, %p) scale(0.125)
    : memref<1x4x?x72xbf16>, memref<1x4x?x72xbf16>, memref<1x4x?x72xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x4x?x72xbf16>
  return
}

// -----

// mma_attention: value heads of at most 512 channels.
func.func @mma_attention_value_dim(%q: memref<1x16x?x576xbf16>, %k: memref<1x1x?x576xbf16>,
                                   %v: memref<1x1x?x528xbf16>, %p: memref<?xi64>,
                                   %o: memref<1x16x?x528xbf16>) {
  // expected-error @+1 {{expects head dims that are multiples of 16 up to 256, or value heads up to 512 with query/key heads up to 576 that are multiples of 32, got 576 and 528}}
  pe_gpu.mma_attention %q, %k, %v into %o positions(%p, %p) scale(0.125)
    : memref<1x16x?x576xbf16>, memref<1x1x?x576xbf16>, memref<1x1x?x528xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x16x?x528xbf16>
  return
}

// -----

// mma_attention: query/key heads over 256 channels need value heads over 256
// (two channel groups).
func.func @mma_attention_wide_keys(%q: memref<1x16x?x576xbf16>, %k: memref<1x1x?x576xbf16>,
                                   %v: memref<1x1x?x128xbf16>, %p: memref<?xi64>,
                                   %o: memref<1x16x?x128xbf16>) {
  // expected-error @+1 {{expects head dims that are multiples of 16 up to 256, or value heads up to 512 with query/key heads up to 576 that are multiples of 32, got 576 and 128}}
  pe_gpu.mma_attention %q, %k, %v into %o positions(%p, %p) scale(0.125)
    : memref<1x16x?x576xbf16>, memref<1x1x?x576xbf16>, memref<1x1x?x128xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x16x?x128xbf16>
  return
}

// -----

// mma_attention: value heads over 256 channels split the query/key head
// dim into two halves of whole 16-channel steps.
func.func @mma_attention_channel_groups(%q: memref<1x16x?x560xbf16>, %k: memref<1x1x?x560xbf16>,
                                        %v: memref<1x1x?x512xbf16>, %p: memref<?xi64>,
                                        %o: memref<1x16x?x512xbf16>) {
  // expected-error @+1 {{expects head dims that are multiples of 16 up to 256, or value heads up to 512 with query/key heads up to 576 that are multiples of 32, got 560 and 512}}
  pe_gpu.mma_attention %q, %k, %v into %o positions(%p, %p) scale(0.125)
    : memref<1x16x?x560xbf16>, memref<1x1x?x560xbf16>, memref<1x1x?x512xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x16x?x512xbf16>
  return
}

// -----

// mma_attention: a rope needs its tables.
func.func @mma_attention_rope_tables(%q: memref<1x4x?x64xbf16>, %k: memref<1x4x?x64xbf16>,
                                     %v: memref<1x4x?x64xbf16>, %p: memref<?xi64>,
                                     %o: memref<1x4x?x64xbf16>) {
  // expected-error @+1 {{expects the cos/sin tables of its rope}}
  pe_gpu.mma_attention %q, %k, %v into %o positions(%p, %p) scale(0.125) rope(#pe.rope<rotary_dim = 64>)
    : memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x4x?x64xbf16>
  return
}

// -----

// mma_attention: the query heads are a multiple of the key/value heads.
func.func @mma_attention_heads(%q: memref<1x6x?x64xf16>, %k: memref<1x4x?x64xf16>,
                               %v: memref<1x4x?x64xf16>, %p: memref<?xi64>,
                               %o: memref<1x6x?x64xf16>) {
  // expected-error @+1 {{expects Hkv key/value heads dividing the Hq query and out heads}}
  pe_gpu.mma_attention %q, %k, %v into %o positions(%p, %p) scale(0.125)
    : memref<1x6x?x64xf16>, memref<1x4x?x64xf16>, memref<1x4x?x64xf16>, memref<?xi64>, memref<?xi64> -> memref<1x6x?x64xf16>
  return
}

// -----

// mma_attention: one element type.
func.func @mma_attention_types(%q: memref<1x4x?x64xf16>, %k: memref<1x4x?x64xbf16>,
                               %v: memref<1x4x?x64xbf16>, %p: memref<?xi64>,
                               %o: memref<1x4x?x64xbf16>) {
  // expected-error @+1 {{expects query, key, value and out to share one element type}}
  pe_gpu.mma_attention %q, %k, %v into %o positions(%p, %p) scale(0.125)
    : memref<1x4x?x64xf16>, memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x4x?x64xbf16>
  return
}

// -----

// mma_attention: splits write partial states, which need their buffers.
func.func @mma_attention_splits(%q: memref<1x4x1x64xbf16>, %k: memref<1x4x?x64xbf16>,
                                %v: memref<1x4x?x64xbf16>, %p: memref<?xi64>, %qp: memref<1xi64>,
                                %o: memref<1x4x1x64xbf16>, %n: index) {
  // expected-error @+1 {{expects partial buffers exactly with splits}}
  pe_gpu.mma_attention %q, %k, %v into %o positions(%qp, %p) splits(%n) scale(0.125)
    : memref<1x4x1x64xbf16>, memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>, memref<1xi64>, memref<?xi64> -> memref<1x4x1x64xbf16>
  return
}

// -----

// mma_attention: the kernel's loops are unrolled over heads and head dims.
func.func @mma_attention_dynamic_heads(%q: memref<1x?x?x64xbf16>, %k: memref<1x4x?x64xbf16>,
                                       %v: memref<1x4x?x64xbf16>, %p: memref<?xi64>,
                                       %o: memref<1x4x?x64xbf16>) {
  // expected-error @+1 {{expects static head counts and head dims}}
  pe_gpu.mma_attention %q, %k, %v into %o positions(%p, %p) scale(0.125)
    : memref<1x?x?x64xbf16>, memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x4x?x64xbf16>
  return
}

// -----

// mma_attention: query and key share their head dim, out and value theirs.
func.func @mma_attention_head_dims(%q: memref<1x4x?x64xbf16>, %k: memref<1x4x?x32xbf16>,
                                   %v: memref<1x4x?x64xbf16>, %p: memref<?xi64>,
                                   %o: memref<1x4x?x64xbf16>) {
  // expected-error @+1 {{expects key and query, out and value to share their head dims}}
  pe_gpu.mma_attention %q, %k, %v into %o positions(%p, %p) scale(0.125)
    : memref<1x4x?x64xbf16>, memref<1x4x?x32xbf16>, memref<1x4x?x64xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x4x?x64xbf16>
  return
}

// -----

// mma_attention: tables belong to a rope.
func.func @mma_attention_tables_without_rope(%q: memref<1x4x?x64xbf16>, %k: memref<1x4x?x64xbf16>,
                                             %v: memref<1x4x?x64xbf16>, %p: memref<?xi64>,
                                             %t: memref<?x32xf32>, %o: memref<1x4x?x64xbf16>) {
  // expected-error @+1 {{expects a rope for its cos/sin tables}}
  pe_gpu.mma_attention %q, %k, %v into %o positions(%p, %p) tables(%t, %t, %t, %t : memref<?x32xf32>, memref<?x32xf32>, memref<?x32xf32>, memref<?x32xf32>) scale(0.125)
    : memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x4x?x64xbf16>
  return
}

// -----

// mma_attention: the rotated channels lie within the head.
func.func @mma_attention_rotary_dim(%q: memref<1x4x?x64xbf16>, %k: memref<1x4x?x64xbf16>,
                                    %v: memref<1x4x?x64xbf16>, %p: memref<?xi64>,
                                    %t: memref<?x64xf32>, %o: memref<1x4x?x64xbf16>) {
  // expected-error @+1 {{expects a rotary dim within the head dim}}
  pe_gpu.mma_attention %q, %k, %v into %o positions(%p, %p) tables(%t, %t, %t, %t : memref<?x64xf32>, memref<?x64xf32>, memref<?x64xf32>, memref<?x64xf32>) scale(0.125) rope(#pe.rope<rotary_dim = 128>)
    : memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x4x?x64xbf16>
  return
}

// -----

// mma_attention: a window holds at least the query's own key.
func.func @mma_attention_window(%q: memref<1x4x?x64xbf16>, %k: memref<1x4x?x64xbf16>,
                                %v: memref<1x4x?x64xbf16>, %p: memref<?xi64>,
                                %o: memref<1x4x?x64xbf16>) {
  // expected-error @+1 {{expects window >= 1}}
  pe_gpu.mma_attention %q, %k, %v into %o positions(%p, %p) scale(0.125) causal window(0)
    : memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x4x?x64xbf16>
  return
}

// -----

// mma_attention: ALiBi has one slope per query head.
func.func @mma_attention_slopes(%q: memref<1x4x?x64xbf16>, %k: memref<1x4x?x64xbf16>,
                                %v: memref<1x4x?x64xbf16>, %p: memref<?xi64>,
                                %s: memref<3xf32>, %o: memref<1x4x?x64xbf16>) {
  // expected-error @+1 {{expects one ALiBi slope per query head}}
  pe_gpu.mma_attention %q, %k, %v into %o positions(%p, %p) slopes(%s : memref<3xf32>) scale(0.125)
    : memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x4x?x64xbf16>
  return
}

// -----

// mma_attention: the scale is a normal f32 > 0.
func.func @mma_attention_scale(%q: memref<1x4x?x64xbf16>, %p: memref<?xi64>,
                               %o: memref<1x4x?x64xbf16>) {
  // expected-error @+1 {{expects a scale that is a normal f32 > 0}}
  pe_gpu.mma_attention %q, %q, %q into %o positions(%p, %p) scale(0.0)
    : memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x4x?x64xbf16>
  return
}

// -----

// mma_attention: the softcap is a normal f32 > 0.
func.func @mma_attention_softcap(%q: memref<1x4x?x64xbf16>, %p: memref<?xi64>,
                                 %o: memref<1x4x?x64xbf16>) {
  // expected-error @+1 {{expects a softcap that is a normal f32 > 0}}
  pe_gpu.mma_attention %q, %q, %q into %o positions(%p, %p) scale(0.125) softcap(-30.0)
    : memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x4x?x64xbf16>
  return
}
