// RUN: pe-opt %s --pe-gpu-sink-constants | FileCheck %s

// A constant table (memref.get_global) and a vector constant that a launch
// uses from the host are copied into it: outlining then copies the global
// into the GPU module and makes the vector an immediate. A host global would
// otherwise enter the kernel as a host address (an illegal access on the
// GPU). The scalar index constant stays a kernel parameter.
// CHECK-LABEL: func.func @slopes
// CHECK: gpu.launch
// CHECK-DAG: %[[TABLE:.*]] = memref.get_global @slopes_table : memref<8xf32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK: memref.load %[[TABLE]][%{{.*}}] : memref<8xf32>
// CHECK: vector.store %[[ZERO]]
memref.global "private" constant @slopes_table : memref<8xf32> = dense<[0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625]>
func.func @slopes(%out: memref<8xf32>, %zeros: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %t = memref.get_global @slopes_table : memref<8xf32>
  %z = arith.constant dense<0.0> : vector<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %s = memref.load %t[%tx] : memref<8xf32>
    memref.store %s, %out[%tx] : memref<8xf32>
    %c0 = arith.constant 0 : index
    vector.store %z, %zeros[%c0] : memref<4xf32>, vector<4xf32>
    gpu.terminator
  }
  return
}

// The constant index of a memref.dim inside a launch is copied next to it:
// as a kernel parameter, the dim would read a local-memory copy of the
// sizes at a dynamic index.
// CHECK-LABEL: func.func @dim_index
// CHECK: gpu.launch
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: memref.dim %{{.*}}, %[[ONE]] : memref<?x?xi32>
func.func @dim_index(%table: memref<?x?xi32>, %out: memref<1xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %columns = memref.dim %table, %c1 : memref<?x?xi32>
    memref.store %columns, %out[%c0] : memref<1xindex>
    gpu.terminator
  }
  return
}
