// RUN: pe-opt %s --pe-gpu-host-buffers -split-input-file -verify-diagnostics | FileCheck %s

// Arguments are copied to new device buffers on entry; each memref result
// is copied to a new host buffer, and every device buffer the function made
// is freed before it returns. Scalars pass through.
// CHECK-LABEL: func.func @scale
// CHECK-SAME: (%[[A:.*]]: memref<?x4xf32>, %[[N:.*]]: index)
// CHECK: %[[ROWS:.*]] = memref.dim %[[A]], %c0
// CHECK: %[[DA:.*]] = gpu.alloc (%[[ROWS]]) : memref<?x4xf32>
// CHECK: gpu.memcpy %[[DA]], %[[A]]
// CHECK: memref.dim %[[DA]]
// CHECK: %[[R:.*]] = gpu.alloc
// CHECK: gpu.memcpy %[[R]], %[[DA]]
// CHECK: %[[RROWS:.*]] = memref.dim %[[R]]
// CHECK: %[[H:.*]] = memref.alloc(%[[RROWS]]) : memref<?x4xf32>
// CHECK: gpu.memcpy %[[H]], %[[R]]
// CHECK-DAG: gpu.dealloc %[[DA]]
// CHECK-DAG: gpu.dealloc %[[R]]
// CHECK: return %[[H]], %[[N]]
func.func @scale(%a: memref<?x4xf32>, %n: index) -> (memref<?x4xf32>, index) {
  %c0 = arith.constant 0 : index
  %d = memref.dim %a, %c0 : memref<?x4xf32>
  %r = gpu.alloc (%d) : memref<?x4xf32>
  gpu.memcpy %r, %a : memref<?x4xf32>, memref<?x4xf32>
  return %r, %n : memref<?x4xf32>, index
}

// A buffer returned twice is copied twice and freed once.
// CHECK-LABEL: func.func @twice
// CHECK: %[[R:.*]] = gpu.alloc () : memref<8xf32>
// CHECK: %[[H0:.*]] = memref.alloc() : memref<8xf32>
// CHECK: gpu.memcpy %[[H0]], %[[R]]
// CHECK: %[[H1:.*]] = memref.alloc() : memref<8xf32>
// CHECK: gpu.memcpy %[[H1]], %[[R]]
// CHECK: gpu.dealloc %[[R]]
// CHECK-NOT: gpu.dealloc
// CHECK: return %[[H0]], %[[H1]]
func.func @twice() -> (memref<8xf32>, memref<8xf32>) {
  %r = gpu.alloc () : memref<8xf32>
  return %r, %r : memref<8xf32>, memref<8xf32>
}

// An argument the function updates in place (a KV cache; what
// pe-in-place-results records) is copied back from its device copy into the
// caller's buffer before that copy is freed; the others are not.
// CHECK-LABEL: func.func @update
// CHECK-SAME: (%[[C:.*]]: memref<4x8xf32>, %[[X:.*]]: memref<8xf32>)
// CHECK: %[[DC:.*]] = gpu.alloc () : memref<4x8xf32>
// CHECK: gpu.memcpy %[[DC]], %[[C]]
// CHECK: %[[DX:.*]] = gpu.alloc () : memref<8xf32>
// CHECK: gpu.memcpy %[[DX]], %[[X]]
// CHECK: gpu.memcpy %[[C]], %[[DC]]
// CHECK-NOT: gpu.memcpy %[[X]]
// CHECK: gpu.dealloc %[[DC]]
// CHECK: gpu.dealloc %[[DX]]
// CHECK-NEXT: return
func.func @update(%c: memref<4x8xf32>, %x: memref<8xf32>) attributes {pe.in_place_arguments = array<i64: 0>} {
  %c0 = arith.constant 0 : index
  %subview = memref.subview %c[0, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1]>>
  memref.copy %x, %subview : memref<8xf32> to memref<8xf32, strided<[1]>>
  return
}

// Private functions are called with device buffers: unchanged.
// CHECK-LABEL: func.func private @inner
// CHECK-NEXT: return %arg0
func.func private @inner(%a: memref<4xf32>) -> memref<4xf32> {
  return %a : memref<4xf32>
}

// -----

// A strided buffer cannot be copied whole.
// expected-error @below {{has a strided buffer at its boundary}}
func.func @strided(%a: memref<4xf32, strided<[2]>>) {
  return
}
