// RUN: pe-opt %s --pe-destination-entries | FileCheck %s

// Both entries call one copy of the body, @NAME_shared: its outputs and a
// flag `into` after the arguments.
// CHECK-LABEL: func.func private @rope_shared(
// CHECK-SAME: %[[X:.*]]: memref<1x2x?x32xf32>, %[[N:.*]]: index, %[[OUT:.*]]: memref<1x2x?x32xf32>, %[[OUT2:.*]]: memref<?xf32>, %[[INTO:.*]]: i1) -> (memref<1x2x?x32xf32>, memref<?xf32>, index)
// Where `into` holds, the dynamic sizes of each output are checked against
// the result's (check 21: PE_CHECK_DESTINATION_SHAPE).
// CHECK: scf.if %[[INTO]] {
// CHECK: %[[D:.*]] = memref.dim %[[OUT]], %c2
// CHECK: %[[BAD:.*]] = arith.cmpi ne, %[[D]], %[[N]]
// CHECK: scf.if %[[BAD]] {
// CHECK: %[[C21:.*]] = arith.constant 21 : i64
// CHECK: func.call @pe_runtime_size_mismatch(%[[C21]],
// A returned allocation becomes the caller's buffer when that is aligned as
// the allocation asks, else is computed apart and copied.
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: %[[R:.*]] = arith.remui %[[P]], %c64
// CHECK: %[[ALIGNED:.*]] = arith.cmpi eq, %[[R]], %c0
// CHECK: %[[DIRECT:.*]] = arith.andi %[[INTO]], %[[ALIGNED]]
// CHECK: %[[BUF:.*]] = scf.if %[[DIRECT]] -> (memref<1x2x?x32xf32>) {
// CHECK-NEXT: scf.yield %[[OUT]]
// CHECK-NEXT: } else {
// CHECK-NEXT: memref.alloc(%[[N]]) {alignment = 64 : i64}
// The second result has no alignment: the output replaces it outright.
// CHECK: scf.if %[[INTO]] {
// CHECK: memref.dim %[[OUT2]], %c0
// CHECK: %[[BUF2:.*]] = scf.if %[[INTO]] -> (memref<?xf32>) {
// CHECK-NEXT: scf.yield %[[OUT2]]
// CHECK-NEXT: } else {
// CHECK-NEXT: memref.alloc(%[[N]]) : memref<?xf32>
// CHECK: %[[APART:.*]] = arith.xori %[[INTO]], %[[DIRECT]]
// CHECK-NEXT: scf.if %[[APART]] {
// CHECK-NEXT: memref.copy %[[BUF]], %[[OUT]]
// CHECK-NEXT: memref.dealloc %[[BUF]]
// CHECK: return %[[BUF]], %[[BUF2]], %[[N]]

// @rope: the body without outputs (placeholders over a one-element stack
// buffer, never touched) returns all results.
// CHECK-LABEL: func.func @rope(
// CHECK-SAME: %[[X:.*]]: memref<1x2x?x32xf32>, %[[N:.*]]: index) -> (memref<1x2x?x32xf32>, memref<?xf32>, index) {
// CHECK: %[[A1:.*]] = memref.alloca() : memref<1xf32>
// CHECK: %[[PH1:.*]] = memref.reinterpret_cast %[[A1]] to offset: [0], sizes: [1, 2, %{{.*}}, 32]
// CHECK: %[[PH2:.*]] = memref.reinterpret_cast
// CHECK: %[[FALSE:.*]] = arith.constant false
// CHECK: %[[ALL:.*]]:3 = call @rope_shared(%[[X]], %[[N]], %[[PH1]], %[[PH2]], %[[FALSE]])
// CHECK: return %[[ALL]]#0, %[[ALL]]#1, %[[ALL]]#2
// @rope_into: outputs after the arguments; scalar results stay results.
// CHECK-LABEL: func.func @rope_into(
// CHECK-SAME: %[[X:.*]]: memref<1x2x?x32xf32>, %[[N:.*]]: index, %[[OUT:.*]]: memref<1x2x?x32xf32>, %[[OUT2:.*]]: memref<?xf32>) -> index attributes {pe.outputs = 2 : i64}
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: %[[ALL:.*]]:3 = call @rope_shared(%[[X]], %[[N]], %[[OUT]], %[[OUT2]], %[[TRUE]])
// CHECK: return %[[ALL]]#2 : index
func.func @rope(%x: memref<1x2x?x32xf32>, %n: index) -> (memref<1x2x?x32xf32>, memref<?xf32>, index) {
  %a = memref.alloc(%n) {alignment = 64 : i64} : memref<1x2x?x32xf32>
  %b = memref.alloc(%n) : memref<?xf32>
  return %a, %b, %n : memref<1x2x?x32xf32>, memref<?xf32>, index
}

// A result that is not an allocation of the function is copied where
// `into` holds (static sizes are checked at the C boundary).
// CHECK-LABEL: func.func private @passthrough_shared(
// CHECK-SAME: %[[A:.*]]: memref<4xf32>, %[[O:.*]]: memref<4xf32>, %[[INTO:.*]]: i1) -> memref<4xf32>
// CHECK-NEXT: scf.if %[[INTO]] {
// CHECK-NEXT: memref.copy %[[A]], %[[O]]
// CHECK: return %[[A]]
// CHECK-LABEL: func.func @passthrough_into(
// CHECK-SAME: %[[A:.*]]: memref<4xf32>, %[[O:.*]]: memref<4xf32>) attributes {pe.outputs = 1 : i64}
// CHECK: call @passthrough_shared(%[[A]], %[[O]], %{{.*}})
func.func @passthrough(%x: memref<4xf32>) -> memref<4xf32> {
  return %x : memref<4xf32>
}

// A result returned twice: the second output is a copy of the first
// result's buffer.
// CHECK-LABEL: func.func private @twice_shared(
// CHECK-SAME: %[[O1:[^:]*]]: memref<4xf32>, %[[O2:[^:]*]]: memref<4xf32>, %[[INTO:.*]]: i1)
// CHECK: %[[BUF:.*]] = scf.if %[[INTO]] -> (memref<4xf32>) {
// CHECK: scf.if %[[INTO]] {
// CHECK-NEXT: memref.copy %[[BUF]], %[[O2]]
// CHECK: return %[[BUF]], %[[BUF]]
func.func @twice() -> (memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  return %a, %a : memref<4xf32>, memref<4xf32>
}

// @f_into keeps @f's attributes: the KV caches it updates in place.
// CHECK-LABEL: func.func @append_into(
// CHECK-SAME: attributes {pe.in_place_arguments = array<i64: 0>, pe.outputs = 1 : i64}
func.func @append(%cache: memref<4xf32>, %x: memref<4xf32>) -> memref<4xf32> attributes {pe.in_place_arguments = array<i64: 0>} {
  return %x : memref<4xf32>
}

// Private functions get no entry.
// CHECK-NOT: @helper_into
func.func private @helper(%x: memref<4xf32>) -> memref<4xf32> {
  return %x : memref<4xf32>
}
