// RUN: pe-opt %s --pe-set-llvm-target="cpu=znver4 features=+avx512f,+avx512bf16" | FileCheck %s
// RUN: pe-opt %s --pe-set-llvm-target="cpu=znver4 features=+avx512f,+avx512bf16" | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=CHECK-LLVM
// RUN: pe-opt %s --pe-set-llvm-target | FileCheck %s --check-prefix=CHECK-NONE
// RUN: pe-opt %s --pe-set-llvm-target="features=+avx2" | FileCheck %s --check-prefix=CHECK-FEATURES

// What pe-set-llvm-target guarantees: every llvm.func (definitions and
// declarations) carries the target CPU and features, so that LLVM IR
// translated from the module generates code for that CPU; empty options
// change nothing.

// CHECK-LABEL: llvm.func @kernel
// CHECK-SAME: target_cpu = "znver4"
// CHECK-SAME: target_features = #llvm.target_features<["+avx512f", "+avx512bf16"]>
// CHECK-LABEL: llvm.func @external
// CHECK-SAME: target_cpu = "znver4"
// CHECK-LLVM: define void @kernel() #[[ATTRS:[0-9]+]]
// CHECK-LLVM: attributes #[[ATTRS]] = { "target-cpu"="znver4" "target-features"="+avx512f,+avx512bf16" }
// CHECK-NONE-NOT: target_cpu
// CHECK-NONE-NOT: target_features
// CHECK-FEATURES: llvm.func @kernel() attributes {target_features = #llvm.target_features<["+avx2"]>}
// CHECK-FEATURES-NOT: target_cpu
llvm.func @kernel() {
  llvm.return
}
llvm.func @external()
