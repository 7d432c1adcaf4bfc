// RUN: pe-opt %s --pe-order-constants | FileCheck %s

// Bufferization's constants, named and placed in the order the functions
// were visited (@b's first): renamed by first use in module order, moved to
// the top in that order, every use following. Other globals keep their
// names and places.

// CHECK-LABEL: module
// CHECK-NEXT: memref.global "private" constant @__constant_0_4xf32 : memref<4xf32> = dense<1.000000e+00>
// CHECK-NEXT: memref.global "private" constant @__constant_1_2x3xf64 : memref<2x3xf64> = dense<2.000000e+00>
// CHECK-NEXT: memref.global "private" constant @__constant_2_4xf32 : memref<4xf32> = dense<3.000000e+00>
// CHECK-NEXT: memref.global "private" @state : memref<4xf32>
// CHECK-LABEL: func.func @a
// CHECK: memref.get_global @__constant_0_4xf32
// CHECK: memref.get_global @__constant_1_2x3xf64
// CHECK: memref.get_global @state
// CHECK-LABEL: func.func @b
// CHECK: memref.get_global @__constant_2_4xf32
// CHECK: memref.get_global @__constant_0_4xf32
module {
  memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<3.0>
  memref.global "private" constant @__constant_4xf32_0 : memref<4xf32> = dense<1.0>
  memref.global "private" @state : memref<4xf32>
  memref.global "private" constant @__constant_2x3xf64 : memref<2x3xf64> = dense<2.0>
  func.func @a() -> (memref<4xf32>, memref<2x3xf64>, memref<4xf32>) {
    %0 = memref.get_global @__constant_4xf32_0 : memref<4xf32>
    %1 = memref.get_global @__constant_2x3xf64 : memref<2x3xf64>
    %2 = memref.get_global @state : memref<4xf32>
    return %0, %1, %2 : memref<4xf32>, memref<2x3xf64>, memref<4xf32>
  }
  func.func @b() -> (memref<4xf32>, memref<4xf32>) {
    %0 = memref.get_global @__constant_4xf32 : memref<4xf32>
    %1 = memref.get_global @__constant_4xf32_0 : memref<4xf32>
    return %0, %1 : memref<4xf32>, memref<4xf32>
  }
}
