// The lowerings declare runtime functions and kernels in the enclosing
// module: they run on a symbol table, and on anything else (a function at
// the top level, or a function nested in a pass pipeline, where functions
// run in parallel) they stop with a diagnostic instead of writing to a
// parent module.
// RUN: not pe-opt --no-implicit-module %s --pe-lower-to-linalg 2>&1 | FileCheck %s --check-prefix=CHECK-LINALG
// RUN: not pe-opt --no-implicit-module %s --pe-tile-rope 2>&1 | FileCheck %s --check-prefix=CHECK-ROPE
// RUN: not pe-opt --no-implicit-module %s --pe-tile-attention 2>&1 | FileCheck %s --check-prefix=CHECK-ATTENTION
// RUN: not pe-opt %s --pass-pipeline="builtin.module(func.func(pe-lower-to-linalg))" 2>&1 | FileCheck %s --check-prefix=CHECK-LINALG
// RUN: not pe-opt %s --pass-pipeline="builtin.module(func.func(pe-tile-rope))" 2>&1 | FileCheck %s --check-prefix=CHECK-ROPE

// CHECK-LINALG: error: pe-lower-to-linalg runs on a symbol table such as builtin.module (it declares functions there), not on 'func.func'
// CHECK-ROPE: error: pe-tile-rope runs on a symbol table such as builtin.module (it declares functions there), not on 'func.func'
// CHECK-ATTENTION: error: pe-tile-attention runs on a symbol table such as builtin.module (it declares functions there), not on 'func.func'
func.func @f(%x: tensor<1x1x4x32xf32>, %p: tensor<4xi32>) -> tensor<1x1x4x32xf32> {
  %y = pe.rope #pe.rope<rotary_dim = 32> %x, %p : tensor<1x1x4x32xf32>, tensor<4xi32>
  return %y : tensor<1x1x4x32xf32>
}
