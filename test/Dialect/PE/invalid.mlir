// RUN: pe-opt %s -split-input-file -verify-diagnostics

// One case per verifier error of the pe dialect (op verifiers in PEOps.cpp,
// attribute verifiers in PEAttrs.cpp), plus ODS type-constraint errors and
// parse errors of the attribute syntax.

//===----------------------------------------------------------------------===//
// pe.rope_frequencies
//===----------------------------------------------------------------------===//

// rope_frequencies: the result has rotary_dim/2 elements.
func.func @rope_frequencies_wrong_size() {
  // expected-error @+1 {{'pe.rope_frequencies' op expects a result of rotary_dim/2 = 32 elements, but got 16}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64> -> tensor<16xf32>
  return
}

// -----

// rope_frequencies: a dynamic result size is not rotary_dim/2.
func.func @rope_frequencies_dynamic_size() {
  // expected-error @+1 {{expects a result of rotary_dim/2 = 32 elements, but got ?}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64> -> tensor<?xf32>
  return
}

// -----

// rope_frequencies (ODS): the result is a 1-D f32/f64 tensor.
func.func @rope_frequencies_f16_result() {
  // expected-error @+1 {{result #0 must be 1D tensor of 32-bit float or 64-bit float values, but got 'tensor<32xf16>'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64> -> tensor<32xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// pe.rope_tables
//===----------------------------------------------------------------------===//

// rope_tables (verifyPositionsRank): positions are [S] or [B, S].
func.func @rope_tables_positions_rank(%p: tensor<2x3x16xi32>) {
  // expected-error @+1 {{'pe.rope_tables' op expects positions of shape [S] or [B, S], but got rank 3}}
  %c, %s = pe.rope_tables #pe.rope<rotary_dim = 64> %p : tensor<2x3x16xi32> -> tensor<2x3x16x32xf32>
  return
}

// -----

// rope_tables (verifyPerPositionResult): the tables have the positions' rank + 1.
func.func @rope_tables_result_rank(%p: tensor<16xi32>) {
  // expected-error @+1 {{expects the tables of rank 2 (the positions' shape plus one dimension), but got rank 3}}
  %c, %s = pe.rope_tables #pe.rope<rotary_dim = 64> %p : tensor<16xi32> -> tensor<1x16x32xf32>
  return
}

// -----

// rope_tables (verifyPerPositionResult): the leading dims match the positions.
func.func @rope_tables_result_dim(%p: tensor<2x16xi64>) {
  // expected-error @+1 {{expects the tables dimension 1 to match the positions (16), but got 8}}
  %c, %s = pe.rope_tables #pe.rope<rotary_dim = 64> %p : tensor<2x16xi64> -> tensor<2x8x32xf32>
  return
}

// -----

// rope_tables (verifyPerPositionResult): the last dim is rotary_dim/2.
func.func @rope_tables_result_last_dim(%p: tensor<?xi32>) {
  // expected-error @+1 {{expects the last dimension of the tables to be rotary_dim/2 = 32, but got 64}}
  %c, %s = pe.rope_tables #pe.rope<rotary_dim = 64> %p : tensor<?xi32> -> tensor<?x64xf32>
  return
}

// -----

// rope_tables (ODS AllTypesMatch): cos and sin have the same type.
func.func @rope_tables_cos_sin_mismatch(%p: tensor<16xi32>) {
  // expected-error @+1 {{failed to verify that all of {cos, sin} have same type}}
  %c, %s = "pe.rope_tables"(%p) <{rope = #pe.rope<rotary_dim = 64>}> : (tensor<16xi32>) -> (tensor<16x32xf32>, tensor<16x32xf16>)
  return
}

// -----

// rope_tables (ODS): positions are i32/i64 tensors.
func.func @rope_tables_float_positions(%p: tensor<16xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<16xf32>'}}
  %c, %s = "pe.rope_tables"(%p) <{rope = #pe.rope<rotary_dim = 64>}> : (tensor<16xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// pe.rope
//===----------------------------------------------------------------------===//

// rope: the input has rank 4 ([B, H, S, D] with the default layout).
func.func @rope_input_rank_bhsd(%x: tensor<8x16x64xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{'pe.rope' op expects a rank-4 input ([B, H, S, D]), but got rank 3}}
  %y = pe.rope #pe.rope<rotary_dim = 64> %x, %p : tensor<8x16x64xf32>, tensor<16xi32>
  return
}

// -----

// rope: the input has rank 4 ([B, S, H, D] with layout(bshd)).
func.func @rope_input_rank_bshd(%x: tensor<8x16x64xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{'pe.rope' op expects a rank-4 input ([B, S, H, D]), but got rank 3}}
  %y = pe.rope #pe.rope<rotary_dim = 64> %x, %p layout(bshd) : tensor<8x16x64xf32>, tensor<16xi32>
  return
}

// -----

// rope (verifyStatic): the head count is static.
func.func @rope_dynamic_heads(%x: tensor<2x?x16x64xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{'pe.rope' op expects a static head count (only batch and sequence dimensions may be dynamic)}}
  %y = pe.rope #pe.rope<rotary_dim = 64> %x, %p : tensor<2x?x16x64xf32>, tensor<16xi32>
  return
}

// -----

// rope (verifyStatic): with layout(bshd) the head count is dim 2.
func.func @rope_dynamic_heads_bshd(%x: tensor<2x16x?x64xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{expects a static head count}}
  %y = pe.rope #pe.rope<rotary_dim = 64> %x, %p layout(bshd) : tensor<2x16x?x64xf32>, tensor<16xi32>
  return
}

// -----

// rope (verifyStatic): the head dimension is static.
func.func @rope_dynamic_head_dim(%x: tensor<2x8x16x?xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{'pe.rope' op expects a static head dimension (only batch and sequence dimensions may be dynamic)}}
  %y = pe.rope #pe.rope<rotary_dim = 64> %x, %p : tensor<2x8x16x?xf32>, tensor<16xi32>
  return
}

// -----

// rope (verifyRotaryDimFits): rotary_dim <= head dimension.
func.func @rope_rotary_dim_too_large(%x: tensor<2x8x16x64xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{'pe.rope' op expects rotary_dim (128) <= head dimension (64)}}
  %y = pe.rope #pe.rope<rotary_dim = 128> %x, %p : tensor<2x8x16x64xf32>, tensor<16xi32>
  return
}

// -----

// rope (verifyPositionsShape -> verifyPositionsRank): positions are [S] or [B, S].
func.func @rope_positions_rank(%x: tensor<2x8x16x64xf32>, %p: tensor<2x8x16xi32>) {
  // expected-error @+1 {{'pe.rope' op expects positions of shape [S] or [B, S], but got rank 3}}
  %y = pe.rope #pe.rope<rotary_dim = 64> %x, %p : tensor<2x8x16x64xf32>, tensor<2x8x16xi32>
  return
}

// -----

// rope (verifyPositionsShape): one position per sequence entry.
func.func @rope_positions_seq(%x: tensor<2x8x16x64xf32>, %p: tensor<12xi32>) {
  // expected-error @+1 {{'pe.rope' op expects positions to have S = 16 entries, but got 12}}
  %y = pe.rope #pe.rope<rotary_dim = 64> %x, %p : tensor<2x8x16x64xf32>, tensor<12xi32>
  return
}

// -----

// rope (verifyPositionsShape): with layout(bshd) S is dim 1.
func.func @rope_positions_seq_bshd(%x: tensor<2x16x8x64xf32>, %p: tensor<8xi32>) {
  // expected-error @+1 {{expects positions to have S = 16 entries, but got 8}}
  %y = pe.rope #pe.rope<rotary_dim = 64> %x, %p layout(bshd) : tensor<2x16x8x64xf32>, tensor<8xi32>
  return
}

// -----

// rope (verifyPositionsShape): [B, S] positions have the input's batch size.
func.func @rope_positions_batch(%x: tensor<2x8x16x64xf32>, %p: tensor<3x16xi64>) {
  // expected-error @+1 {{'pe.rope' op expects the batch dimension of positions to be 2, but got 3}}
  %y = pe.rope #pe.rope<rotary_dim = 64> %x, %p : tensor<2x8x16x64xf32>, tensor<3x16xi64>
  return
}

// -----

// rope (ODS): i32 activations are rejected.
func.func @rope_i32_input(%x: tensor<2x8x16x64xi32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<2x8x16x64xi32>'}}
  %y = pe.rope #pe.rope<rotary_dim = 64> %x, %p : tensor<2x8x16x64xi32>, tensor<16xi32>
  return
}

// -----

// rope (ODS): f64 activations are rejected.
func.func @rope_f64_input(%x: tensor<2x8x16x64xf64>, %p: tensor<16xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<2x8x16x64xf64>'}}
  %y = pe.rope #pe.rope<rotary_dim = 64> %x, %p : tensor<2x8x16x64xf64>, tensor<16xi32>
  return
}

// -----

// rope (ODS): positions are i32/i64 (not i16).
func.func @rope_i16_positions(%x: tensor<2x8x16x64xf32>, %p: tensor<16xi16>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<16xi16>'}}
  %y = pe.rope #pe.rope<rotary_dim = 64> %x, %p : tensor<2x8x16x64xf32>, tensor<16xi16>
  return
}

// -----

// rope (ODS AllTypesMatch): the result has the input's type.
func.func @rope_result_type(%x: tensor<2x8x16x64xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{failed to verify that all of {input, result} have same type}}
  %y = "pe.rope"(%x, %p) <{operandSegmentSizes = array<i32: 1, 1, 0, 0>, rope = #pe.rope<rotary_dim = 64>}> : (tensor<2x8x16x64xf32>, tensor<16xi32>) -> tensor<2x8x16x64xf16>
  return
}

// -----

// rope (ODS): the rope attribute is required.
func.func @rope_missing_attr(%x: tensor<2x8x16x64xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{requires attribute 'rope'}}
  %y = "pe.rope"(%x, %p) <{operandSegmentSizes = array<i32: 1, 1, 0, 0>}> : (tensor<2x8x16x64xf32>, tensor<16xi32>) -> tensor<2x8x16x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// pe.sinusoidal
//===----------------------------------------------------------------------===//

// sinusoidal (verifyPositionsRank): positions are [S] or [B, S].
func.func @sinusoidal_positions_rank(%p: tensor<2x3x16xi64>) {
  // expected-error @+1 {{'pe.sinusoidal' op expects positions of shape [S] or [B, S], but got rank 3}}
  %e = pe.sinusoidal %p : tensor<2x3x16xi64> -> tensor<2x3x16x64xf32>
  return
}

// -----

// sinusoidal (verifyStatic): the embedding dimension is static.
func.func @sinusoidal_dynamic_dim(%p: tensor<16xi64>) {
  // expected-error @+1 {{'pe.sinusoidal' op expects a static embedding dimension (only batch and sequence dimensions may be dynamic)}}
  %e = pe.sinusoidal %p : tensor<16xi64> -> tensor<16x?xf32>
  return
}

// -----

// sinusoidal: an odd embedding dimension states its last channel.
func.func @sinusoidal_odd_dim(%p: tensor<16xi64>) {
  // expected-error @+1 {{'pe.sinusoidal' op expects odd(zero) or odd(sin) with the odd embedding dimension 7 (what its last channel holds)}}
  %e = pe.sinusoidal %p : tensor<16xi64> -> tensor<16x7xf32>
  return
}

// -----

// sinusoidal: odd(...) only with an odd embedding dimension.
func.func @sinusoidal_odd_on_even(%p: tensor<16xi64>) {
  // expected-error @+1 {{'pe.sinusoidal' op expects no odd(...) with the even embedding dimension 8}}
  %e = pe.sinusoidal %p odd(zero) : tensor<16xi64> -> tensor<16x8xf32>
  return
}

// -----

// sinusoidal: the embedding dimension is >= 1.
func.func @sinusoidal_zero_dim(%p: tensor<16xi64>) {
  // expected-error @+1 {{expects an embedding dimension >= 1, but got 0}}
  %e = pe.sinusoidal %p : tensor<16xi64> -> tensor<16x0xf32>
  return
}

// -----

// sinusoidal: spacing(fairseq) divides by dim/2 - 1.
func.func @sinusoidal_fairseq_dim(%p: tensor<16xi64>) {
  // expected-error @+1 {{'pe.sinusoidal' op expects dim/2 - shift > 0 with spacing(fairseq) or freq_shift (the exponent divides by it), but got dim/2 = 1 and shift 1.000000e+00}}
  %e = pe.sinusoidal %p spacing(fairseq) : tensor<16xi64> -> tensor<16x2xf32>
  return
}

// -----

// sinusoidal: a frequency shift as large as dim/2.
func.func @sinusoidal_shift_dim(%p: tensor<16xi64>) {
  // expected-error @+1 {{'pe.sinusoidal' op expects dim/2 - shift > 0 with spacing(fairseq) or freq_shift (the exponent divides by it), but got dim/2 = 4 and shift 4.000000e+00}}
  %e = pe.sinusoidal %p freq_shift(4.0) : tensor<16xi64> -> tensor<16x8xf32>
  return
}

