// RUN: pe-opt %s --pe-cpu-pipeline --pe-export-c-interface=prefix=k_ | FileCheck %s
// RUN: not pe-opt %s --pe-cpu-pipeline --pe-export-c-interface=prefix=2k -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PREFIX

// Only the checked entries and last_error are exported; the functions, their
// C wrappers and the runtime call wrappers become internal.
// CHECK-DAG: llvm.func internal @rope(
// CHECK-DAG: llvm.func internal @_mlir_ciface_rope(
// CHECK-DAG: llvm.func internal @count(
// CHECK-DAG: llvm.func internal @pe_runtime_size_mismatch(
// CHECK-DAG: llvm.func @pe_runtime_call(!llvm.ptr, !llvm.ptr) -> i32
// CHECK-DAG: llvm.func @pe_runtime_argument_error(!llvm.ptr, i64, i64, i64, i64, i64) -> i32

// The entry of @rope: the static size of dimension 1 (operand 0, kind 0),
// the dynamic one non-negative (kind 4), dense strides (kind 1), offset 0
// (kind 2), a data pointer (kind 3); then the kernel through
// pe_runtime_call, whose status it returns.
// CHECK-LABEL: llvm.func @k_rope(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %[[X:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32
// CHECK: llvm.getelementptr %[[X]][0, 3, 1]
// CHECK: %[[HEADS:.*]] = llvm.mlir.constant(2 : i64)
// CHECK: llvm.icmp "ne" %{{.*}}, %[[HEADS]]
// CHECK: llvm.getelementptr %[[X]][0, 3, 2]
// CHECK: llvm.icmp "slt"
// CHECK: llvm.getelementptr %[[X]][0, 4, 3]
// CHECK: llvm.getelementptr %[[X]][0, 2]
// CHECK: llvm.getelementptr %[[X]][0, 1]
// CHECK: %[[BODY:.*]] = llvm.mlir.addressof @__pe_body_k_rope
// CHECK: %[[STATUS:.*]] = llvm.call @pe_runtime_call(%[[BODY]], %{{.*}})
// CHECK: llvm.return %[[STATUS]] : i32
// CHECK: llvm.call @pe_runtime_argument_error(
// A scalar result goes through a leading pointer.
// CHECK-LABEL: llvm.func internal @__pe_body_k_count(
// CHECK: %[[N:.*]] = llvm.call @_mlir_ciface_count(
// CHECK: llvm.store %[[N]], %{{.*}} {alignment = 1 : i64} : i64, !llvm.ptr
// CHECK-LABEL: llvm.func @k_count(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32
// CHECK-LABEL: llvm.func @k_last_error() -> !llvm.ptr
// CHECK: llvm.call @pe_runtime_last_error()

// PREFIX: error: pe-export-c-interface: the prefix '2k' is not a C identifier

func.func @rope(%x: tensor<1x2x?x32xf32>, %p: tensor<?xi64>) -> tensor<1x2x?x32xf32> {
  %y = pe.rope #pe.rope<rotary_dim = 32> %x, %p : tensor<1x2x?x32xf32>, tensor<?xi64>
  return %y : tensor<1x2x?x32xf32>
}

func.func @count(%x: tensor<?xf32>) -> index {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  return %n : index
}
