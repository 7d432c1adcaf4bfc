// RUN: pe-opt %s --pe-gpu-vectorize-loops -split-input-file | FileCheck %s

// ALiBi-like: 4 f32 lanes per iteration. The lane-invariant load stays a
// scalar (broadcast where mixed), the load at [..., j] is one vector load
// (an argument: its alignment is unknown, so the element's), the store into
// this function's allocation one 16-byte aligned vector store.
// CHECK-LABEL: func.func @bias
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<12x20x20xf32>
// CHECK: scf.parallel (%[[H:.*]], %[[I:.*]], %[[C:.*]]) = (%{{.*}}) to (%{{.*}}, %{{.*}}, %[[C5:.*]]) step
// CHECK: %[[J:.*]] = arith.muli %[[C]], %c4
// CHECK: %[[S:.*]] = memref.load %arg0[%[[H]]] : memref<12xf32>
// CHECK: %[[K:.*]] = vector.load %arg1[%[[J]]] {alignment = 4 : i64} : memref<20xi32>, vector<4xi32>
// CHECK: arith.sitofp %[[K]] : vector<4xi32> to vector<4xf32>
// CHECK: vector.broadcast %[[S]] : f32 to vector<4xf32>
// CHECK: arith.mulf %{{.*}} : vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[H]], %[[I]], %[[J]]] {alignment = 16 : i64} : memref<12x20x20xf32>, vector<4xf32>
func.func @bias(%slopes: memref<12xf32>, %k: memref<20xi32>) -> memref<12x20x20xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  %c20 = arith.constant 20 : index
  %out = memref.alloc() : memref<12x20x20xf32>
  scf.parallel (%h, %i, %j) = (%c0, %c0, %c0) to (%c12, %c20, %c20) step (%c1, %c1, %c1) {
    %s = memref.load %slopes[%h] : memref<12xf32>
    %kj = memref.load %k[%j] : memref<20xi32>
    %kf = arith.sitofp %kj : i32 to f32
    %b = arith.mulf %s, %kf : f32
    memref.store %b, %out[%h, %i, %j] : memref<12x20x20xf32>
    scf.reduce
  }
  return %out : memref<12x20x20xf32>
}

// -----

// bf16 copied into the right half of rows of 64: 8 lanes (16 bytes), the
// view's offset and row stride multiples of 8, so both accesses aligned.
// CHECK-LABEL: func.func @copy_bf16
// CHECK: scf.parallel (%{{.*}}, %[[C:.*]]) = (%{{.*}}) to (%{{.*}}, %c4) step
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<?x32xbf16>, vector<8xbf16>
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<?x32xbf16, strided<[64, 1], offset: 32>>, vector<8xbf16>
func.func @copy_bf16(%n: index) -> memref<?x64xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %src = memref.alloc(%n) : memref<?x32xbf16>
  %dst = memref.alloc(%n) : memref<?x64xbf16>
  %right = memref.subview %dst[0, 32] [%n, 32] [1, 1] : memref<?x64xbf16> to memref<?x32xbf16, strided<[64, 1], offset: 32>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c32) step (%c1, %c1) {
    %v = memref.load %src[%i, %j] : memref<?x32xbf16>
    memref.store %v, %right[%i, %j] : memref<?x32xbf16, strided<[64, 1], offset: 32>>
    scf.reduce
  }
  memref.dealloc %src : memref<?x32xbf16>
  return %dst : memref<?x64xbf16>
}

// -----

// Lane-dependent f64 (a frequency table): 16 bytes of it, 2 lanes.
// CHECK-LABEL: func.func @angles
// CHECK: vector.load %arg0[%{{.*}}] {alignment = 8 : i64} : memref<16xf64>, vector<2xf64>
// CHECK: arith.truncf %{{.*}} : vector<2xf64> to vector<2xf32>
// CHECK: vector.store %{{.*}} {alignment = 8 : i64} : memref<8x16xf32>, vector<2xf32>
func.func @angles(%freq: memref<16xf64>, %pos: memref<8xf64>) -> memref<8x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %out = memref.alloc() : memref<8x16xf32>
  scf.parallel (%s, %f) = (%c0, %c0) to (%c8, %c16) step (%c1, %c1) {
    %p = memref.load %pos[%s] : memref<8xf64>
    %w = memref.load %freq[%f] : memref<16xf64>
    %a = arith.mulf %p, %w : f64
    %t = arith.truncf %a : f64 to f32
    memref.store %t, %out[%s, %f] : memref<8x16xf32>
    scf.reduce
  }
  return %out : memref<8x16xf32>
}

// -----

// Left alone: a gather (the partner of an interleaved pair), and an
// innermost extent that is not a multiple of the lanes.
// CHECK-LABEL: func.func @gather
// CHECK-NOT: vector.
// CHECK: memref.store %{{.*}} : memref<4x8xf32>
// CHECK-LABEL: func.func @ragged
// CHECK-NOT: vector.
func.func @gather(%x: memref<4x8xf32>) -> memref<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %out = memref.alloc() : memref<4x8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %partner = arith.xori %j, %c1 : index
    %v = memref.load %x[%i, %partner] : memref<4x8xf32>
    memref.store %v, %out[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  return %out : memref<4x8xf32>
}
func.func @ragged(%x: memref<4x6xf32>) -> memref<4x6xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %out = memref.alloc() : memref<4x6xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c6) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<4x6xf32>
    memref.store %v, %out[%i, %j] : memref<4x6xf32>
    scf.reduce
  }
  return %out : memref<4x6xf32>
}

// -----

// Index elements have no fixed width: left alone.
// CHECK-LABEL: func.func @indices
// CHECK-NOT: vector.
func.func @indices() -> memref<4x8xindex> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %out = memref.alloc() : memref<4x8xindex>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = arith.addi %i, %j : index
    memref.store %v, %out[%i, %j] : memref<4x8xindex>
    scf.reduce
  }
  return %out : memref<4x8xindex>
}
