// RUN: pe-opt %s --pe-gpu-launch-to-loops -split-input-file -verify-diagnostics | FileCheck %s

// A launch becomes loops over blocks (z, y, x) and threads (z, y, x) with
// the ids and sizes bound; GPU memory operations become memref ones.
// CHECK-LABEL: func.func @launch
// CHECK-SAME: (%[[A:.*]]: memref<?xf32>, %[[G:.*]]: index)
// CHECK: %[[T:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: memref.copy %[[A]], %[[T]]
// CHECK: scf.for %{{.*}} = %[[ZERO:.*]] to %c1
// CHECK-NEXT: scf.for %{{.*}} = %[[ZERO]] to %c1
// CHECK-NEXT: scf.for %[[BX:.*]] = %[[ZERO]] to %[[G]]
// CHECK-NEXT: scf.for %{{.*}} = %[[ZERO]] to %c1
// CHECK-NEXT: scf.for %{{.*}} = %[[ZERO]] to %c1
// CHECK-NEXT: scf.for %[[TX:.*]] = %[[ZERO]] to %c32
// CHECK: %[[I:.*]] = arith.muli %[[BX]], %c32
// CHECK: %[[J:.*]] = arith.addi %[[I]], %[[TX]]
// CHECK: %[[STRIDE:.*]] = arith.muli %[[G]], %c32
// CHECK: memref.store %{{.*}}, %[[T]][%[[J]]]
// CHECK-NOT: gpu.
// CHECK: memref.dealloc %[[T]]
func.func @launch(%a: memref<?xf32>, %grid: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %t = gpu.alloc (%n) : memref<?xf32>
  gpu.memcpy %t, %a : memref<?xf32>, memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %grid, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %i = arith.muli %bx, %sx : index
    %j = arith.addi %i, %tx : index
    %stride = arith.muli %gx, %sx : index
    %v = arith.index_cast %stride : index to i32
    %f = arith.sitofp %v : i32 to f32
    memref.store %f, %t[%j] : memref<?xf32>
    gpu.terminator
  }
  gpu.dealloc %t : memref<?xf32>
  return
}

// -----

// Threads that wait for each other cannot run one after another.
func.func @barrier() {
  %c1 = arith.constant 1 : index
  // expected-error @below {{with barriers cannot run its threads in sequence}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.barrier
    gpu.terminator
  }
  return
}