// -----

// sinusoidal: spacing(fairseq) is freq_shift(1); not both.
func.func @sinusoidal_fairseq_and_shift(%p: tensor<16xi64>) {
  // expected-error @+1 {{'pe.sinusoidal' op expects spacing(fairseq) or freq_shift, not both (spacing(fairseq) is freq_shift(1))}}
  %e = pe.sinusoidal %p spacing(fairseq) freq_shift(0.0) : tensor<16xi64> -> tensor<16x8xf32>
  return
}

// -----

// sinusoidal: a finite scale.
func.func @sinusoidal_scale(%p: tensor<16xi64>) {
  // expected-error @+1 {{'pe.sinusoidal' op expects a finite scale, but got INF}}
  %e = pe.sinusoidal %p scale(0x7FF0000000000000) : tensor<16xi64> -> tensor<16x8xf32>
  return
}

// -----

// sinusoidal: a pad row is a row of an integer position.
func.func @sinusoidal_padding_timesteps(%t: tensor<16xf32>) {
  // expected-error @+1 {{'pe.sinusoidal' op expects integer positions with padding_idx}}
  %e = pe.sinusoidal %t padding_idx(1) : tensor<16xf32> -> tensor<16x8xf32>
  return
}

// -----

// sinusoidal: the pad row's position fits the positions' type.
func.func @sinusoidal_padding_i32(%p: tensor<16xi32>) {
  // expected-error @+1 {{'pe.sinusoidal' op expects padding_idx 5000000000 to be an i32, as the positions are}}
  %e = pe.sinusoidal %p padding_idx(5000000000) : tensor<16xi32> -> tensor<16x8xf32>
  return
}

// -----

// sinusoidal: timesteps are floats of f16, bf16, f32 or f64.
func.func @sinusoidal_i8(%t: tensor<16xi8>) {
  // expected-error @+1 {{'pe.sinusoidal' op operand #0 must be}}
  %e = pe.sinusoidal %t : tensor<16xi8> -> tensor<16x8xf32>
  return
}

// -----

// sinusoidal: base > 0.
func.func @sinusoidal_zero_base(%p: tensor<16xi64>) {
  // expected-error @+1 {{'pe.sinusoidal' op expects base to be a finite number > 0, but got 0}}
  %e = pe.sinusoidal %p base(0.0) : tensor<16xi64> -> tensor<16x64xf32>
  return
}

// -----

// sinusoidal: base is finite.
func.func @sinusoidal_inf_base(%p: tensor<16xi64>) {
  // expected-error @+1 {{'pe.sinusoidal' op expects base to be a finite number > 0, but got INF}}
  %e = pe.sinusoidal %p base(0x7FF0000000000000) : tensor<16xi64> -> tensor<16x64xf32>
  return
}

// -----

// sinusoidal (verifyPerPositionResult): the result has the positions' rank + 1.
func.func @sinusoidal_result_rank(%p: tensor<2x16xi64>) {
  // expected-error @+1 {{'pe.sinusoidal' op expects a result of rank 3 (the positions' shape plus the embedding dimension), but got rank 2}}
  %e = pe.sinusoidal %p : tensor<2x16xi64> -> tensor<16x64xf32>
  return
}

// -----

// sinusoidal (verifyPerPositionResult): the leading dims match the positions.
func.func @sinusoidal_result_dim(%p: tensor<2x16xi64>) {
  // expected-error @+1 {{'pe.sinusoidal' op expects the result dimension 0 to match the positions (2), but got 4}}
  %e = pe.sinusoidal %p : tensor<2x16xi64> -> tensor<4x16x64xf32>
  return
}

// -----

// sinusoidal (ODS): the result is f32/f16/bf16, not f64.
func.func @sinusoidal_f64_result(%p: tensor<16xi64>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<16x64xf64>'}}
  %e = pe.sinusoidal %p : tensor<16xi64> -> tensor<16x64xf64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// pe.learned
//===----------------------------------------------------------------------===//

// learned: the table is rank 2.
func.func @learned_table_rank(%t: tensor<1024xf32>, %p: tensor<16xi64>) {
  // expected-error @+1 {{'pe.learned' op expects a rank-2 table [N, D], but got rank 1}}
  %e = pe.learned %t[%p] : tensor<1024xf32>, tensor<16xi64> -> tensor<16x1xf32>
  return
}

// -----

// learned (verifyStatic): the embedding dimension (table dim 1) is static.
func.func @learned_dynamic_dim(%t: tensor<1024x?xf32>, %p: tensor<16xi64>) {
  // expected-error @+1 {{'pe.learned' op expects a static embedding dimension (only batch and sequence dimensions may be dynamic)}}
  %e = pe.learned %t[%p] : tensor<1024x?xf32>, tensor<16xi64> -> tensor<16x768xf32>
  return
}

// -----

// learned: the result element type is the table's.
func.func @learned_element_type(%t: tensor<1024x768xf32>, %p: tensor<16xi64>) {
  // expected-error @+1 {{'pe.learned' op expects the result element type to match the table ('f32'), but got 'bf16'}}
  %e = pe.learned %t[%p] : tensor<1024x768xf32>, tensor<16xi64> -> tensor<16x768xbf16>
  return
}

// -----

// learned (verifyPositionsRank): positions are [S] or [B, S].
func.func @learned_positions_rank(%t: tensor<1024x768xf32>, %p: tensor<2x3x16xi64>) {
  // expected-error @+1 {{'pe.learned' op expects positions of shape [S] or [B, S], but got rank 3}}
  %e = pe.learned %t[%p] : tensor<1024x768xf32>, tensor<2x3x16xi64> -> tensor<2x3x16x768xf32>
  return
}

// -----

// learned (verifyPerPositionResult): the result has the positions' rank + 1.
func.func @learned_result_rank(%t: tensor<1024x768xf32>, %p: tensor<16xi64>) {
  // expected-error @+1 {{'pe.learned' op expects the result of rank 2 (the positions' shape plus one dimension), but got rank 3}}
  %e = pe.learned %t[%p] : tensor<1024x768xf32>, tensor<16xi64> -> tensor<1x16x768xf32>
  return
}

// -----

// learned (verifyPerPositionResult): the leading dims match the positions.
func.func @learned_result_dim(%t: tensor<1024x768xf32>, %p: tensor<16xi64>) {
  // expected-error @+1 {{'pe.learned' op expects the result dimension 0 to match the positions (16), but got 8}}
  %e = pe.learned %t[%p] : tensor<1024x768xf32>, tensor<16xi64> -> tensor<8x768xf32>
  return
}

// -----

// learned (verifyPerPositionResult): the last dim is the table's row size.
func.func @learned_result_last_dim(%t: tensor<1024x768xf32>, %p: tensor<?xi64>) {
  // expected-error @+1 {{'pe.learned' op expects the last dimension of the result to be the table's row size = 768, but got 512}}
  %e = pe.learned %t[%p] : tensor<1024x768xf32>, tensor<?xi64> -> tensor<?x512xf32>
  return
}

// -----

// learned: a constant negative position is out of range.
func.func @learned_negative_position(%t: tensor<1024x768xf32>) {
  %p = arith.constant dense<[0, 5, -1]> : tensor<3xi64>
  // expected-error @+1 {{'pe.learned' op position -1 (entry 2) is out of range for a table of 1024 rows}}
  %e = pe.learned %t[%p] : tensor<1024x768xf32>, tensor<3xi64> -> tensor<3x768xf32>
  return
}

// -----

// learned: a constant position >= N is out of range (N itself is the first).
func.func @learned_position_too_large(%t: tensor<1024x768xf32>) {
  %p = arith.constant dense<[[0, 1023], [1024, 3]]> : tensor<2x2xi32>
  // expected-error @+1 {{'pe.learned' op position 1024 (entry 2) is out of range for a table of 1024 rows}}
  %e = pe.learned %t[%p] : tensor<1024x768xf32>, tensor<2x2xi32> -> tensor<2x2x768xf32>
  return
}

// -----

// learned: with a dynamic row count only negative constants are rejected.
func.func @learned_negative_position_dynamic_rows(%t: tensor<?x768xf32>) {
  %p = arith.constant dense<[7, -3]> : tensor<2xi32>
  // expected-error @+1 {{'pe.learned' op position -3 (entry 1) is out of range for a table of ? rows}}
  %e = pe.learned %t[%p] : tensor<?x768xf32>, tensor<2xi32> -> tensor<2x768xf32>
  return
}

// -----

// learned (ODS): an i32 table is not an activation type.
func.func @learned_i32_table(%t: tensor<1024x768xi32>, %p: tensor<16xi64>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1024x768xi32>'}}
  %e = pe.learned %t[%p] : tensor<1024x768xi32>, tensor<16xi64> -> tensor<16x768xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// pe.alibi_slopes
//===----------------------------------------------------------------------===//

// alibi_slopes (verifyStatic): the head count is static.
func.func @alibi_slopes_dynamic() {
  // expected-error @+1 {{'pe.alibi_slopes' op expects a static head count (only batch and sequence dimensions may be dynamic)}}
  %s = pe.alibi_slopes : tensor<?xf32>
  return
}

// -----

// alibi_slopes: at least one head.
func.func @alibi_slopes_no_heads() {
  // expected-error @+1 {{'pe.alibi_slopes' op expects at least one head, but got 0}}
  %s = pe.alibi_slopes : tensor<0xf32>
  return
}

// -----

// alibi_slopes: max_bias > 0.
func.func @alibi_slopes_zero_max_bias() {
  // expected-error @+1 {{'pe.alibi_slopes' op expects max_bias to be a finite number > 0 (ggml's max_bias = 0 would make every slope 1), but got 0}}
  %s = pe.alibi_slopes max_bias(0.0) : tensor<8xf32>
  return
}

// -----

// alibi_slopes: max_bias is finite.
func.func @alibi_slopes_nan_max_bias() {
  // expected-error @+1 {{'pe.alibi_slopes' op expects max_bias to be a finite number > 0 (ggml's max_bias = 0 would make every slope 1), but got nan}}
  %s = pe.alibi_slopes max_bias(0x7FF8000000000000) : tensor<8xf32>
  return
}

// -----

// alibi_slopes (ODS): the result is a 1-D f32/f64 tensor.
func.func @alibi_slopes_rank2() {
  // expected-error @+1 {{result #0 must be 1D tensor of 32-bit float or 64-bit float values, but got 'tensor<2x4xf32>'}}
  %s = pe.alibi_slopes : tensor<2x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// pe.alibi_bias
//===----------------------------------------------------------------------===//

// alibi_bias (verifyStatic): the number of slopes is static.
func.func @alibi_bias_dynamic_heads(%s: tensor<?xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{'pe.alibi_bias' op expects a static head count (only batch and sequence dimensions may be dynamic)}}
  %b = pe.alibi_bias causal %s, %p, %p : tensor<?xf32>, tensor<16xi32>, tensor<16xi32> -> tensor<8x16x16xf32>
  return
}

// -----

// alibi_bias (verifyPositionsRank): q_positions are [S] or [B, S].
func.func @alibi_bias_q_positions_rank(%s: tensor<8xf32>, %q: tensor<1x2x16xi32>, %k: tensor<16xi32>) {
  // expected-error @+1 {{'pe.alibi_bias' op expects q_positions of shape [S] or [B, S], but got rank 3}}
  %b = pe.alibi_bias causal %s, %q, %k : tensor<8xf32>, tensor<1x2x16xi32>, tensor<16xi32> -> tensor<8x16x16xf32>
  return
}

// -----

// alibi_bias (verifyPositionsRank): k_positions are [S] or [B, S].
func.func @alibi_bias_k_positions_rank(%s: tensor<8xf32>, %q: tensor<16xi32>, %k: tensor<i32>) {
  // expected-error @+1 {{'pe.alibi_bias' op expects k_positions of shape [S] or [B, S], but got rank 0}}
  %b = pe.alibi_bias causal %s, %q, %k : tensor<8xf32>, tensor<16xi32>, tensor<i32> -> tensor<8x16x16xf32>
  return
}

// -----

// alibi_bias: unbatched positions give a [H, Sq, Skv] result.
func.func @alibi_bias_result_rank_unbatched(%s: tensor<8xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{'pe.alibi_bias' op expects a result of rank 3 ([H, Sq, Skv]), but got rank 4}}
  %b = pe.alibi_bias causal %s, %p, %p : tensor<8xf32>, tensor<16xi32>, tensor<16xi32> -> tensor<1x8x16x16xf32>
  return
}

// -----

// alibi_bias: batched positions (either one) give a [B, H, Sq, Skv] result.
func.func @alibi_bias_result_rank_batched(%s: tensor<8xf32>, %q: tensor<16xi32>, %k: tensor<2x16xi32>) {
  // expected-error @+1 {{'pe.alibi_bias' op expects a result of rank 4 ([B, H, Sq, Skv]), but got rank 3}}
  %b = pe.alibi_bias symmetric %s, %q, %k : tensor<8xf32>, tensor<16xi32>, tensor<2x16xi32> -> tensor<8x16x16xf32>
  return
}

// -----

// alibi_bias: the result has one head per slope.
func.func @alibi_bias_heads(%s: tensor<8xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{'pe.alibi_bias' op expects the result to have 8 heads (the number of slopes), but got 4}}
  %b = pe.alibi_bias causal %s, %p, %p : tensor<8xf32>, tensor<16xi32>, tensor<16xi32> -> tensor<4x16x16xf32>
  return
}

