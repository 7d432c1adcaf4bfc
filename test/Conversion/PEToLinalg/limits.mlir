// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=skylake-avx512" --pe-tile-attention --pe-tile-rope --pe-lower-to-linalg -split-input-file -verify-diagnostics

// Work done on the host at compile time is bounded: a constant table of
// more than 2^20 frequencies or slopes is a diagnostic, never an allocation
// of that size (2^40 heads or rotary dims would exhaust memory).

func.func @frequencies() -> tensor<549755813888xf32> {
  // expected-error @+1 {{'pe.rope_frequencies' op needs a constant table of 549755813888 entries (frequencies or slopes), more than the 1048576 that are built at compile time}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 1099511627776> -> tensor<549755813888xf32>
  return %f : tensor<549755813888xf32>
}

// -----

func.func @slopes() -> tensor<1099511627776xf32> {
  // expected-error @+1 {{'pe.alibi_slopes' op needs a constant table of 1099511627776 entries}}
  %s = pe.alibi_slopes : tensor<1099511627776xf32>
  return %s : tensor<1099511627776xf32>
}

// -----

func.func @sinusoidal(%p: tensor<?xi32>) -> tensor<?x1099511627776xf32> {
  // expected-error @+1 {{'pe.sinusoidal' op needs a constant table of 549755813888 entries}}
  %e = pe.sinusoidal %p : tensor<?xi32> -> tensor<?x1099511627776xf32>
  return %e : tensor<?x1099511627776xf32>
}

// -----

// The flash kernel declines (its plan's sizes overflow) and the reference
// lowering reports the slopes.
func.func @alibi_heads(%q: tensor<1x1099511627776x1x1xf32>, %k: tensor<1x1x1x1xf32>) -> tensor<1x1099511627776x1x1xf32> {
  // expected-error @+1 {{'pe.attention' op needs a constant table of 1099511627776 entries}}
  %o = pe.attention %q, %k, %k causal alibi(8.0) : tensor<1x1099511627776x1x1xf32>, tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32> -> tensor<1x1099511627776x1x1xf32>
  return %o : tensor<1x1099511627776x1x1xf32>
}

// -----

func.func @rope(%x: tensor<1x1x4x2199023255552xf32>, %p: tensor<4xi32>) -> tensor<1x1x4x2199023255552xf32> {
  // expected-error @+1 {{'pe.rope' op needs a constant table of 1099511627776 entries}}
  %y = pe.rope #pe.rope<rotary_dim = 2199023255552> %x, %p : tensor<1x1x4x2199023255552xf32>, tensor<4xi32>
  return %y : tensor<1x1x4x2199023255552xf32>
}
