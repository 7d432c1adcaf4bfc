// Logit soft-capping, c tanh(s / c) of the scaled scores, in every lowering
// of pe.attention: the CPU kernel (the tanh as upstream's rational
// approximation in vector code: no math.tanh left for a libm call per
// lane), the reference lowering (math.tanh, a libm call), the GPU SIMT
// kernel (math.tanh, expanded by the GPU math lowering) and the tensor-core
// op, which carries the cap to its kernel. Numerics: python/tests/test_softcap.py.
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=sapphirerapids" --pe-tile-attention | FileCheck %s --check-prefix=CHECK-CPU
// RUN: pe-opt %s --pe-lower-to-linalg | FileCheck %s --check-prefix=CHECK-LINALG
// RUN: pe-opt %s --pe-gpu-tile-attention | FileCheck %s --check-prefix=CHECK-SIMT
// RUN: pe-opt %s --pe-gpu-tile-attention=tensor-cores | FileCheck %s --check-prefix=CHECK-MMA

// CHECK-CPU-LABEL: func.func private @pe_attention_kernel
// CHECK-CPU-NOT: math.tanh
// CHECK-CPU: %[[CAP:.*]] = arith.constant dense<5.000000e+01> : vector<16xf32>
// CHECK-CPU: arith.divf %{{.*}}, %[[CAP]] : vector<16xf32>
// CHECK-CPU-NOT: math.tanh
// CHECK-CPU: arith.mulf %[[CAP]], %{{.*}} : vector<16xf32>
// CHECK-CPU-NOT: math.tanh
// CHECK-CPU: return

// CHECK-LINALG-LABEL: func.func @softcap
// CHECK-LINALG: %[[S:.*]] = arith.mulf %out, %{{.*}} : f32
// CHECK-LINALG-NEXT: %[[C:.*]] = arith.constant 5.000000e+01 : f32
// CHECK-LINALG-NEXT: %[[D:.*]] = arith.divf %[[S]], %[[C]] : f32
// CHECK-LINALG-NEXT: %[[T:.*]] = math.tanh %[[D]] : f32
// CHECK-LINALG-NEXT: arith.mulf %[[C]], %[[T]] : f32

// CHECK-SIMT: %[[C:.*]] = arith.constant 5.000000e+01 : f32
// CHECK-SIMT-NEXT: %[[D:.*]] = arith.divf %{{.*}}, %[[C]] : f32
// CHECK-SIMT-NEXT: %[[T:.*]] = math.tanh %[[D]] : f32
// CHECK-SIMT-NEXT: arith.mulf %[[C]], %[[T]] : f32

// CHECK-MMA: pe_gpu.mma_attention {{.*}} scale(1.250000e-01) causal softcap(5.000000e+01)
func.func @softcap(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x2x?x64xbf16>, %v: tensor<1x2x?x64xbf16>) -> tensor<1x8x?x64xbf16> {
  %o = pe.attention %q, %k, %v causal softcap(50.0) : tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x8x?x64xbf16>
  return %o : tensor<1x8x?x64xbf16>
}