// -----

// alibi_bias (verifyPositionsShape): q_positions have Sq entries.
func.func @alibi_bias_q_positions_seq(%s: tensor<8xf32>, %q: tensor<4xi32>, %k: tensor<16xi32>) {
  // expected-error @+1 {{'pe.alibi_bias' op expects q_positions to have Sq = 16 entries, but got 4}}
  %b = pe.alibi_bias causal %s, %q, %k : tensor<8xf32>, tensor<4xi32>, tensor<16xi32> -> tensor<8x16x16xf32>
  return
}

// -----

// alibi_bias (verifyPositionsShape): k_positions have Skv entries.
func.func @alibi_bias_k_positions_seq(%s: tensor<8xf32>, %q: tensor<4xi32>, %k: tensor<16xi32>) {
  // expected-error @+1 {{'pe.alibi_bias' op expects k_positions to have Skv = 12 entries, but got 16}}
  %b = pe.alibi_bias causal %s, %q, %k : tensor<8xf32>, tensor<4xi32>, tensor<16xi32> -> tensor<8x4x12xf32>
  return
}

// -----

// alibi_bias (verifyPositionsShape): [B, S] q_positions have the result's batch size.
func.func @alibi_bias_q_positions_batch(%s: tensor<8xf32>, %q: tensor<3x4xi32>, %k: tensor<16xi32>) {
  // expected-error @+1 {{'pe.alibi_bias' op expects the batch dimension of q_positions to be 2, but got 3}}
  %b = pe.alibi_bias causal %s, %q, %k : tensor<8xf32>, tensor<3x4xi32>, tensor<16xi32> -> tensor<2x8x4x16xf32>
  return
}

// -----

// alibi_bias (verifyPositionsShape): [B, S] k_positions have the result's batch size.
func.func @alibi_bias_k_positions_batch(%s: tensor<8xf32>, %q: tensor<2x4xi32>, %k: tensor<5x16xi32>) {
  // expected-error @+1 {{'pe.alibi_bias' op expects the batch dimension of k_positions to be 2, but got 5}}
  %b = pe.alibi_bias causal %s, %q, %k : tensor<8xf32>, tensor<2x4xi32>, tensor<5x16xi32> -> tensor<2x8x4x16xf32>
  return
}

// -----

// alibi_bias (ODS): the slopes are f32/f16/bf16.
func.func @alibi_bias_f64_slopes(%s: tensor<8xf64>, %p: tensor<16xi32>) {
  // expected-error @+1 {{operand #0 must be 1D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<8xf64>'}}
  %b = pe.alibi_bias causal %s, %p, %p : tensor<8xf64>, tensor<16xi32>, tensor<16xi32> -> tensor<8x16x16xf32>
  return
}

// -----

// alibi_bias (parse): the mode is causal or symmetric.
func.func @alibi_bias_bad_mode(%s: tensor<8xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'mode' [causal, symmetric]}}
  %b = pe.alibi_bias bidirectional %s, %p, %p : tensor<8xf32>, tensor<16xi32>, tensor<16xi32> -> tensor<8x16x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// pe.attention
//===----------------------------------------------------------------------===//

// attention: the query is rank 4.
func.func @attention_query_rank(%q: tensor<8x16x64xf32>, %k: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects a rank-4 query ([B, H, S, D]), but got rank 3}}
  %o = pe.attention %q, %k, %k : tensor<8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: the key is rank 4.
func.func @attention_key_rank(%q: tensor<1x8x16x64xf32>, %k: tensor<8x16x64xf32>, %v: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects a rank-4 key ([B, H, S, D]), but got rank 3}}
  %o = pe.attention %q, %k, %v : tensor<1x8x16x64xf32>, tensor<8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: the value is rank 4.
func.func @attention_value_rank(%q: tensor<1x8x16x64xf32>, %v: tensor<1x1x8x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects a rank-4 value ([B, H, S, D]), but got rank 5}}
  %o = pe.attention %q, %q, %v : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: the result is rank 4.
func.func @attention_result_rank(%q: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects a rank-4 result ([B, H, S, D]), but got rank 3}}
  %o = pe.attention %q, %q, %q : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<8x16x64xf32>
  return
}

// -----

// attention: query, key, value and result share one element type.
func.func @attention_element_types(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x64xbf16>) {
  // expected-error @+1 {{'pe.attention' op expects query, key, value and result to share one element type, but got 'f32', 'bf16', 'bf16', 'f32'}}
  %o = pe.attention %q, %k, %k : tensor<1x8x16x64xf32>, tensor<1x8x16x64xbf16>, tensor<1x8x16x64xbf16> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention (verifyStatic): the query head count is static.
func.func @attention_dynamic_query_heads(%q: tensor<1x?x16x64xf32>, %k: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects a static query head count (only batch and sequence dimensions may be dynamic)}}
  %o = pe.attention %q, %k, %k : tensor<1x?x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention (verifyStatic): the key/value head count is static.
func.func @attention_dynamic_kv_heads(%q: tensor<1x8x16x64xf32>, %k: tensor<1x?x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects a static key/value head count (only batch and sequence dimensions may be dynamic)}}
  %o = pe.attention %q, %k, %k : tensor<1x8x16x64xf32>, tensor<1x?x16x64xf32>, tensor<1x?x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention (verifyStatic): the query head dimension is static.
func.func @attention_dynamic_head_dim(%q: tensor<1x8x16x?xf32>, %k: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects a static head dimension (only batch and sequence dimensions may be dynamic)}}
  %o = pe.attention %q, %k, %k : tensor<1x8x16x?xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention (verifyStatic): the value head dimension is static.
func.func @attention_dynamic_value_head_dim(%q: tensor<1x8x16x64xf32>, %v: tensor<1x8x16x?xf32>) {
  // expected-error @+1 {{'pe.attention' op expects a static value head dimension (only batch and sequence dimensions may be dynamic)}}
  %o = pe.attention %q, %q, %v : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x?xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: query, key and value share the batch size.
func.func @attention_batch(%q: tensor<2x8x16x64xf32>, %k: tensor<3x8x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects query, key and value to share the batch size, but got 2, 3, 3}}
  %o = pe.attention %q, %k, %k : tensor<2x8x16x64xf32>, tensor<3x8x16x64xf32>, tensor<3x8x16x64xf32> -> tensor<2x8x16x64xf32>
  return
}

// -----

// attention: the key head dimension is the query's.
func.func @attention_key_head_dim(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x32xf32>, %v: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects key head dimension 64 (the query's), but got 32}}
  %o = pe.attention %q, %k, %v : tensor<1x8x16x64xf32>, tensor<1x8x16x32xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: the value has the key's head count.
func.func @attention_value_heads(%q: tensor<1x8x16x64xf32>, %k: tensor<1x4x16x64xf32>, %v: tensor<1x2x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects value to have 4 heads (the key's), but got 2}}
  %o = pe.attention %q, %k, %v : tensor<1x8x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x2x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: the value has the key's sequence length.
func.func @attention_value_positions(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x64xf32>, %v: tensor<1x8x12x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects value to have 16 positions (the key's), but got 12}}
  %o = pe.attention %q, %k, %v : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x12x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: Hq is a multiple of Hkv (GQA).
func.func @attention_gqa_heads(%q: tensor<1x8x16x64xf32>, %k: tensor<1x3x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects the query head count (8) to be a multiple of the key/value head count (3)}}
  %o = pe.attention %q, %k, %k : tensor<1x8x16x64xf32>, tensor<1x3x16x64xf32>, tensor<1x3x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: Hkv >= 1 (no division by zero heads).
func.func @attention_zero_kv_heads(%q: tensor<1x8x16x64xf32>, %k: tensor<1x0x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects the query head count (8) to be a multiple of the key/value head count (0)}}
  %o = pe.attention %q, %k, %k : tensor<1x8x16x64xf32>, tensor<1x0x16x64xf32>, tensor<1x0x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: the result is [B, Hq, Sq, Dv] (here Dv differs from D).
func.func @attention_result_dim(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x64xf32>, %v: tensor<1x8x16x32xf32>) {
  // expected-error @+1 {{'pe.attention' op expects result dimension 3 to be 32 ([B, Hq, Sq, Dv]), but got 64}}
  %o = pe.attention %q, %k, %v : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x32xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: the result has Hq heads (not Hkv).
func.func @attention_result_heads(%q: tensor<1x8x16x64xf32>, %k: tensor<1x2x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects result dimension 1 to be 8 ([B, Hq, Sq, Dv]), but got 2}}
  %o = pe.attention %q, %k, %k : tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32> -> tensor<1x2x16x64xf32>
  return
}

// -----

// attention: the mask is rank 4.
func.func @attention_mask_rank(%q: tensor<1x8x16x64xf32>, %m: tensor<16x16xf32>) {
  // expected-error @+1 {{'pe.attention' op expects a rank-4 mask ([B|1, Hq|1, Sq, Skv]), but got rank 2}}
  %o = pe.attention %q, %q, %q mask(%m : tensor<16x16xf32>) : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: the mask's head dim is Hq or 1.
func.func @attention_mask_heads(%q: tensor<2x8x16x64xf32>, %m: tensor<1x4x16x16xf32>) {
  // expected-error @+1 {{'pe.attention' op expects a mask of shape [2|1, 8|1, 16, 16], but got 'tensor<1x4x16x16xf32>'}}
  %o = pe.attention %q, %q, %q mask(%m : tensor<1x4x16x16xf32>) : tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32> -> tensor<2x8x16x64xf32>
  return
}

// -----

// attention: the mask's batch dim is B or 1.
func.func @attention_mask_batch(%q: tensor<2x8x16x64xf32>, %m: tensor<3x1x16x16xf32>) {
  // expected-error @+1 {{'pe.attention' op expects a mask of shape [2|1, 8|1, 16, 16], but got 'tensor<3x1x16x16xf32>'}}
  %o = pe.attention %q, %q, %q mask(%m : tensor<3x1x16x16xf32>) : tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32> -> tensor<2x8x16x64xf32>
  return
}

// -----

// attention: the mask's Sq and Skv are not broadcast.
func.func @attention_mask_seq(%q: tensor<1x8x4x64xf32>, %k: tensor<1x8x16x64xf32>, %m: tensor<1x1x1x16xf32>) {
  // expected-error @+1 {{'pe.attention' op expects a mask of shape [1|1, 8|1, 4, 16], but got 'tensor<1x1x1x16xf32>'}}
  %o = pe.attention %q, %k, %k mask(%m : tensor<1x1x1x16xf32>) : tensor<1x8x4x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x4x64xf32>
  return
}

// -----

// attention (verifyPositionsShape -> verifyPositionsRank): q_positions are [Sq] or [B, Sq].
func.func @attention_q_positions_rank(%q: tensor<1x8x16x64xf32>, %p: tensor<1x1x16xi32>) {
  // expected-error @+1 {{'pe.attention' op expects q_positions of shape [S] or [B, S], but got rank 3}}
  %o = pe.attention %q, %q, %q q_positions(%p : tensor<1x1x16xi32>) : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention (verifyPositionsShape): q_positions have Sq entries.
func.func @attention_q_positions_seq(%q: tensor<1x8x4x64xf32>, %k: tensor<1x8x16x64xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{'pe.attention' op expects q_positions to have Sq = 4 entries, but got 16}}
  %o = pe.attention %q, %k, %k q_positions(%p : tensor<16xi32>) : tensor<1x8x4x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x4x64xf32>
  return
}

// -----

// attention (verifyPositionsShape): [B, Sq] q_positions have the batch size.
func.func @attention_q_positions_batch(%q: tensor<2x8x16x64xf32>, %p: tensor<4x16xi64>) {
  // expected-error @+1 {{'pe.attention' op expects the batch dimension of q_positions to be 2, but got 4}}
  %o = pe.attention %q, %q, %q q_positions(%p : tensor<4x16xi64>) : tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32> -> tensor<2x8x16x64xf32>
  return
}

// -----

// attention (verifyPositionsShape -> verifyPositionsRank): k_positions are [Skv] or [B, Skv].
func.func @attention_k_positions_rank(%q: tensor<1x8x16x64xf32>, %p: tensor<i64>) {
  // expected-error @+1 {{'pe.attention' op expects k_positions of shape [S] or [B, S], but got rank 0}}
  %o = pe.attention %q, %q, %q k_positions(%p : tensor<i64>) : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention (verifyPositionsShape): k_positions have Skv entries.
func.func @attention_k_positions_seq(%q: tensor<1x8x4x64xf32>, %k: tensor<1x8x16x64xf32>, %p: tensor<4xi32>) {
  // expected-error @+1 {{'pe.attention' op expects k_positions to have Skv = 16 entries, but got 4}}
  %o = pe.attention %q, %k, %k k_positions(%p : tensor<4xi32>) : tensor<1x8x4x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x4x64xf32>
  return
}

// -----

// attention (verifyPositionsShape): [B, Skv] k_positions have the batch size.
func.func @attention_k_positions_batch(%q: tensor<2x8x16x64xf32>, %p: tensor<1x16xi32>) {
  // expected-error @+1 {{'pe.attention' op expects the batch dimension of k_positions to be 2, but got 1}}
  %o = pe.attention %q, %q, %q k_positions(%p : tensor<1x16xi32>) : tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32> -> tensor<2x8x16x64xf32>
  return
}

// -----

// attention: scale is a normal f32 > 0.
func.func @attention_negative_scale(%q: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects scale to be a normal f32 > 0 (scores are scaled in f32), but got -1.250000e-01}}
  %o = pe.attention %q, %q, %q scale(-0.125) : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: scale is a normal f32 > 0 (1e300 would be inf in f32: every
// score inf or NaN).
func.func @attention_scale_beyond_f32(%q: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects scale to be a normal f32 > 0 (scores are scaled in f32), but got 1.000000e+300}}
  %o = pe.attention %q, %q, %q scale(1.0e300) : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: scale is a normal f32 > 0 (1e-300 would be 0 in f32).
func.func @attention_scale_below_f32(%q: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects scale to be a normal f32 > 0 (scores are scaled in f32), but got 1.000000e-300}}
  %o = pe.attention %q, %q, %q scale(1.0e-300) : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: at least one query head (0 % Hkv == 0 would give GQA groups of
// no head).
func.func @attention_no_query_heads(%q: tensor<1x0x16x64xf32>, %k: tensor<1x2x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects at least one query head and a head dimension >= 1, but got 0 heads of dimension 64}}
  %o = pe.attention %q, %k, %k : tensor<1x0x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32> -> tensor<1x0x16x64xf32>
  return
}

// -----

// attention: a head dimension >= 1 (the default scale is 1/sqrt(D)).
func.func @attention_empty_head(%q: tensor<1x2x1x0xf32>, %v: tensor<1x2x1x16xf32>) {
  // expected-error @+1 {{'pe.attention' op expects at least one query head and a head dimension >= 1, but got 2 heads of dimension 0}}
  %o = pe.attention %q, %q, %v : tensor<1x2x1x0xf32>, tensor<1x2x1x0xf32>, tensor<1x2x1x16xf32> -> tensor<1x2x1x16xf32>
  return
}

// -----

// attention: window >= 1.
func.func @attention_zero_window(%q: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects window >= 1 (the number of visible positions), but got 0}}
  %o = pe.attention %q, %q, %q causal window(0) : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention (verifyRotaryDimFits): rotary_dim <= the head dimension.
func.func @attention_rotary_dim_too_large(%q: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects rotary_dim (128) <= head dimension (64)}}
  %o = pe.attention %q, %q, %q causal rope(#pe.rope<rotary_dim = 128>) : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: softcap a normal f32 > 0.
func.func @attention_negative_softcap(%q: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects softcap to be a normal f32 > 0 (the scores are capped in f32), but got -5}}
  %o = pe.attention %q, %q, %q causal softcap(-5.0) : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: softcap within f32.
