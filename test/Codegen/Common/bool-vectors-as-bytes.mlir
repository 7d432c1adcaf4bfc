// i1 vectors move through memory as bytes: an i1 memref holds one byte per
// element, an LLVM <N x i1> vector N bits.
// RUN: pe-opt %s --pe-bool-vectors-as-bytes | FileCheck %s

// CHECK-LABEL: llvm.func @load
// CHECK-SAME: (%[[P:.*]]: !llvm.ptr)
// CHECK: %[[BYTES:.*]] = llvm.load %[[P]] {alignment = 1 : i64} : !llvm.ptr -> vector<8xi8>
// CHECK: %[[ZERO:.*]] = llvm.mlir.zero : vector<8xi8>
// CHECK: %[[BITS:.*]] = llvm.icmp "ne" %[[BYTES]], %[[ZERO]] : vector<8xi8>
// CHECK: llvm.return %[[BITS]] : vector<8xi1>
llvm.func @load(%p: !llvm.ptr) -> vector<8xi1> {
  %v = llvm.load %p {alignment = 1 : i64} : !llvm.ptr -> vector<8xi1>
  llvm.return %v : vector<8xi1>
}

// CHECK-LABEL: llvm.func @store
// CHECK-SAME: (%[[P:.*]]: !llvm.ptr, %[[V:.*]]: vector<4xi1>)
// CHECK: %[[BYTES:.*]] = llvm.zext %[[V]] : vector<4xi1> to vector<4xi8>
// CHECK: llvm.store %[[BYTES]], %[[P]] : vector<4xi8>, !llvm.ptr
llvm.func @store(%p: !llvm.ptr, %v: vector<4xi1>) {
  llvm.store %v, %p : vector<4xi1>, !llvm.ptr
  llvm.return
}

// The mask of a masked load or store stays a mask; the data are bytes.
// CHECK-LABEL: llvm.func @masked
// CHECK-SAME: (%[[P:.*]]: !llvm.ptr, %[[M:.*]]: vector<4xi1>, %[[PASS:.*]]: vector<4xi1>)
// CHECK: %[[PASSB:.*]] = llvm.zext %[[PASS]] : vector<4xi1> to vector<4xi8>
// CHECK: %[[LOADED:.*]] = llvm.intr.masked.load %[[P]], %[[M]], %[[PASSB]] {alignment = 1 : i32} : (!llvm.ptr, vector<4xi1>, vector<4xi8>) -> vector<4xi8>
// CHECK: %[[BITS:.*]] = llvm.icmp "ne" %[[LOADED]], %{{.*}} : vector<4xi8>
// CHECK: %[[STORED:.*]] = llvm.zext %[[BITS]] : vector<4xi1> to vector<4xi8>
// CHECK: llvm.intr.masked.store %[[STORED]], %[[P]], %[[M]] {alignment = 1 : i32} : vector<4xi8>, vector<4xi1> into !llvm.ptr
llvm.func @masked(%p: !llvm.ptr, %m: vector<4xi1>, %pass: vector<4xi1>) {
  %v = llvm.intr.masked.load %p, %m, %pass {alignment = 1 : i32} : (!llvm.ptr, vector<4xi1>, vector<4xi1>) -> vector<4xi1>
  llvm.intr.masked.store %v, %p, %m {alignment = 1 : i32} : vector<4xi1>, vector<4xi1> into !llvm.ptr
  llvm.return
}

// Other element types and scalar i1 are left alone.
// CHECK-LABEL: llvm.func @others
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> i1
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> vector<8xi8>
// CHECK-NOT: llvm.icmp
// CHECK-NOT: llvm.zext
llvm.func @others(%p: !llvm.ptr) -> vector<8xi8> {
  %s = llvm.load %p : !llvm.ptr -> i1
  llvm.store %s, %p : i1, !llvm.ptr
  %v = llvm.load %p : !llvm.ptr -> vector<8xi8>
  llvm.return %v : vector<8xi8>
}
