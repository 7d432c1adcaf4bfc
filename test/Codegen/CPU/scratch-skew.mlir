// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=skylake-avx512" --pe-tile-attention | FileCheck %s

// The kernels' stack scratch: each buffer is a view of its own byte
// buffer, starting 5 i mod 16 cache lines past its start (the i-th buffer
// of the kernel), so that buffers whose sizes are multiples of 4 KiB do
// not all start at one offset modulo 4 KiB (4K aliasing between the
// loads of one and the stores of another).
// CHECK-LABEL: func.func private @pe_attention_kernel
// CHECK: %[[B0:.*]] = memref.alloca() {alignment = 64 : i64} : memref<[[N0:[0-9]+]]xi8>
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: memref.view %[[B0]][%[[C0]]][] : memref<[[N0]]xi8> to memref<
// CHECK-NEXT: %[[B1:.*]] = memref.alloca() {alignment = 64 : i64} : memref<[[N1:[0-9]+]]xi8>
// CHECK-NEXT: %[[C320:.*]] = arith.constant 320 : index
// CHECK-NEXT: memref.view %[[B1]][%[[C320]]][] : memref<[[N1]]xi8> to memref<
// CHECK-NEXT: %[[B2:.*]] = memref.alloca() {alignment = 64 : i64} : memref<[[N2:[0-9]+]]xi8>
// CHECK-NEXT: %[[C640:.*]] = arith.constant 640 : index
// CHECK-NEXT: memref.view %[[B2]][%[[C640]]][] : memref<[[N2]]xi8> to memref<
func.func @prefill(%q: tensor<1x8x256x64xf32>, %k: tensor<1x2x256x64xf32>) -> tensor<1x8x256x64xf32> {
  %o = pe.attention %q, %k, %k causal : tensor<1x8x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32> -> tensor<1x8x256x64xf32>
  return %o : tensor<1x8x256x64xf32>
}