func.func @attention_huge_softcap(%q: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects softcap to be a normal f32 > 0 (the scores are capped in f32), but got 1.000000e+39}}
  %o = pe.attention %q, %q, %q softcap(1.0e39) : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: alibi max_bias > 0.
func.func @attention_zero_alibi(%q: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{'pe.attention' op expects alibi max_bias to be a finite number > 0, but got 0}}
  %o = pe.attention %q, %q, %q causal alibi(0.0) : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention (ODS): an i32 query is not an activation type.
func.func @attention_i32_query(%q: tensor<1x8x16x64xi32>, %k: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x8x16x64xi32>'}}
  %o = pe.attention %q, %k, %k : tensor<1x8x16x64xi32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention (ODS): f64 key/value tensors are rejected.
func.func @attention_f64_key(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x64xf64>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x8x16x64xf64>'}}
  %o = pe.attention %q, %k, %k : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf64>, tensor<1x8x16x64xf64> -> tensor<1x8x16x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// #pe.rope
//===----------------------------------------------------------------------===//

// #pe.rope: theta > 1.
func.func @rope_attr_theta_one() {
  // expected-error @+1 {{'#pe.rope' expects theta > 1 (frequencies are theta^(-2i/r)), but got 1.000000e+00}}
  %f = pe.rope_frequencies #pe.rope<theta = 1.0, rotary_dim = 64> -> tensor<32xf32>
  return
}

// -----

// #pe.rope: theta > 1 (negative; written as an integer literal).
func.func @rope_attr_theta_negative(%x: tensor<2x8x16x64xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{'#pe.rope' expects theta > 1 (frequencies are theta^(-2i/r)), but got -1.000000e+04}}
  %y = pe.rope #pe.rope<theta = -10000, rotary_dim = 64> %x, %p : tensor<2x8x16x64xf32>, tensor<16xi32>
  return
}

// -----

// #pe.rope: rotary_dim is even.
func.func @rope_attr_odd_rotary_dim() {
  // expected-error @+1 {{'#pe.rope' expects rotary_dim to be even and >= 2 (channels are rotated in pairs), but got 63}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 63> -> tensor<31xf32>
  return
}

// -----

// #pe.rope: rotary_dim >= 2.
func.func @rope_attr_zero_rotary_dim(%p: tensor<16xi32>) {
  // expected-error @+1 {{'#pe.rope' expects rotary_dim to be even and >= 2 (channels are rotated in pairs), but got 0}}
  %c, %s = pe.rope_tables #pe.rope<rotary_dim = 0> %p : tensor<16xi32> -> tensor<16x0xf32>
  return
}

// -----

// #pe.rope: rotary_dim >= 2 (negative even).
func.func @rope_attr_negative_rotary_dim(%q: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{'#pe.rope' expects rotary_dim to be even and >= 2 (channels are rotated in pairs), but got -2}}
  %o = pe.attention %q, %q, %q rope(#pe.rope<rotary_dim = -2>) : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// #pe.rope (parse): the style is half or interleaved.
func.func @rope_attr_unknown_style() {
  // expected-error @+2 {{expected one of [half, interleaved] for which channels form a rotated pair, got: diagonal}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'style'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, style = diagonal> -> tensor<32xf32>
  return
}

// -----

// #pe.rope (parse): scaling names a scaling attribute of the dialect.
func.func @rope_attr_unknown_scaling() {
  // expected-error @+2 {{unknown attribute `quadratic` in dialect `pe`}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.quadratic<factor = 2.0>> -> tensor<32xf32>
  return
}

// -----

// #pe.rope (parse): scaling is a RopeScalingAttrInterface (#pe.rope is not one).
func.func @rope_attr_scaling_not_a_scaling() {
  // expected-error @+2 {{invalid kind of attribute specified}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling' which is to be a `::mlir::pe::RopeScalingAttrInterface`}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.rope<rotary_dim = 4>> -> tensor<32xf32>
  return
}

// -----

// #pe.rope (parse): rotary_dim is required.
func.func @rope_attr_missing_rotary_dim() {
  // expected-error @+1 {{struct is missing required parameter: rotary_dim}}
  %f = pe.rope_frequencies #pe.rope<theta = 10000.0> -> tensor<32xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// #pe.linear
//===----------------------------------------------------------------------===//

// #pe.linear: factor > 0.
func.func @linear_zero_factor() {
  // expected-error @+2 {{'#pe.linear' expects factor to be a finite number > 0, but got 0.000000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.linear<factor = 0.0>> -> tensor<32xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// #pe.ntk
//===----------------------------------------------------------------------===//

// #pe.ntk: factor > 0.
func.func @ntk_negative_factor() {
  // expected-error @+2 {{'#pe.ntk' expects factor to be a finite number > 0, but got -2.000000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.ntk<factor = -2>> -> tensor<32xf32>
  return
}

// -----

// #pe.ntk (verifyForRotaryDim): rotary_dim > 2.
func.func @ntk_rotary_dim_two() {
  // expected-error @+1 {{'#pe.ntk' needs rotary_dim > 2 (its base exponent is r/(r-2)), but rotary_dim is 2}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 2, scaling = #pe.ntk<factor = 2.0>> -> tensor<1xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// #pe.dynamic_ntk
//===----------------------------------------------------------------------===//

// #pe.dynamic_ntk: factor > 0.
func.func @dynamic_ntk_zero_factor() {
  // expected-error @+2 {{'#pe.dynamic_ntk' expects factor to be a finite number > 0, but got 0.000000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.dynamic_ntk<factor = 0.0, max_position_embeddings = 4096>> -> tensor<32xf32>
  return
}

// -----

// #pe.dynamic_ntk: max_position_embeddings > 0.
func.func @dynamic_ntk_zero_max_positions() {
  // expected-error @+2 {{'#pe.dynamic_ntk' expects max_position_embeddings > 0, but got 0}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 0>> -> tensor<32xf32>
  return
}

// -----

// #pe.dynamic_ntk (verifyForRotaryDim): rotary_dim > 2.
func.func @dynamic_ntk_rotary_dim_two() {
  // expected-error @+1 {{'#pe.dynamic_ntk' needs rotary_dim > 2 (its base exponent is r/(r-2)), but rotary_dim is 2}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 2, scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 4096>> -> tensor<1xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// #pe.yarn
//===----------------------------------------------------------------------===//

// #pe.yarn: factor > 0.
func.func @yarn_zero_factor() {
  // expected-error @+2 {{'#pe.yarn' expects factor to be a finite number > 0, but got 0.000000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.yarn<factor = 0.0, original_max_position_embeddings = 4096>> -> tensor<32xf32>
  return
}

// -----

// #pe.yarn: original_max_position_embeddings > 0.
func.func @yarn_negative_original_max_positions() {
  // expected-error @+2 {{'#pe.yarn' expects original_max_position_embeddings > 0, but got -1}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = -1>> -> tensor<32xf32>
  return
}

// -----

// #pe.yarn: beta_slow > 0.
func.func @yarn_zero_beta_slow() {
  // expected-error @+2 {{'#pe.yarn' expects beta_slow to be a finite number > 0, but got 0.000000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 4096, beta_slow = 0.0>> -> tensor<32xf32>
  return
}

// -----

// #pe.yarn: extrapolation_factor in [0, 1].
func.func @yarn_extrapolation_factor() {
  // expected-error @+2 {{'#pe.yarn' expects extrapolation_factor in [0, 1] (the share of the extrapolation kept), but got 1.500000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 4096, extrapolation_factor = 1.5>> -> tensor<32xf32>
  return
}

// -----

// #pe.rope: the rotated block is inside the head.
func.func @rope_offset_past_head(%x: tensor<1x2x4x64xf32>, %p: tensor<4xi64>) {
  // expected-error @+1 {{'pe.rope' op expects rotary_offset + rotary_dim (48 + 32) <= head dimension (64)}}
  %y = pe.rope #pe.rope<rotary_dim = 32, rotary_offset = 48> %x, %p : tensor<1x2x4x64xf32>, tensor<4xi64>
  return
}

// -----

// #pe.rope: a non-negative offset.
func.func @rope_negative_offset() {
  // expected-error @+1 {{'#pe.rope' expects rotary_offset in [0, 2^40] (the first rotated channel), but got -2}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 8, rotary_offset = -2> -> tensor<4xf32>
  return
}

// -----

// #pe.rope: one frequency factor per pair.
func.func @rope_freq_factors_count() {
  // expected-error @+1 {{'#pe.rope' expects rotary_dim/2 = 4 freq_factors (one per pair), but got 3}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 8, freq_factors = [1.0, 2.0, 3.0]> -> tensor<4xf32>
  return
}

// -----

// #pe.rope: frequency factors divide the frequencies.
func.func @rope_freq_factors_zero() {
  // expected-error @+1 {{'#pe.rope' expects freq_factors to be finite numbers > 0 (they divide the frequencies), but entry 2 is 0}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 8, freq_factors = [1.0, 2.0, 0.0, 4.0]> -> tensor<4xf32>
  return
}

// -----

// #pe.rope: a magnitude > 0.
func.func @rope_magnitude() {
  // expected-error @+1 {{'#pe.rope' expects magnitude to be a finite number > 0, but got -1}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 8, magnitude = -1.0> -> tensor<4xf32>
  return
}

// -----

// #pe.yarn: beta_fast > beta_slow.
func.func @yarn_beta_fast_not_above_beta_slow() {
  // expected-error @+2 {{'#pe.yarn' expects beta_fast > beta_slow (the ramp runs from the beta_fast to the beta_slow correction dimension), but got beta_fast = 1.000000e+00, beta_slow = 1.000000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 4096, beta_fast = 1.0, beta_slow = 1.0>> -> tensor<32xf32>
  return
}

// -----

// #pe.yarn: mscale >= 0.
func.func @yarn_negative_mscale() {
  // expected-error @+2 {{'#pe.yarn' expects mscale to be a finite number >= 0, but got -1.000000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 4096, mscale = -1>> -> tensor<32xf32>
  return
}

// -----

// #pe.yarn: mscale_all_dim >= 0.
func.func @yarn_negative_mscale_all_dim() {
  // expected-error @+2 {{'#pe.yarn' expects mscale_all_dim to be a finite number >= 0, but got -1.000000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 4096, mscale = 1.0, mscale_all_dim = -1>> -> tensor<32xf32>
  return
}

// -----

// #pe.yarn: attention_factor > 0.
func.func @yarn_zero_attention_factor() {
  // expected-error @+2 {{'#pe.yarn' expects attention_factor to be a finite number > 0, but got 0.000000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 4096, attention_factor = 0.0>> -> tensor<32xf32>
  return
}

// -----

// #pe.yarn (parse): truncate is true or false.
func.func @yarn_truncate_maybe() {
  // expected-error @+3 {{expected 'true' or 'false'}}
  // expected-error @+2 {{failed to parse PE_YarnScalingAttr parameter 'truncate' which is to be a `bool`}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 4096, truncate = maybe>> -> tensor<32xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// #pe.llama3
//===----------------------------------------------------------------------===//

// #pe.llama3: factor > 0.
func.func @llama3_zero_factor() {
  // expected-error @+2 {{'#pe.llama3' expects factor to be a finite number > 0, but got 0.000000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.llama3<factor = 0.0, original_max_position_embeddings = 8192>> -> tensor<32xf32>
  return
}

// -----

// #pe.llama3: low_freq_factor > 0.
func.func @llama3_zero_low_freq_factor() {
  // expected-error @+2 {{'#pe.llama3' expects low_freq_factor to be a finite number > 0, but got 0.000000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.llama3<factor = 8.0, low_freq_factor = 0.0, original_max_position_embeddings = 8192>> -> tensor<32xf32>
  return
}

// -----

// #pe.llama3: original_max_position_embeddings > 0.
func.func @llama3_zero_original_max_positions() {
  // expected-error @+2 {{'#pe.llama3' expects original_max_position_embeddings > 0, but got 0}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 0>> -> tensor<32xf32>
  return
}

// -----

// #pe.llama3: high_freq_factor > low_freq_factor.
func.func @llama3_high_freq_not_above_low_freq() {
  // expected-error @+2 {{'#pe.llama3' expects high_freq_factor >= low_freq_factor (the blend band lies between their wavelengths), but got high_freq_factor = 2.000000e+00, low_freq_factor = 4.000000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 64, scaling = #pe.llama3<factor = 8.0, low_freq_factor = 4.0, high_freq_factor = 2.0, original_max_position_embeddings = 8192>> -> tensor<32xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// #pe.longrope
//===----------------------------------------------------------------------===//

// #pe.longrope: every short_factor entry > 0.
func.func @longrope_bad_short_factor() {
  // expected-error @+2 {{'#pe.longrope' expects every short_factor entry to be a finite number > 0, but entry 1 is 0.000000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.longrope<short_factor = [1.0, 0.0], long_factor = [1.0, 2.0], original_max_position_embeddings = 4096>> -> tensor<2xf32>
  return
}

// -----

// #pe.longrope: every long_factor entry > 0.
func.func @longrope_bad_long_factor() {
  // expected-error @+2 {{'#pe.longrope' expects every long_factor entry to be a finite number > 0, but entry 0 is -1.000000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.longrope<short_factor = [1.0, 1.0], long_factor = [-1, 2.0], original_max_position_embeddings = 4096>> -> tensor<2xf32>
  return
}

// -----

// #pe.longrope: original_max_position_embeddings > 0.
func.func @longrope_zero_original_max_positions() {
  // expected-error @+2 {{'#pe.longrope' expects original_max_position_embeddings > 0, but got 0}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.longrope<short_factor = [1.0, 1.0], long_factor = [1.0, 2.0], original_max_position_embeddings = 0>> -> tensor<2xf32>
  return
}

// -----

// #pe.longrope: factor > 0.
func.func @longrope_zero_factor() {
  // expected-error @+2 {{'#pe.longrope' expects factor to be a finite number > 0, but got 0.000000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.longrope<short_factor = [1.0, 1.0], long_factor = [1.0, 2.0], original_max_position_embeddings = 4096, factor = 0.0>> -> tensor<2xf32>
  return
}

// -----

// #pe.longrope: factor > 1 needs original_max_position_embeddings >= 2 (ln L0 > 0).
func.func @longrope_original_max_positions_one() {
  // expected-error @+2 {{'#pe.longrope' derives its magnitude from ln(original_max_position_embeddings), which needs original_max_position_embeddings >= 2}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.longrope<short_factor = [1.0, 1.0], long_factor = [1.0, 2.0], original_max_position_embeddings = 1, factor = 4.0>> -> tensor<2xf32>
  return
}

// -----

// #pe.longrope: attention_factor > 0.
func.func @longrope_negative_attention_factor() {
  // expected-error @+2 {{'#pe.longrope' expects attention_factor to be a finite number > 0, but got -1.000000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.longrope<short_factor = [1.0, 1.0], long_factor = [1.0, 2.0], original_max_position_embeddings = 4096, attention_factor = -1>> -> tensor<2xf32>
  return
}

// -----

// #pe.longrope (verifyForRotaryDim): short_factor has rotary_dim/2 entries.
func.func @longrope_short_factor_length() {
  // expected-error @+1 {{'#pe.longrope' expects short_factor to have rotary_dim/2 = 4 entries, but it has 2}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 8, scaling = #pe.longrope<short_factor = [1.0, 1.0], long_factor = [1.0, 2.0, 3.0, 4.0], original_max_position_embeddings = 4096>> -> tensor<4xf32>
  return
}

// -----

// #pe.longrope (verifyForRotaryDim): long_factor has rotary_dim/2 entries.
func.func @longrope_long_factor_length(%x: tensor<2x8x16x64xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{'#pe.longrope' expects long_factor to have rotary_dim/2 = 2 entries, but it has 3}}
  %y = pe.rope #pe.rope<rotary_dim = 4, scaling = #pe.longrope<short_factor = [1.0, 1.0], long_factor = [1.0, 2.0, 3.0], original_max_position_embeddings = 4096>> %x, %p : tensor<2x8x16x64xf32>, tensor<16xi32>
  return
}

// -----

// #pe.longrope (parse): select is dynamic, short or long.
func.func @longrope_unknown_select() {
  // expected-error @+3 {{expected one of [dynamic, short, long] for which LongRoPE factor list is used, got: medium}}
  // expected-error @+2 {{failed to parse PE_LongRopeScalingAttr parameter 'select'}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.longrope<short_factor = [1.0, 1.0], long_factor = [1.0, 2.0], original_max_position_embeddings = 4096, select = medium>> -> tensor<2xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Enum keywords of ops (parse)
//===----------------------------------------------------------------------===//

// rope (parse): layout is bhsd or bshd.
func.func @rope_unknown_layout(%x: tensor<2x8x16x64xf32>, %p: tensor<16xi32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'layout' [bhsd, bshd]}}
  %y = pe.rope #pe.rope<rotary_dim = 64> %x, %p layout(bsdh) : tensor<2x8x16x64xf32>, tensor<16xi32>
  return
}

// -----

// sinusoidal (parse): spacing is paper or fairseq.
func.func @sinusoidal_unknown_spacing(%p: tensor<16xi64>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'spacing' [paper, fairseq]}}
  %e = pe.sinusoidal %p spacing(log) : tensor<16xi64> -> tensor<16x64xf32>
  return
}

// -----

// Attribute numbers may be negative floats; the verifier, not the parser,
// rejects them.
func.func @ntk_negative_float_factor() {
  // expected-error @+2 {{'#pe.ntk' expects factor to be a finite number > 0, but got -2.500000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 8, scaling = #pe.ntk<factor = -2.5>> -> tensor<4xf32>
  return
}

// -----

// An infinite factor, written as the bit pattern of an f64.
func.func @linear_infinite_factor() {
  // expected-error @+2 {{'#pe.linear' expects factor to be a finite number > 0, but got INF}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 8, scaling = #pe.linear<factor = 0x7FF0000000000000 : f64>> -> tensor<4xf32>
  return
}

// -----

// A parameter that is not a number.
func.func @theta_not_a_number() {
  // expected-error @+2 {{expected a number, but got "ten thousand"}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'theta'}}
  %f = pe.rope_frequencies #pe.rope<theta = "ten thousand", rotary_dim = 8> -> tensor<4xf32>
  return
}

// -----

// #pe.proportional: the divisor must be positive.
func.func @proportional_factor() {
  // expected-error @+2 {{'#pe.proportional' expects factor to be a finite number > 0, but got 0.000000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 8, scaling = #pe.proportional<factor = 0.0>> -> tensor<4xf32>
  return
}

// -----

// #pe.proportional: the rotated share is a fraction.
func.func @proportional_share() {
  // expected-error @+2 {{'#pe.proportional' expects partial_rotary_factor in [0, 1], but got 1.500000e+00}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 8, scaling = #pe.proportional<partial_rotary_factor = 1.5>> -> tensor<4xf32>
  return
}

// -----

// Absurd shapes: a tensor whose byte size overflows 64 bits.
func.func @overflowing_shape(%x: tensor<4294967296x4294967296x1x64xf32>, %p: tensor<1xi32>) {
  // expected-error @+1 {{'pe.rope' op operand #0 of type 'tensor<4294967296x4294967296x1x64xf32>' is too large: its size in bytes overflows 64 bits}}
  %y = pe.rope #pe.rope<rotary_dim = 64> %x, %p : tensor<4294967296x4294967296x1x64xf32>, tensor<1xi32>
  return
}

// -----

// The result's shape is checked as well.
func.func @overflowing_result() {
  // expected-error @+1 {{'pe.alibi_slopes' op result #0 of type 'tensor<2305843009213693952xf32>' is too large: its size in bytes overflows 64 bits}}
  %s = pe.alibi_slopes : tensor<2305843009213693952xf32>
  return
}

// -----

// pe.rope tables: both or neither.
func.func @rope_one_table(%x: tensor<1x2x4x8xf32>, %p: tensor<4xi32>, %c: tensor<4x4xf32>) {
  // expected-error @+1 {{'pe.rope' op expects both tables (cos and sin) or neither}}
  %y = "pe.rope"(%x, %p, %c) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>, rope = #pe.rope<rotary_dim = 8>}> : (tensor<1x2x4x8xf32>, tensor<4xi32>, tensor<4x4xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

// pe.rope tables: cos and sin of one type.
func.func @rope_table_types(%x: tensor<1x2x4x8xf32>, %p: tensor<4xi32>, %c: tensor<4x4xf32>, %s: tensor<?x4xf32>) {
  // expected-error @+1 {{'pe.rope' op expects cos and sin tables of one type, but got 'tensor<4x4xf32>' and 'tensor<?x4xf32>'}}
  %y = pe.rope #pe.rope<rotary_dim = 8> %x, %p tables(%c, %s : tensor<4x4xf32>, tensor<?x4xf32>) : tensor<1x2x4x8xf32>, tensor<4xi32>
  return
}

// -----

// pe.rope tables: one row of rotary_dim/2 entries per position.
func.func @rope_table_shape(%x: tensor<1x2x4x8xf32>, %p: tensor<4xi32>, %c: tensor<4x2xf32>) {
  // expected-error @+1 {{'pe.rope' op expects the last dimension of the tables to be rotary_dim/2 = 4, but got 2}}
  %y = pe.rope #pe.rope<rotary_dim = 8> %x, %p tables(%c, %c : tensor<4x2xf32>, tensor<4x2xf32>) : tensor<1x2x4x8xf32>, tensor<4xi32>
  return
}

// -----

// pe.rope tables are f32.
func.func @rope_table_f16(%x: tensor<1x2x4x8xf32>, %p: tensor<4xi32>, %c: tensor<4x4xf16>) {
  // expected-error @+1 {{'pe.rope' op operand #2 must be ranked tensor of 32-bit float values, but got 'tensor<4x4xf16>'}}
  %y = pe.rope #pe.rope<rotary_dim = 8> %x, %p tables(%c, %c : tensor<4x4xf16>, tensor<4x4xf16>) : tensor<1x2x4x8xf32>, tensor<4xi32>
  return
}

// -----

// pe.attention: batch sizes agree even when B is dynamic.
func.func @attention_positions_batches(%q: tensor<?x2x4x16xf32>, %qp: tensor<2x4xi32>, %kp: tensor<3x4xi32>) {
  // expected-error @+1 {{'pe.attention' op expects one batch size, but q_positions has 2 and k_positions has 3}}
  %o = pe.attention %q, %q, %q q_positions(%qp : tensor<2x4xi32>) k_positions(%kp : tensor<3x4xi32>) : tensor<?x2x4x16xf32>, tensor<?x2x4x16xf32>, tensor<?x2x4x16xf32> -> tensor<?x2x4x16xf32>
  return
}

// -----

// pe.alibi_bias: q and k positions of one batch size.
func.func @alibi_positions_batches(%s: tensor<4xf32>, %qp: tensor<2x8xi32>, %kp: tensor<3x8xi32>) {
  // expected-error @+1 {{'pe.alibi_bias' op expects q_positions and k_positions of one batch size, but got 2 and 3}}
  %b = pe.alibi_bias causal %s, %qp, %kp : tensor<4xf32>, tensor<2x8xi32>, tensor<3x8xi32> -> tensor<?x4x8x8xf32>
  return
}

// -----

// #pe.rope: derived frequencies are finite. NTK with factor 1e-300: theta
// s^(r/(r-2)) underflows to 0, so theta'^(-2i/r) = inf (inf * position 0 =
// NaN).
func.func @ntk_frequency_overflow() {
  // expected-error @+1 {{'#pe.rope' derives inverse frequency 1 = inf from its parameters, which is not a finite number >= 0}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.ntk<factor = 1.0e-300>> -> tensor<2xf32>
  return
}

// -----

// #pe.rope: derived frequencies are at most 1e30, so that p * f stays finite
// for every i64 position. Llama 3 with original_max_position_embeddings =
// INT64_MAX and a tiny factor: the lowest frequency divided by 1e-300.
func.func @llama3_frequency_too_large() {
  // expected-error @+1 {{'#pe.rope' derives inverse frequency 3 = 1.778279e+281 from theta = 1.000000e+25 and its scaling's factor = 1.000000e-300, above 1.000000e+30 (angles of large positions would overflow)}}
  %f = pe.rope_frequencies #pe.rope<theta = 1.0e25, rotary_dim = 8, scaling = #pe.llama3<factor = 1.0e-300, original_max_position_embeddings = 9223372036854775807>> -> tensor<4xf32>
  return
}

// -----

// #pe.rope: derived frequencies are finite (a subnormal linear factor divides
// to inf).
func.func @linear_frequency_overflow() {
  // expected-error @+1 {{'#pe.rope' derives inverse frequency 0 = inf from its parameters, which is not a finite number >= 0}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.linear<factor = 1.0e-310>> -> tensor<2xf32>
  return
}

// -----

// #pe.rope: the attention factor is a finite f32 (the tables multiply by it
// in f32).
func.func @yarn_attention_factor_overflow() {
  // expected-error @+1 {{'#pe.rope' derives the attention factor 1.000000e+300, which is not a finite f32 > 0}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.yarn<factor = 4.0, original_max_position_embeddings = 64, attention_factor = 1.0e300>> -> tensor<2xf32>
  return
}

// -----

// Numbers: an integer literal must be exactly a double (an i128 is not
// truncated to 64 bits).
func.func @inexact_integer_factor() {
  // expected-error @+3 {{the integer 170141183460469231731687303715884105727 : i128 is not exactly a double: write it as a float}}
  // expected-error @+2 {{failed to parse PE_LinearScalingAttr parameter 'factor'}}
  // expected-error @+1 {{failed to parse PE_RopeAttr parameter 'scaling'}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 4, scaling = #pe.linear<factor = 170141183460469231731687303715884105727 : i128>> -> tensor<2xf32>
  return
}

//===----------------------------------------------------------------------===//
// pe.append_kv
//===----------------------------------------------------------------------===//

// -----

// append_kv: a dense cache takes [B, Hkv, S, D] rows.
func.func @append_kv_rows_rank(%k: tensor<4x8x128xf32>, %c: tensor<1x8x64x128xf32>, %s: tensor<4xi64>) {
  // expected-error @+1 {{'pe.append_kv' op expects the new key rows of rank 4 ([B, Hkv, S, D]), but got rank 3}}
  %a, %b = pe.append_kv %k, %k into %c, %c slots(%s : tensor<4xi64>) : tensor<4x8x128xf32>, tensor<4x8x128xf32> -> tensor<1x8x64x128xf32>, tensor<1x8x64x128xf32>
  return
}

// -----

// append_kv: the new rows have the cache's element type.
func.func @append_kv_element(%k: tensor<4x8x128xf32>, %c: tensor<9x16x8x128xbf16>, %s: tensor<4xi64>) {
  // expected-error @+1 {{expects the new key rows to have the cache's element type ('bf16'), but got 'f32'}}
  %a, %b = pe.append_kv %k, %k into %c, %c slots(%s : tensor<4xi64>) layout(nhd) : tensor<4x8x128xf32>, tensor<4x8x128xf32> -> tensor<9x16x8x128xbf16>, tensor<9x16x8x128xbf16>
  return
}

// -----

// append_kv: the cache holds the rows' heads and channels (hnd: [P, H, ps, D]).
func.func @append_kv_heads(%k: tensor<4x8x128xf32>, %c: tensor<9x16x8x128xf32>, %s: tensor<4xi64>) {
  // expected-error @+1 {{expects the key cache to hold 8 heads of 128 channels (dimensions 1 and 3), but got 'tensor<9x16x8x128xf32>'}}
  %a, %b = pe.append_kv %k, %k into %c, %c slots(%s : tensor<4xi64>) layout(hnd) : tensor<4x8x128xf32>, tensor<4x8x128xf32> -> tensor<9x16x8x128xf32>, tensor<9x16x8x128xf32>
  return
}

// -----

// append_kv: the page size is static.
func.func @append_kv_page_size(%k: tensor<4x8x128xf32>, %c: tensor<9x?x8x128xf32>, %s: tensor<4xi64>) {
  // expected-error @+1 {{expects a static page size}}
  %a, %b = pe.append_kv %k, %k into %c, %c slots(%s : tensor<4xi64>) layout(nhd) : tensor<4x8x128xf32>, tensor<4x8x128xf32> -> tensor<9x?x8x128xf32>, tensor<9x?x8x128xf32>
  return
}

// -----

// append_kv: one slot per new token.
func.func @append_kv_slots(%k: tensor<4x8x128xf32>, %c: tensor<9x16x8x128xf32>, %s: tensor<3xi64>) {
  // expected-error @+1 {{expects slots to have T = 4 entries, but got 3}}
  %a, %b = pe.append_kv %k, %k into %c, %c slots(%s : tensor<3xi64>) layout(nhd) : tensor<4x8x128xf32>, tensor<4x8x128xf32> -> tensor<9x16x8x128xf32>, tensor<9x16x8x128xf32>
  return
}

// -----

// append_kv: as many values as keys.
func.func @append_kv_values(%k: tensor<4x8x128xf32>, %v: tensor<5x8x128xf32>, %c: tensor<9x16x8x128xf32>, %s: tensor<4xi64>) {
  // expected-error @+1 {{expects as many new values as new keys}}
  %a, %b = pe.append_kv %k, %v into %c, %c slots(%s : tensor<4xi64>) layout(nhd) : tensor<4x8x128xf32>, tensor<5x8x128xf32> -> tensor<9x16x8x128xf32>, tensor<9x16x8x128xf32>
  return
}

// -----

// append_kv: positions come with rope, and only with it.
func.func @append_kv_rope_without_positions(%k: tensor<4x8x128xf32>, %c: tensor<9x16x8x128xf32>, %s: tensor<4xi64>) {
  // expected-error @+1 {{expects positions with rope}}
  %a, %b = pe.append_kv %k, %k into %c, %c slots(%s : tensor<4xi64>) layout(nhd) rope(#pe.rope<rotary_dim = 128>) : tensor<4x8x128xf32>, tensor<4x8x128xf32> -> tensor<9x16x8x128xf32>, tensor<9x16x8x128xf32>
  return
}

// -----

func.func @append_kv_positions_without_rope(%k: tensor<4x8x128xf32>, %c: tensor<9x16x8x128xf32>, %s: tensor<4xi64>) {
  // expected-error @+1 {{expects positions only with rope}}
  %a, %b = pe.append_kv %k, %k into %c, %c slots(%s : tensor<4xi64>) positions(%s : tensor<4xi64>) layout(nhd) : tensor<4x8x128xf32>, tensor<4x8x128xf32> -> tensor<9x16x8x128xf32>, tensor<9x16x8x128xf32>
  return
}

// -----

// append_kv: the rotation fits the head.
func.func @append_kv_rotary_dim(%k: tensor<4x8x64xf32>, %c: tensor<9x16x8x64xf32>, %s: tensor<4xi64>) {
  // expected-error @+1 {{expects rotary_dim (128) <= head dimension (64)}}
  %a, %b = pe.append_kv %k, %k into %c, %c slots(%s : tensor<4xi64>) positions(%s : tensor<4xi64>) layout(nhd) rope(#pe.rope<rotary_dim = 128>) : tensor<4x8x64xf32>, tensor<4x8x64xf32> -> tensor<9x16x8x64xf32>, tensor<9x16x8x64xf32>
  return
}

// -----

// append_kv: constant slots are in [-1, P * page_size).
func.func @append_kv_constant_slot(%k: tensor<2x8x64xf32>, %c: tensor<2x4x8x64xf32>) {
  %s = arith.constant dense<[-1, 8]> : tensor<2xi64>
  // expected-error @+1 {{slot 8 (entry 1) is out of range for a cache of 8 slots}}
  %a, %b = pe.append_kv %k, %k into %c, %c slots(%s : tensor<2xi64>) layout(nhd) : tensor<2x8x64xf32>, tensor<2x8x64xf32> -> tensor<2x4x8x64xf32>, tensor<2x4x8x64xf32>
  return
}

// -----

// append_kv: the dense cache's batch is the rows' batch.
func.func @append_kv_batch(%k: tensor<2x8x1x64xf32>, %c: tensor<3x8x32x64xf32>, %s: tensor<1xi64>) {
  // expected-error @+1 {{expects the key cache's batch (3) to match the new rows' (2)}}
  %a, %b = pe.append_kv %k, %k into %c, %c slots(%s : tensor<1xi64>) : tensor<2x8x1x64xf32>, tensor<2x8x1x64xf32> -> tensor<3x8x32x64xf32>, tensor<3x8x32x64xf32>
  return
}

// -----

// pe.in_place marks a tensor argument.
// expected-error @+1 {{pe.in_place marks a ranked tensor argument of a function}}
func.func @in_place_scalar(%n: index {pe.in_place}) {
  return
}

// -----

//===----------------------------------------------------------------------===//
// pe.paged_attention
//===----------------------------------------------------------------------===//

// paged_attention: the cache is paged.
func.func @paged_dense(%q: tensor<?x8x64xf32>, %c: tensor<2x8x64x64xf32>, %bt: tensor<2x4xi32>, %l: tensor<2xi32>, %cu: tensor<3xi32>) {
  // expected-error @+1 {{reads a paged cache: expects layout(nhd) or layout(hnd), but got layout(dense)}}
  %o = pe.paged_attention %q, %c, %c block_table(%bt : tensor<2x4xi32>) kv_lens(%l : tensor<2xi32>) cu_seqlens(%cu : tensor<3xi32>) layout(dense) : tensor<?x8x64xf32>, tensor<2x8x64x64xf32>, tensor<2x8x64x64xf32> -> tensor<?x8x64xf32>
  return
}

// -----

// paged_attention: Hq is a multiple of Hkv.
func.func @paged_heads(%q: tensor<?x6x64xf32>, %c: tensor<?x16x4x64xf32>, %bt: tensor<2x4xi32>, %l: tensor<2xi32>, %cu: tensor<3xi32>) {
  // expected-error @+1 {{expects the query heads (6) to be a multiple of the KV heads (4)}}
  %o = pe.paged_attention %q, %c, %c block_table(%bt : tensor<2x4xi32>) kv_lens(%l : tensor<2xi32>) cu_seqlens(%cu : tensor<3xi32>) : tensor<?x6x64xf32>, tensor<?x16x4x64xf32>, tensor<?x16x4x64xf32> -> tensor<?x6x64xf32>
  return
}

// -----

// paged_attention: keys have the query's channels.
func.func @paged_dim(%q: tensor<?x8x64xf32>, %c: tensor<?x16x4x32xf32>, %bt: tensor<2x4xi32>, %l: tensor<2xi32>, %cu: tensor<3xi32>) {
  // expected-error @+1 {{expects keys of the query's 64 channels, but got 32}}
  %o = pe.paged_attention %q, %c, %c block_table(%bt : tensor<2x4xi32>) kv_lens(%l : tensor<2xi32>) cu_seqlens(%cu : tensor<3xi32>) : tensor<?x8x64xf32>, tensor<?x16x4x32xf32>, tensor<?x16x4x32xf32> -> tensor<?x8x32xf32>
  return
}

// -----

// paged_attention: one sink per query head.
func.func @paged_sinks(%q: tensor<?x8x64xf32>, %c: tensor<?x16x4x64xf32>, %bt: tensor<2x4xi32>, %l: tensor<2xi32>, %cu: tensor<3xi32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{expects sinks [Hq] = [8] (one logit per query head), but got 'tensor<4xf32>'}}
  %o = pe.paged_attention %q, %c, %c block_table(%bt : tensor<2x4xi32>) kv_lens(%l : tensor<2xi32>) cu_seqlens(%cu : tensor<3xi32>) sinks(%s : tensor<4xf32>) : tensor<?x8x64xf32>, tensor<?x16x4x64xf32>, tensor<?x16x4x64xf32> -> tensor<?x8x64xf32>
  return
}

// -----

// paged_attention: the result is [T, Hq, Dv].
func.func @paged_result(%q: tensor<?x8x64xf32>, %c: tensor<?x16x4x64xf32>, %v: tensor<?x16x4x32xf32>, %bt: tensor<2x4xi32>, %l: tensor<2xi32>, %cu: tensor<3xi32>) {
  // expected-error @+1 {{expects a result [T, Hq, Dv] = [?, 8, 32], but got 'tensor<?x8x64xf32>'}}
  %o = pe.paged_attention %q, %c, %v block_table(%bt : tensor<2x4xi32>) kv_lens(%l : tensor<2xi32>) cu_seqlens(%cu : tensor<3xi32>) : tensor<?x8x64xf32>, tensor<?x16x4x64xf32>, tensor<?x16x4x32xf32> -> tensor<?x8x64xf32>
  return
}

// -----

// paged_attention: key and value pages agree.
func.func @paged_pages(%q: tensor<?x8x64xf32>, %c: tensor<?x16x4x64xf32>, %v: tensor<?x8x4x64xf32>, %bt: tensor<2x4xi32>, %l: tensor<2xi32>, %cu: tensor<3xi32>) {
  // expected-error @+1 {{expects key and value caches of the same pages and heads}}
  %o = pe.paged_attention %q, %c, %v block_table(%bt : tensor<2x4xi32>) kv_lens(%l : tensor<2xi32>) cu_seqlens(%cu : tensor<3xi32>) : tensor<?x8x64xf32>, tensor<?x16x4x64xf32>, tensor<?x8x4x64xf32> -> tensor<?x8x64xf32>
  return
}

// -----

// paged_attention: cu_seqlens has B + 1 entries.
func.func @paged_cu(%q: tensor<?x8x64xf32>, %c: tensor<?x16x4x64xf32>, %bt: tensor<2x4xi32>, %l: tensor<2xi32>, %cu: tensor<2xi32>) {
  // expected-error @+1 {{expects cu_seqlens to have B + 1 = 3 entries, but got 2}}
  %o = pe.paged_attention %q, %c, %c block_table(%bt : tensor<2x4xi32>) kv_lens(%l : tensor<2xi32>) cu_seqlens(%cu : tensor<2xi32>) : tensor<?x8x64xf32>, tensor<?x16x4x64xf32>, tensor<?x16x4x64xf32> -> tensor<?x8x64xf32>
  return
}

// -----

// paged_attention: kv_lens has B entries.
func.func @paged_lens(%q: tensor<?x8x64xf32>, %c: tensor<?x16x4x64xf32>, %bt: tensor<2x4xi32>, %l: tensor<3xi32>, %cu: tensor<3xi32>) {
  // expected-error @+1 {{expects kv_lens to have B = 2 entries, but got 3}}
  %o = pe.paged_attention %q, %c, %c block_table(%bt : tensor<2x4xi32>) kv_lens(%l : tensor<3xi32>) cu_seqlens(%cu : tensor<3xi32>) : tensor<?x8x64xf32>, tensor<?x16x4x64xf32>, tensor<?x16x4x64xf32> -> tensor<?x8x64xf32>
  return
}

// -----

// paged_attention: the attention parameters are checked as for pe.attention.
func.func @paged_window(%q: tensor<?x8x64xf32>, %c: tensor<?x16x4x64xf32>, %bt: tensor<2x4xi32>, %l: tensor<2xi32>, %cu: tensor<3xi32>) {
  // expected-error @+1 {{expects window >= 1}}
  %o = pe.paged_attention %q, %c, %c block_table(%bt : tensor<2x4xi32>) kv_lens(%l : tensor<2xi32>) cu_seqlens(%cu : tensor<3xi32>) window(0) : tensor<?x8x64xf32>, tensor<?x16x4x64xf32>, tensor<?x16x4x64xf32> -> tensor<?x8x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// pe.gather_pages
//===----------------------------------------------------------------------===//

// gather_pages: the cache is paged.
func.func @gather_dense(%c: tensor<2x8x64x64xf32>, %bt: tensor<2x4xi32>, %b: index, %n: index) {
  // expected-error @+1 {{reads a paged cache: expects layout(nhd) or layout(hnd), but got layout(dense)}}
  %k = pe.gather_pages %c block_table(%bt : tensor<2x4xi32>) sequence(%b) length(%n) layout(dense) : tensor<2x8x64x64xf32> -> tensor<1x8x?x64xf32>
  return
}

// -----

// gather_pages: the result has the cache's heads and channels.
func.func @gather_heads(%c: tensor<?x16x8x64xf32>, %bt: tensor<2x4xi32>, %b: index, %n: index) {
  // expected-error @+1 {{expects a result [1, 8, ?, 64] (the length is a run-time value), but got 'tensor<1x4x?x64xf32>'}}
  %k = pe.gather_pages %c block_table(%bt : tensor<2x4xi32>) sequence(%b) length(%n) : tensor<?x16x8x64xf32> -> tensor<1x4x?x64xf32>
  return
}

// -----

// gather_pages: the length is dynamic in the result type.
func.func @gather_static_length(%c: tensor<?x8x16x64xf32>, %bt: tensor<2x4xi32>, %b: index, %n: index) {
  // expected-error @+1 {{(the length is a run-time value)}}
  %k = pe.gather_pages %c block_table(%bt : tensor<2x4xi32>) sequence(%b) length(%n) layout(hnd) : tensor<?x8x16x64xf32> -> tensor<1x8x32x64xf32>
  return
}

// -----

// gather_pages: the block table is [B, M].
func.func @gather_table(%c: tensor<?x16x8x64xf32>, %bt: tensor<8xi32>, %b: index, %n: index) {
  // expected-error @+1 {{expects rank-4 pages, a rank-4 result [1, Hkv, L, D] and a block table [B, M]}}
  %k = pe.gather_pages %c block_table(%bt : tensor<8xi32>) sequence(%b) length(%n) : tensor<?x16x8x64xf32> -> tensor<1x8x?x64xf32>
  return
}

// -----

// gather_pages: the page size is static.
func.func @gather_page_size(%c: tensor<?x?x8x64xf32>, %bt: tensor<2x4xi32>, %b: index, %n: index) {
  // expected-error @+1 {{expects a static page size}}
  %k = pe.gather_pages %c block_table(%bt : tensor<2x4xi32>) sequence(%b) length(%n) : tensor<?x?x8x64xf32> -> tensor<1x8x?x64xf32>
  return
}

// -----

// attention: one sink per query head.
func.func @attention_sinks_heads(%q: tensor<1x8x16x64xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{expects sinks [Hq] = [8] (one logit per query head), but got 'tensor<2xf32>'}}
  %o = pe.attention %q, %q, %q sinks(%s : tensor<2xf32>) : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: the sinks are static, as the head count is.
func.func @attention_sinks_dynamic(%q: tensor<1x8x16x64xf32>, %s: tensor<?xf32>) {
  // expected-error @+1 {{expects sinks [Hq] = [8] (one logit per query head), but got 'tensor<?xf32>'}}
  %o = pe.attention %q, %q, %q sinks(%s : tensor<?xf32>) : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// Multi-stream RoPE: the sections cover the pairs exactly.
func.func @sections_sum() {
  // expected-error @+1 {{'#pe.rope' expects the sections to sum to rotary_dim/2 = 64 (every pair in one stream), but they sum to 60}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 128, sections = [20, 20, 20]> -> tensor<64xf32>
  return
}

// -----

func.func @sections_exceed() {
  // expected-error @+1 {{'#pe.rope' expects the sections to sum to rotary_dim/2 = 8 (every pair in one stream), but they exceed it}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 16, sections = [8, 8]> -> tensor<8xf32>
  return
}

// -----

func.func @sections_negative() {
  // expected-error @+1 {{'#pe.rope' expects sections in [0, rotary_dim/2] (pairs per position stream), but section 0 is -2}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 16, sections = [-2, 10]> -> tensor<8xf32>
  return
}

// -----

func.func @sections_count() {
  // expected-error @+1 {{'#pe.rope' expects 3 to 4 sections with section_mode = interleaved, but got 2}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 16, sections = [4, 4], section_mode = interleaved> -> tensor<8xf32>
  return
}

// -----

func.func @section_mode_alone() {
  // expected-error @+1 {{'#pe.rope' expects section_mode only with sections}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 16, section_mode = axes> -> tensor<8xf32>
  return
}

// -----

func.func @sections_axes_scaling() {
  // expected-error @+1 {{'#pe.rope' expects no scaling and no freq_factors with section_mode = axes (its frequencies restart in every section)}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 16, scaling = #pe.linear<factor = 2.0>, sections = [4, 4], section_mode = axes> -> tensor<8xf32>
  return
}

// -----

func.func @sections_dynamic_scaling() {
  // expected-error @+1 {{'#pe.rope' expects no sequence-length dependent scaling with sections}}
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 16, scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 64>, sections = [4, 4]> -> tensor<8xf32>
  return
}

// -----

func.func @sections_positions_rank(%x: tensor<1x2x4x16xf32>, %p: tensor<4xi64>) {
  // expected-error @+1 {{'pe.rope' op expects positions of shape [A, S] or [B, A, S] (A = 3 position streams, one per section of the rope), but got rank 1}}
  %y = pe.rope #pe.rope<rotary_dim = 16, sections = [2, 3, 3]> %x, %p : tensor<1x2x4x16xf32>, tensor<4xi64>
  return
}

// -----

func.func @sections_positions_streams(%x: tensor<1x2x4x16xf32>, %p: tensor<?x4xi64>) {
  // expected-error @+1 {{'pe.rope' op expects positions to hold A = 3 position streams (dimension 0, one per section), but got ?}}
  %y = pe.rope #pe.rope<rotary_dim = 16, sections = [2, 3, 3]> %x, %p : tensor<1x2x4x16xf32>, tensor<?x4xi64>
  return
}

// -----

func.func @sections_tables_shape(%p: tensor<3x4xi64>) {
  // expected-error @+1 {{'pe.rope_tables' op expects the tables of rank 2 (the positions' shape plus one dimension), but got rank 3}}
  %c, %s = pe.rope_tables #pe.rope<rotary_dim = 16, sections = [2, 3, 3]> %p : tensor<3x4xi64> -> tensor<3x4x8xf32>
  return
}

// -----

func.func @attention_rope_positions_missing(%q: tensor<1x2x4x16xf32>) {
  // expected-error @+1 {{'pe.attention' op expects rope_positions with a multi-stream rope (sections)}}
  %o = pe.attention %q, %q, %q rope(#pe.rope<rotary_dim = 16, sections = [2, 3, 3]>) : tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x16xf32>
  return
}

// -----

func.func @attention_rope_positions_plain(%q: tensor<1x2x4x16xf32>, %p: tensor<3x4xi64>) {
  // expected-error @+1 {{'pe.attention' op expects rope_positions only with a multi-stream rope (sections)}}
  %o = pe.attention %q, %q, %q rope(#pe.rope<rotary_dim = 16>) rope_positions(%p, %p : tensor<3x4xi64>, tensor<3x4xi64>) : tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x16xf32>
  return
}

// -----

func.func @attention_rope_positions_length(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x6x16xf32>, %qp: tensor<3x4xi64>) {
  // expected-error @+1 {{'pe.attention' op expects the key's rope_positions to have Skv = 6 entries per stream, but got 4}}
  %o = pe.attention %q, %k, %k rope(#pe.rope<rotary_dim = 16, sections = [2, 3, 3]>) rope_positions(%qp, %qp : tensor<3x4xi64>, tensor<3x4xi64>) : tensor<1x2x4x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x4x16xf32>
  return
}

// -----

func.func @attention_rope_positions_batch(%q: tensor<2x2x4x16xf32>, %qp: tensor<3x3x4xi64>) {
  // expected-error @+1 {{'pe.attention' op expects the batch dimension of the query's rope_positions to be 2, but got 3}}
  %o = pe.attention %q, %q, %q rope(#pe.rope<rotary_dim = 16, sections = [2, 3, 3]>) rope_positions(%qp, %qp : tensor<3x3x4xi64>, tensor<3x3x4xi64>) : tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32> -> tensor<2x2x4x16xf32>
  return
}

// -----

// A multi-stream rope: one position per stream and token.
func.func @append_multi_stream_streams(%k: tensor<1x2x4x16xf32>, %c: tensor<1x2x8x16xf32>, %s: tensor<4xi64>, %p: tensor<2x4xi64>) {
  // expected-error @+1 {{'pe.append_kv' op expects positions to hold A = 3 position streams (dimension 0, one per section), but got 2}}
  %nk, %nv = pe.append_kv %k, %k into %c, %c slots(%s : tensor<4xi64>) positions(%p : tensor<2x4xi64>) rope(#pe.rope<rotary_dim = 16, sections = [2, 3, 3]>) : tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @append_multi_stream_paged(%k: tensor<4x2x16xf32>, %c: tensor<3x4x2x16xf32>, %s: tensor<4xi64>, %p: tensor<4xi64>) {
  // expected-error @+1 {{'pe.append_kv' op expects positions of shape [A, T] for a multi-stream rope and a paged cache, but got rank 1}}
  %nk, %nv = pe.append_kv %k, %k into %c, %c slots(%s : tensor<4xi64>) positions(%p : tensor<4xi64>) layout(nhd) rope(#pe.rope<rotary_dim = 16, sections = [2, 3, 3]>) : tensor<4x2x16xf32>, tensor<4x2x16xf32> -> tensor<3x4x2x16xf32>, tensor<3x4x2x16xf32>
  return
}

// -----

func.func @append_multi_stream_tokens(%k: tensor<4x2x16xf32>, %c: tensor<3x4x2x16xf32>, %s: tensor<4xi64>, %p: tensor<3x5xi64>) {
  // expected-error @+1 {{'pe.append_kv' op expects positions to have T = 4 entries per stream, but got 5}}
  %nk, %nv = pe.append_kv %k, %k into %c, %c slots(%s : tensor<4xi64>) positions(%p : tensor<3x5xi64>) layout(nhd) rope(#pe.rope<rotary_dim = 16, sections = [2, 3, 3]>) : tensor<4x2x16xf32>, tensor<4x2x16xf32> -> tensor<3x4x2x16xf32>, tensor<3x4x2x16xf32>
  return
}

// -----

func.func @paged_multi_stream(%q: tensor<?x8x64xf32>, %c: tensor<?x16x2x64xf32>, %bt: tensor<2x4xi32>, %l: tensor<2xi32>, %cu: tensor<3xi32>) {
  // expected-error @+1 {{'pe.paged_attention' op expects rope_positions with a multi-stream rope (sections)}}
  %o = pe.paged_attention %q, %c, %c block_table(%bt : tensor<2x4xi32>) kv_lens(%l : tensor<2xi32>) cu_seqlens(%cu : tensor<3xi32>) rope(#pe.rope<rotary_dim = 64, sections = [8, 12, 12]>) : tensor<?x8x64xf32>, tensor<?x16x2x64xf32>, tensor<?x16x2x64xf32> -> tensor<?x8x64xf32>
  return
}

// -----

func.func @paged_rope_positions_without_streams(%q: tensor<?x8x64xf32>, %c: tensor<?x16x2x64xf32>, %bt: tensor<2x4xi32>, %l: tensor<2xi32>, %cu: tensor<3xi32>, %p: tensor<3x?xi64>) {
  // expected-error @+1 {{'pe.paged_attention' op expects rope_positions only with a multi-stream rope (sections)}}
  %o = pe.paged_attention %q, %c, %c block_table(%bt : tensor<2x4xi32>) kv_lens(%l : tensor<2xi32>) cu_seqlens(%cu : tensor<3xi32>) rope_positions(%p : tensor<3x?xi64>) rope(#pe.rope<rotary_dim = 64>) : tensor<?x8x64xf32>, tensor<?x16x2x64xf32>, tensor<?x16x2x64xf32> -> tensor<?x8x64xf32>
  return
}

// -----

func.func @paged_rope_streams(%q: tensor<5x8x64xf32>, %c: tensor<?x16x2x64xf32>, %bt: tensor<2x4xi32>, %l: tensor<2xi32>, %cu: tensor<3xi32>, %p: tensor<2x5xi64>) {
  // expected-error @+1 {{'pe.paged_attention' op expects rope_positions to hold A = 3 position streams (dimension 0, one per section), but got 2}}
  %o = pe.paged_attention %q, %c, %c block_table(%bt : tensor<2x4xi32>) kv_lens(%l : tensor<2xi32>) cu_seqlens(%cu : tensor<3xi32>) rope_positions(%p : tensor<2x5xi64>) rope(#pe.rope<rotary_dim = 64, sections = [8, 12, 12]>) : tensor<5x8x64xf32>, tensor<?x16x2x64xf32>, tensor<?x16x2x64xf32> -> tensor<5x8x64xf32>
  return
}

// -----

func.func @attention_chunk(%q: tensor<1x2x4x16xf32>) {
  // expected-error @+1 {{'pe.attention' op expects chunk >= 1 (the positions of a chunk), but got 0}}
  %o = pe.attention %q, %q, %q causal chunk(0) : tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x16xf32>
  return
}

// -----

func.func @temperature_floor(%q: tensor<1x2x4x16xf32>) {
  // expected-error @+1 {{'#pe.temperature' expects floor_scale >= 1, but got 0}}
  %o = pe.attention %q, %q, %q temperature(#pe.temperature<floor_scale = 0, attn_scale = 0.1>) : tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x16xf32>
  return
}

// -----

// paged_attention: a soft mask is [T, Hq|1, K].
func.func @paged_mask_rank(%q: tensor<?x8x64xf32>, %c: tensor<?x16x2x64xf32>, %bt: tensor<2x4xi32>, %l: tensor<2xi32>, %cu: tensor<3xi32>, %m: tensor<?x64xf32>) {
  // expected-error @+1 {{expects a mask of shape [?, 8|1, K] (a row of K >= L_b key columns per query), but got 'tensor<?x64xf32>'}}
  %o = pe.paged_attention %q, %c, %c block_table(%bt : tensor<2x4xi32>) kv_lens(%l : tensor<2xi32>) cu_seqlens(%cu : tensor<3xi32>) mask(%m : tensor<?x64xf32>) : tensor<?x8x64xf32>, tensor<?x16x2x64xf32>, tensor<?x16x2x64xf32> -> tensor<?x8x64xf32>
  return
}

// -----

// paged_attention: the mask's heads are Hq or 1, its rows the query's.
func.func @paged_mask_heads(%q: tensor<5x8x64xf32>, %c: tensor<?x16x2x64xf32>, %bt: tensor<2x4xi32>, %l: tensor<2xi32>, %cu: tensor<3xi32>, %m: tensor<5x2x64xf32>) {
  // expected-error @+1 {{expects a mask of shape [5, 8|1, K] (a row of K >= L_b key columns per query), but got 'tensor<5x2x64xf32>'}}
  %o = pe.paged_attention %q, %c, %c block_table(%bt : tensor<2x4xi32>) kv_lens(%l : tensor<2xi32>) cu_seqlens(%cu : tensor<3xi32>) mask(%m : tensor<5x2x64xf32>) : tensor<5x8x64xf32>, tensor<?x16x2x64xf32>, tensor<?x16x2x64xf32> -> tensor<5x8x64xf32>
  return
}

// -----

func.func @paged_mask_rows(%q: tensor<5x8x64xf32>, %c: tensor<?x16x2x64xf32>, %bt: tensor<2x4xi32>, %l: tensor<2xi32>, %cu: tensor<3xi32>, %m: tensor<4x1x64xf32>) {
  // expected-error @+1 {{expects a mask of shape [5, 8|1, K] (a row of K >= L_b key columns per query), but got 'tensor<4x1x64xf32>'}}
  %o = pe.paged_attention %q, %c, %c block_table(%bt : tensor<2x4xi32>) kv_lens(%l : tensor<2xi32>) cu_seqlens(%cu : tensor<3xi32>) mask(%m : tensor<4x1x64xf32>) : tensor<5x8x64xf32>, tensor<?x16x2x64xf32>, tensor<?x16x2x64xf32> -> tensor<5x8x64xf32>
  return
}

// -----

// attention: a key with a shared block holds the query's channels less the block's.
func.func @attention_shared_key_width(%q: tensor<1x8x16x192xf32>, %k: tensor<1x8x16x192xf32>, %ks: tensor<1x1x16x64xf32>) {
  // expected-error @+1 {{expects key head dimension 128 (the query's less shared_key's), but got 192}}
  %o = pe.attention %q, %k, %k shared_key(%ks : tensor<1x1x16x64xf32>) : tensor<1x8x16x192xf32>, tensor<1x8x16x192xf32>, tensor<1x8x16x192xf32> -> tensor<1x8x16x192xf32>
  return
}

// -----

// attention: the shared block is one head per token.
func.func @attention_shared_key_heads(%q: tensor<1x8x16x192xf32>, %k: tensor<1x8x16x128xf32>, %ks: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{expects shared_key of shape [1, 1, 16, Ds] with 1 <= Ds < 192 (one block per token, Ds static), but got 'tensor<1x8x16x64xf32>'}}
  %o = pe.attention %q, %k, %k shared_key(%ks : tensor<1x8x16x64xf32>) : tensor<1x8x16x192xf32>, tensor<1x8x16x128xf32>, tensor<1x8x16x128xf32> -> tensor<1x8x16x128xf32>
  return
}

// -----

// attention: the shared block has the keys' length.
func.func @attention_shared_key_length(%q: tensor<1x8x16x192xf32>, %k: tensor<1x8x16x128xf32>, %ks: tensor<1x1x15x64xf32>) {
  // expected-error @+1 {{expects shared_key of shape [1, 1, 16, Ds] with 1 <= Ds < 192 (one block per token, Ds static), but got 'tensor<1x1x15x64xf32>'}}
  %o = pe.attention %q, %k, %k shared_key(%ks : tensor<1x1x15x64xf32>) : tensor<1x8x16x192xf32>, tensor<1x8x16x128xf32>, tensor<1x8x16x128xf32> -> tensor<1x8x16x128xf32>
  return
}

// -----

// attention: the shared block's width is static.
func.func @attention_shared_key_dynamic(%q: tensor<1x8x16x192xf32>, %k: tensor<1x8x16x128xf32>, %ks: tensor<1x1x16x?xf32>) {
  // expected-error @+1 {{expects shared_key of shape [1, 1, 16, Ds] with 1 <= Ds < 192 (one block per token, Ds static), but got 'tensor<1x1x16x?xf32>'}}
  %o = pe.attention %q, %k, %k shared_key(%ks : tensor<1x1x16x?xf32>) : tensor<1x8x16x192xf32>, tensor<1x8x16x128xf32>, tensor<1x8x16x128xf32> -> tensor<1x8x16x128xf32>
  return
}

// -----

// attention: the shared block has the key's element type.
func.func @attention_shared_key_type(%q: tensor<1x8x16x192xf32>, %k: tensor<1x8x16x128xf32>, %ks: tensor<1x1x16x64xbf16>) {
  // expected-error @+1 {{expects shared_key to have the key's element type ('f32'), but got 'bf16'}}
  %o = pe.attention %q, %k, %k shared_key(%ks : tensor<1x1x16x64xbf16>) : tensor<1x8x16x192xf32>, tensor<1x8x16x128xf32>, tensor<1x8x16x128xf32> -> tensor<1x8x16x128xf32>
  return
}

// -----

// attention: the key heads keep channels of their own (Ds < D).
func.func @attention_shared_key_whole_head(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x0xf32>, %ks: tensor<1x1x16x64xf32>, %v: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{expects shared_key of shape [1, 1, 16, Ds] with 1 <= Ds < 64 (one block per token, Ds static), but got 'tensor<1x1x16x64xf32>'}}
  %o = pe.attention %q, %k, %v shared_key(%ks : tensor<1x1x16x64xf32>) : tensor<1x8x16x64xf32>, tensor<1x8x16x0xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

// attention: the shared block has rank 4.
func.func @attention_shared_key_rank(%q: tensor<1x8x16x192xf32>, %k: tensor<1x8x16x128xf32>, %ks: tensor<1x16x64xf32>) {
  // expected-error @+1 {{expects shared_key of shape [1, 1, 16, Ds] with 1 <= Ds < 192 (one block per token, Ds static), but got 'tensor<1x16x64xf32>'}}
  %o = pe.attention %q, %k, %k shared_key(%ks : tensor<1x16x64xf32>) : tensor<1x8x16x192xf32>, tensor<1x8x16x128xf32>, tensor<1x8x16x128xf32> -> tensor<1x8x16x128xf32>
  return
}
