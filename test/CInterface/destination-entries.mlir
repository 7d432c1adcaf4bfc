// RUN: pe-opt %s --pe-destination-entries | FileCheck %s

// A returned allocation becomes the caller's buffer when that is aligned as
// the allocation asks, else is computed apart and copied; dynamic sizes of
// each output are checked against the result's (check 21:
// PE_CHECK_DESTINATION_SHAPE); scalar results stay results.
// CHECK-LABEL: func.func @rope(
// CHECK-LABEL: func.func @rope_into(
// CHECK-SAME: %[[X:.*]]: memref<1x2x?x32xf32>, %[[N:.*]]: index, %[[OUT:.*]]: memref<1x2x?x32xf32>, %[[OUT2:.*]]: memref<?xf32>) -> index attributes {pe.outputs = 2 : i64}
// CHECK: %[[D:.*]] = memref.dim %[[OUT]], %c2
// CHECK: %[[BAD:.*]] = arith.cmpi ne, %[[D]], %[[N]]
// CHECK: scf.if %[[BAD]] {
// CHECK: %[[C21:.*]] = arith.constant 21 : i64
// CHECK: func.call @pe_runtime_size_mismatch(%[[C21]],
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: %[[R:.*]] = arith.remui %[[P]], %c64
// CHECK: %[[ALIGNED:.*]] = arith.cmpi eq, %[[R]], %c0
// CHECK: %[[BUF:.*]] = scf.if %[[ALIGNED]] -> (memref<1x2x?x32xf32>) {
// CHECK-NEXT: scf.yield %[[OUT]]
// CHECK-NEXT: } else {
// CHECK-NEXT: memref.alloc(%[[N]]) {alignment = 64 : i64}
// The second result has no alignment: the output replaces it outright.
// CHECK: memref.dim %[[OUT2]], %c0
// CHECK-NOT: memref.alloc
// CHECK: %[[APART:.*]] = arith.cmpi ne, %[[R]], %c0
// CHECK-NEXT: scf.if %[[APART]] {
// CHECK-NEXT: memref.copy %[[BUF]], %[[OUT]]
// CHECK-NEXT: memref.dealloc %[[BUF]]
// CHECK: return %[[N]] : index
func.func @rope(%x: memref<1x2x?x32xf32>, %n: index) -> (memref<1x2x?x32xf32>, memref<?xf32>, index) {
  %a = memref.alloc(%n) {alignment = 64 : i64} : memref<1x2x?x32xf32>
  %b = memref.alloc(%n) : memref<?xf32>
  return %a, %b, %n : memref<1x2x?x32xf32>, memref<?xf32>, index
}

// A result that is not an allocation of the function is copied.
// CHECK-LABEL: func.func @passthrough_into(
// CHECK-SAME: %[[A:.*]]: memref<4xf32>, %[[O:.*]]: memref<4xf32>) attributes {pe.outputs = 1 : i64}
// CHECK-NEXT: memref.copy %[[A]], %[[O]]
func.func @passthrough(%x: memref<4xf32>) -> memref<4xf32> {
  return %x : memref<4xf32>
}

// Private functions get no entry.
// CHECK-NOT: @helper_into
func.func private @helper(%x: memref<4xf32>) -> memref<4xf32> {
  return %x : memref<4xf32>
}
