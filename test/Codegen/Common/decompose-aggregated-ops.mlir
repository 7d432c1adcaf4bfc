// linalg.softmax (an importer's unraised softmax) as its own decomposition:
// row maximum, exp(x - max), row sum, quotient.
// RUN: pe-opt %s --pe-decompose-aggregated-ops | FileCheck %s

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK-NOT: linalg.softmax
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[X]] : tensor<2x8xf32>)
// CHECK: arith.maxnumf
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MAX]] : tensor<2x8xf32>, tensor<2xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[EXP]] : tensor<2x8xf32>)
// CHECK: arith.addf
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] : tensor<2x8xf32>, tensor<2xf32>)
// CHECK: arith.divf
// CHECK: return %[[Y]]
func.func @softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %e = tensor.empty() : tensor<2x8xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  return %s : tensor<2x8xf32>
}

// A softmax over the leading dim of a 4-d value (over the queries: left
// unraised, still compiled).
// CHECK-LABEL: func.func @softmax_dim0
// CHECK-NOT: linalg.softmax
// CHECK: iterator_types = ["reduction", "parallel", "parallel", "parallel"]
func.func @softmax_dim0(%x: tensor<4x2x3x5xf32>) -> tensor<4x2x3x5xf32> {
  %e = tensor.empty() : tensor<4x2x3x5xf32>
  %s = linalg.softmax dimension(0) ins(%x : tensor<4x2x3x5xf32>) outs(%e : tensor<4x2x3x5xf32>) -> tensor<4x2x3x5xf32>
  return %s : tensor<4x2x3x5xf32>
}
