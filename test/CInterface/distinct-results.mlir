// RUN: pe-opt %s --pass-pipeline="builtin.module(func.func(pe-distinct-results))" | FileCheck %s
// RUN: pe-opt %s --pe-cpu-pipeline="target-triple=x86_64-linux-gnu target-cpu=skylake-avx512" | FileCheck %s --check-prefix=CHECK-LLVM

// What pe-distinct-results guarantees: every tensor result of a public
// function is a buffer of its own, so a C caller frees each result once. A
// value returned a second time is returned as a copy; private functions are
// left alone.

// CHECK-LABEL: func.func @twice
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[Y:.*]] = arith.addf %[[X]], %[[X]]
// CHECK: %[[COPY:.*]] = bufferization.alloc_tensor() copy(%[[Y]]) : tensor<4xf32>
// CHECK: %[[COPY2:.*]] = bufferization.alloc_tensor() copy(%[[Y]]) : tensor<4xf32>
// CHECK: return %[[Y]], %[[COPY]], %[[COPY2]], %[[X]]
// Each result is its own allocation after bufferization:
// CHECK-LLVM-LABEL: llvm.func @twice
// CHECK-LLVM-COUNT-4: llvm.call @aligned_alloc
// CHECK-LLVM: llvm.return
func.func @twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y, %y, %y, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Views of one buffer (casts, reshapes) count as that buffer.
// CHECK-LABEL: func.func @views
// CHECK: %[[Y:.*]] = arith.addf
// CHECK: %[[CAST:.*]] = tensor.cast %[[Y]]
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[Y]]
// CHECK: %[[COPY1:.*]] = bufferization.alloc_tensor() copy(%[[CAST]])
// CHECK: %[[COPY2:.*]] = bufferization.alloc_tensor() copy(%[[FLAT]])
// CHECK: return %[[Y]], %[[COPY1]], %[[COPY2]]
func.func @views(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<?x4xf32>, tensor<8xf32>) {
  %y = arith.addf %x, %x : tensor<2x4xf32>
  %c = tensor.cast %y : tensor<2x4xf32> to tensor<?x4xf32>
  %f = tensor.collapse_shape %y [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  return %y, %c, %f : tensor<2x4xf32>, tensor<?x4xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func private @helper
// CHECK-NOT: alloc_tensor
// CHECK: return %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>
func.func private @helper(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y, %y : tensor<4xf32>, tensor<4xf32>
}
