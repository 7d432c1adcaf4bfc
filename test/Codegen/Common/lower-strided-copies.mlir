// RUN: pe-opt %s --pass-pipeline="builtin.module(func.func(pe-lower-strided-copies))" | FileCheck %s
// RUN: pe-opt %s --pass-pipeline="builtin.module(func.func(pe-lower-strided-copies),convert-linalg-to-loops)" | FileCheck %s --check-prefix=CHECK-LOOPS

// What pe-lower-strided-copies guarantees: a copy from or into a strided
// slice (which would call MLIR's element-by-element memrefCopy) becomes a
// linalg.copy, lowered to plain loops; a copy between contiguous buffers
// stays a memref.copy (a memcpy).

// CHECK-LABEL: func.func @into_slice
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%{{.*}} : memref<4x16xf32>) outs(%{{.*}} : memref<4x16xf32, strided<[64, 1], offset: ?>>)
// CHECK-LOOPS-LABEL: func.func @into_slice
// CHECK-LOOPS: scf.for
// CHECK-LOOPS: scf.for
// CHECK-LOOPS: memref.load
// CHECK-LOOPS: memref.store
// CHECK-LOOPS-NOT: memref.copy
// CHECK-LOOPS-LABEL: func.func @from_slice
// CHECK-LOOPS-NOT: memref.copy
func.func @into_slice(%src: memref<4x16xf32>, %dst: memref<4x64xf32>, %offset: index) {
  %slice = memref.subview %dst[0, %offset] [4, 16] [1, 1] : memref<4x64xf32> to memref<4x16xf32, strided<[64, 1], offset: ?>>
  memref.copy %src, %slice : memref<4x16xf32> to memref<4x16xf32, strided<[64, 1], offset: ?>>
  return
}

// CHECK-LABEL: func.func @from_slice
// CHECK: linalg.copy ins(%{{.*}} : memref<4x16xf32, strided<[64, 2]>>) outs(%{{.*}} : memref<4x16xf32>)
func.func @from_slice(%src: memref<4x64xf32>, %dst: memref<4x16xf32>) {
  %slice = memref.subview %src[0, 0] [4, 16] [1, 2] : memref<4x64xf32> to memref<4x16xf32, strided<[64, 2]>>
  memref.copy %slice, %dst : memref<4x16xf32, strided<[64, 2]>> to memref<4x16xf32>
  return
}

// CHECK-LOOPS-LABEL: func.func @contiguous
// CHECK-LABEL: func.func @contiguous
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x16xf32> to memref<4x16xf32>
// CHECK-NOT: linalg.copy
func.func @contiguous(%src: memref<4x16xf32>, %dst: memref<4x16xf32>) {
  memref.copy %src, %dst : memref<4x16xf32> to memref<4x16xf32>
  return
}
