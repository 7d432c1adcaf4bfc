// RUN: pe-opt %s --pass-pipeline="builtin.module(func.func(pe-fold-loop-carried-dims))" --split-input-file | FileCheck %s

// What pe-fold-loop-carried-dims guarantees: the size of a tensor that a
// loop carries is read from its initial value when every iteration yields a
// tensor of the same shape, and only then.

// A tile loop nest writing vectors into the carried tensor: the sizes of
// the result and of the iteration arguments are the initial value's.
// CHECK-LABEL: func.func @transfer_write_nest
// CHECK-SAME: (%[[INIT:.*]]: tensor<4x?x?xf32>
// CHECK: scf.for
// CHECK: tensor.dim %[[INIT]], %c2
// CHECK: scf.for
// CHECK: tensor.dim %[[INIT]], %c1
// CHECK: vector.transfer_write
// CHECK: %[[D1:.*]] = tensor.dim %[[INIT]], %c1
// CHECK: %[[D2:.*]] = tensor.dim %[[INIT]], %c2
// CHECK: return %{{.*}}, %[[D1]], %[[D2]]
func.func @transfer_write_nest(%init: tensor<4x?x?xf32>, %v: vector<8xf32>, %n: index) -> (tensor<4x?x?xf32>, index, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %init) -> (tensor<4x?x?xf32>) {
    %cols = tensor.dim %t, %c2 : tensor<4x?x?xf32>
    %inner = scf.for %j = %c0 to %cols step %c8 iter_args(%u = %t) -> (tensor<4x?x?xf32>) {
      %rows = tensor.dim %u, %c1 : tensor<4x?x?xf32>
      %row = arith.remui %i, %rows : index
      %w = vector.transfer_write %v, %u[%c0, %row, %j] {in_bounds = [true]} : vector<8xf32>, tensor<4x?x?xf32>
      scf.yield %w : tensor<4x?x?xf32>
    }
    scf.yield %inner : tensor<4x?x?xf32>
  }
  %d1 = tensor.dim %r, %c1 : tensor<4x?x?xf32>
  %d2 = tensor.dim %r, %c2 : tensor<4x?x?xf32>
  return %r, %d1, %d2 : tensor<4x?x?xf32>, index, index
}

// -----

// tensor.insert_slice into the carried tensor and a destination-style op
// on it keep its shape.
// CHECK-LABEL: func.func @insert_slice_and_linalg
// CHECK-SAME: (%[[INIT:.*]]: tensor<?x16xf32>
// CHECK: scf.for
// CHECK: %[[D:.*]] = tensor.dim %[[INIT]], %c0
// CHECK: return %{{.*}}, %[[D]]
func.func @insert_slice_and_linalg(%init: tensor<?x16xf32>, %piece: tensor<1x16xf32>, %n: index) -> (tensor<?x16xf32>, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %init) -> (tensor<?x16xf32>) {
    %filled = linalg.fill ins(%zero : f32) outs(%t : tensor<?x16xf32>) -> tensor<?x16xf32>
    %s = tensor.insert_slice %piece into %filled[%i, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<?x16xf32>
    scf.yield %s : tensor<?x16xf32>
  }
  %d = tensor.dim %r, %c0 : tensor<?x16xf32>
  return %r, %d : tensor<?x16xf32>, index
}

// -----

// An iteration that yields a tensor of another size: the size stays the
// loop result's (folding it would be wrong).
// CHECK-LABEL: func.func @resizing_loop
// CHECK: %[[R:.*]] = scf.for %{{.*}} iter_args(%[[T:.*]] = %{{.*}})
// CHECK: tensor.dim %[[T]], %c0
// CHECK: tensor.dim %[[R]], %c0
func.func @resizing_loop(%init: tensor<?xf32>, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %init) -> (tensor<?xf32>) {
    %size = tensor.dim %t, %c0 : tensor<?xf32>
    %grown = arith.addi %size, %c1 : index
    %e = tensor.empty(%grown) : tensor<?xf32>
    scf.yield %e : tensor<?xf32>
  }
  %d = tensor.dim %r, %c0 : tensor<?xf32>
  return %d : index
}

// -----

// A yielded tensor from outside the loop (not built from the iteration
// argument) is not known to have its shape.
// CHECK-LABEL: func.func @yields_other_tensor
// CHECK: %[[R:.*]] = scf.for
// CHECK: tensor.dim %[[R]], %c0
func.func @yields_other_tensor(%init: tensor<?xf32>, %other: tensor<?xf32>, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %init) -> (tensor<?xf32>) {
    scf.yield %other : tensor<?xf32>
  }
  %d = tensor.dim %r, %c0 : tensor<?xf32>
  return %d : index
}
