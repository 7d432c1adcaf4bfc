// RUN: pe-opt %s --pe-gpu-device-memory -split-input-file -verify-diagnostics | FileCheck %s

// Host buffers live in GPU memory; contiguous copies are gpu.memcpy.
// CHECK-LABEL: func.func @buffers
// CHECK-SAME: (%[[A:.*]]: memref<?xf32>)
// CHECK: %[[N:.*]] = memref.dim %[[A]], %c0
// CHECK: %[[T:.*]] = gpu.alloc (%[[N]]) : memref<?xf32>
// CHECK: gpu.memcpy %[[T]], %[[A]] : memref<?xf32>, memref<?xf32>
// CHECK: %[[U:.*]] = gpu.alloc (%[[N]]) : memref<?xf32>
// CHECK: gpu.memcpy %[[U]], %[[T]]
// CHECK: gpu.dealloc %[[T]] : memref<?xf32>
// CHECK: return %[[U]]
// CHECK-NOT: memref.alloc
func.func @buffers(%a: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %t = memref.alloc(%n) {alignment = 64 : i64} : memref<?xf32>
  memref.copy %a, %t : memref<?xf32> to memref<?xf32>
  %u = memref.alloc(%n) : memref<?xf32>
  memref.copy %t, %u : memref<?xf32> to memref<?xf32>
  memref.dealloc %t : memref<?xf32>
  return %u : memref<?xf32>
}

// -----

// Buffers inside kernels are left alone.
// CHECK-LABEL: func.func @in_kernel
// CHECK: gpu.launch
// CHECK: memref.alloca
func.func @in_kernel() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %s = memref.alloca() : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @strided(%a: memref<4x8xf32>, %b: memref<4x4xf32, strided<[8, 1]>>) {
  %s = memref.subview %a[0, 0] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1]>>
  // expected-error @+1 {{between strided buffers must be lowered to a loop before pe-gpu-device-memory}}
  memref.copy %s, %b : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32, strided<[8, 1]>>
  return
}
