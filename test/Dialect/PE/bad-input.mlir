// Bad input ends in a diagnostic and a non-zero exit, never in a crash
// (`not` fails on a crash as well as on success).

// Truncated IR.
// RUN: not pe-opt %S/Inputs/truncated.mlir 2>&1 | FileCheck %s --check-prefix=TRUNC
// TRUNC: truncated.mlir:2:24: error: unbalanced '<' character in pretty dialect name

// Bytes that are not IR.
// RUN: not pe-opt %S/Inputs/binary.mlir 2>&1 | FileCheck %s --check-prefix=BINARY
// BINARY: error:

// A missing file.
// RUN: not pe-opt %S/Inputs/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory

// A directory where a file is expected (an unreadable input).
// RUN: not pe-opt %S/Inputs 2>&1 | FileCheck %s --check-prefix=DIRECTORY
// DIRECTORY: cannot open input file '{{.*}}Inputs': Is a directory

// An empty file is an empty module, not an error.
// RUN: pe-opt %S/Inputs/empty.mlir | FileCheck %s --check-prefix=EMPTY
// EMPTY: module {

// Each case below is split off and parsed on its own.
// RUN: not pe-opt %s -split-input-file 2>&1 | FileCheck %s

// Unknown op of the dialect.
// CHECK: error: custom op 'pe.rotate' is unknown
func.func @unknown_op(%x: tensor<4xi32>) {
  %0 = pe.rotate %x : tensor<4xi32>
  return
}

// -----

// Unknown attribute of the dialect.
// CHECK: error: unknown attribute `rotary` in dialect `pe`
func.func @unknown_attr() -> tensor<4xf32> {
  %0 = pe.rope_frequencies #pe.rotary<rotary_dim = 8> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Unknown parameter of #pe.rope.
// CHECK: error: duplicate or unknown struct parameter name: base
func.func @unknown_param() -> tensor<4xf32> {
  %0 = pe.rope_frequencies #pe.rope<base = 10000.0, rotary_dim = 8> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Missing required parameter.
// CHECK: error: struct is missing required parameter: rotary_dim
func.func @missing_param() -> tensor<4xf32> {
  %0 = pe.rope_frequencies #pe.rope<theta = 10000.0> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A scaling that is not a scaling.
// CHECK: error: invalid kind of attribute specified
func.func @not_a_scaling() -> tensor<4xf32> {
  %0 = pe.rope_frequencies #pe.rope<rotary_dim = 8, scaling = 1.0> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Wrong element type of an activation.
// CHECK: error: 'pe.rope' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values
func.func @int_activation(%x: tensor<1x2x4x8xi32>, %p: tensor<4xi32>) -> tensor<1x2x4x8xi32> {
  %0 = "pe.rope"(%x, %p) <{operandSegmentSizes = array<i32: 1, 1, 0, 0>, rope = #pe.rope<rotary_dim = 8>}> : (tensor<1x2x4x8xi32>, tensor<4xi32>) -> tensor<1x2x4x8xi32>
  return %0 : tensor<1x2x4x8xi32>
}

// -----

// Float positions.
// CHECK: error: 'pe.rope' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values
func.func @float_positions(%x: tensor<1x2x4x8xf32>, %p: tensor<4xf32>) -> tensor<1x2x4x8xf32> {
  %0 = pe.rope #pe.rope<rotary_dim = 8> %x, %p : tensor<1x2x4x8xf32>, tensor<4xf32>
  return %0 : tensor<1x2x4x8xf32>
}

// -----

// Shapes that disagree.
// CHECK: error: 'pe.rope' op expects positions to have S = 4 entries, but got 5
func.func @short_positions(%x: tensor<1x2x4x8xf32>, %p: tensor<5xi32>) -> tensor<1x2x4x8xf32> {
  %0 = pe.rope #pe.rope<rotary_dim = 8> %x, %p : tensor<1x2x4x8xf32>, tensor<5xi32>
  return %0 : tensor<1x2x4x8xf32>
}

// -----

// An absurd rotary dimension (would overflow any table size).
// CHECK: error: 'pe.rope' op expects rotary_dim (9223372036854775806) <= head dimension (8)
func.func @huge_rotary(%x: tensor<1x2x4x8xf32>, %p: tensor<4xi32>) -> tensor<1x2x4x8xf32> {
  %0 = pe.rope #pe.rope<rotary_dim = 9223372036854775806> %x, %p : tensor<1x2x4x8xf32>, tensor<4xi32>
  return %0 : tensor<1x2x4x8xf32>
}

// -----

// An integer that does not fit.
// CHECK: error: integer value too large
func.func @overflow_int() -> tensor<4xf32> {
  %0 = pe.rope_frequencies #pe.rope<rotary_dim = 99999999999999999999999> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Types of the wrong kind in the custom form.
// CHECK: error: custom op 'pe.rope' invalid kind of type specified: expected builtin.tensor, but found 'memref<1x2x4x8xf32>'
func.func @memref_input(%x: memref<1x2x4x8xf32>, %p: tensor<4xi32>) {
  %0 = pe.rope #pe.rope<rotary_dim = 8> %x, %p : memref<1x2x4x8xf32>, tensor<4xi32>
  return
}
