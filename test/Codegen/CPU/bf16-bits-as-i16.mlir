// Ops that only move bf16 bits move i16 in the LLVM dialect.
// RUN: pe-opt %s --pe-bf16-bits-as-i16 | FileCheck %s

// CHECK-LABEL: llvm.func @masked_store
// CHECK: %[[BITS:.*]] = llvm.bitcast %{{.*}} : vector<8xbf16> to vector<8xi16>
// CHECK: llvm.intr.masked.store %[[BITS]], %{{.*}}, %{{.*}} {alignment = 2 : i32} : vector<8xi16>, vector<8xi1> into !llvm.ptr
llvm.func @masked_store(%v: vector<8xbf16>, %p: !llvm.ptr, %m: vector<8xi1>) {
  llvm.intr.masked.store %v, %p, %m {alignment = 2 : i32} : vector<8xbf16>, vector<8xi1> into !llvm.ptr
  llvm.return
}

// CHECK-LABEL: llvm.func @select
// CHECK: %[[SEL:.*]] = llvm.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xi16>
// CHECK: llvm.bitcast %[[SEL]] : vector<8xi16> to vector<8xbf16>
llvm.func @select(%c: vector<8xi1>, %a: vector<8xbf16>, %b: vector<8xbf16>) -> vector<8xbf16> {
  %s = llvm.select %c, %a, %b : vector<8xi1>, vector<8xbf16>
  llvm.return %s : vector<8xbf16>
}

// Arithmetic is left alone.
// CHECK-LABEL: llvm.func @arithmetic
// CHECK: llvm.fadd %{{.*}}, %{{.*}} : bf16
llvm.func @arithmetic(%a: bf16) -> bf16 {
  %s = llvm.fadd %a, %a : bf16
  llvm.return %s : bf16
}
