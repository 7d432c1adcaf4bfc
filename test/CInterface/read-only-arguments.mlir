// RUN: pe-opt %s --pass-pipeline="builtin.module(func.func(pe-read-only-arguments))" | FileCheck %s
// RUN: pe-opt %s --pass-pipeline="builtin.module(func.func(pe-read-only-arguments),one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map})" | FileCheck %s --check-prefix=CHECK-BUF
// RUN: pe-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=CHECK-INPLACE

// What pe-read-only-arguments guarantees: the tensor arguments of public
// functions are never written by the compiled code (a C caller's inputs keep
// their values); private functions and scalars are left alone.

#id = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @scale
// CHECK-SAME: (%{{.*}}: tensor<16xf32> {bufferization.writable = false}, %{{.*}}: index)
// The update that would write into %x in place writes a copy instead:
// CHECK-BUF-LABEL: func.func @scale
// CHECK-BUF-SAME: (%[[X:.*]]: memref<16xf32>,
// CHECK-BUF: %[[COPY:.*]] = memref.alloc
// CHECK-BUF: memref.copy %[[X]], %[[COPY]]
// CHECK-BUF: linalg.generic {{.*}} outs(%[[COPY]] : memref<16xf32>)
// CHECK-BUF: return %[[COPY]]
// Without the pass, one-shot bufferization writes the argument in place:
// CHECK-INPLACE-LABEL: func.func @scale
// CHECK-INPLACE-SAME: (%[[X:.*]]: memref<16xf32>,
// CHECK-INPLACE-NOT: memref.alloc
// CHECK-INPLACE: linalg.generic {{.*}} outs(%[[X]] : memref<16xf32>)
func.func @scale(%x: tensor<16xf32>, %n: index) -> tensor<16xf32> {
  %c = arith.constant 2.0 : f32
  %r = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%x : tensor<16xf32>) {
  ^bb0(%a: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// CHECK-LABEL: func.func private @helper
// CHECK-SAME: (%{{.*}}: tensor<16xf32>) -> tensor<16xf32>
func.func private @helper(%x: tensor<16xf32>) -> tensor<16xf32> {
  return %x : tensor<16xf32>
}
