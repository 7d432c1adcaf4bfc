// Attention sinks, one logit per query head in the softmax's denominator, in
// every lowering of pe.attention: the CPU kernel (each row's state starts
// at m = sink, l = exp(sink - m), in the first split of its keys only), the
// reference lowering (the row max starts at the sink, the row sum at
// exp(sink - max)), the GPU SIMT kernel (the same start of its state), and
// the tensor-core kernel (pe_gpu.mma_attention takes the sinks; its start is
// checked in test/Codegen/GPU/gpu-mma-attention.mlir). Numerics:
// python/tests/test_sinks.py (and the GPU check for the tensor cores).
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=sapphirerapids" --pe-tile-attention=threads=2 | FileCheck %s --check-prefix=CHECK-CPU
// RUN: pe-opt %s --pe-lower-to-linalg | FileCheck %s --check-prefix=CHECK-LINALG
// RUN: pe-opt %s --pe-gpu-tile-attention | FileCheck %s --check-prefix=CHECK-SIMT
// RUN: pe-opt %s --pe-gpu-tile-attention=tensor-cores | FileCheck %s --check-prefix=CHECK-MMA

// The kernel takes the sinks after the positions; a row's head is
// kvh * group + r mod group.
// CHECK-CPU-LABEL: func.func @sinks
// CHECK-CPU: %[[S:.*]] = bufferization.to_buffer %arg3 read_only : tensor<8xbf16> to memref<8xbf16>
// CHECK-CPU: call @pe_attention_kernel(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[S]], %{{.*}})
// CHECK-CPU: func.func private @pe_attention_kernel(
// CHECK-CPU-SAME: %[[SINKS:[^:]*]]: memref<8xbf16>
// CHECK-CPU: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}, %[[SPLIT:.*]]) =
// CHECK-CPU: %[[FIRST:.*]] = arith.cmpi eq, %[[SPLIT]], %c0
// CHECK-CPU: scf.if %[[FIRST]] {
// CHECK-CPU: arith.remui %{{.*}}, %c4
// CHECK-CPU: memref.load %[[SINKS]][%{{.*}}] : memref<8xbf16>
// CHECK-CPU: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<16xf32>

// CHECK-LINALG-LABEL: func.func @sinks
// CHECK-LINALG: tensor.expand_shape %arg3 {{\[\[}}0, 1]] output_shape [2, 4] : tensor<8xbf16> into tensor<2x4xbf16>
// CHECK-LINALG: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x4xbf16>) outs(%{{.*}} : tensor<1x2x4x?xf32>)
// CHECK-LINALG: arith.extf %{{.*}} : bf16 to f32
// CHECK-LINALG: arith.maxnumf %out, %in
// CHECK-LINALG: tensor.expand_shape %arg3
// CHECK-LINALG: math.exp
// CHECK-LINALG: arith.addf

// CHECK-MMA-LABEL: func.func @sinks
// CHECK-MMA: pe_gpu.mma_attention {{.*}} sinks(%{{.*}} : memref<8xbf16>)

// CHECK-SIMT-LABEL: func.func @sinks
// CHECK-SIMT-NOT: pe_gpu.mma_attention
// CHECK-SIMT: memref.load %{{.*}}[%{{.*}}] : memref<8xbf16>
// CHECK-SIMT: arith.select %{{.*}}, %{{.*}}, %cst
func.func @sinks(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x2x?x64xbf16>, %v: tensor<1x2x?x64xbf16>, %s: tensor<8xbf16>) -> tensor<1x8x?x64xbf16> {
  %o = pe.attention %q, %k, %v sinks(%s : tensor<8xbf16>) causal : tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x8x?x64xbf16>
  return %o : tensor<1x8x?x64xbf16>
}
