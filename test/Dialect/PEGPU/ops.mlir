// RUN: pe-opt %s | pe-opt | FileCheck %s

// pe_gpu.mma_attention prints what it parses: every optional group, the
// decode partials and the rope attribute (round trip through the printer).

// CHECK-LABEL: func.func @prefill
// CHECK: pe_gpu.mma_attention %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} positions(%{{.*}}, %{{.*}}) tables(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : memref<?x32xf32>, memref<?x32xf32>, memref<?x32xf32>, memref<?x32xf32>) slopes(%{{.*}} : memref<8xf32>) scale(1.250000e-01) causal window(4096) rope(#pe.rope<rotary_dim = 64>) : memref<1x8x?x64xbf16>, memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x8x?x64xbf16>
func.func @prefill(%q: memref<1x8x?x64xbf16>, %k: memref<1x2x?x64xbf16>, %v: memref<1x2x?x64xbf16>,
                   %p: memref<?xi64>, %t: memref<?x32xf32>, %s: memref<8xf32>,
                   %o: memref<1x8x?x64xbf16>) {
  pe_gpu.mma_attention %q, %k, %v into %o positions(%p, %p)
    tables(%t, %t, %t, %t : memref<?x32xf32>, memref<?x32xf32>, memref<?x32xf32>, memref<?x32xf32>)
    slopes(%s : memref<8xf32>) scale(0.125) causal window(4096) rope(#pe.rope<rotary_dim = 64>)
    : memref<1x8x?x64xbf16>, memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x8x?x64xbf16>
  return
}

// CHECK-LABEL: func.func @decode
// CHECK: pe_gpu.mma_attention {{.*}} splits(%{{.*}}) partials(%{{.*}}, %{{.*}} : memref<1x4x1x?x64xf32>, memref<1x4x1x?x2xf32>) scale(1.250000e-01) softcap(3.000000e+01) : memref<1x4x1x64xf16>
func.func @decode(%q: memref<1x4x1x64xf16>, %k: memref<1x4x?x64xf16>, %v: memref<1x4x?x64xf16>,
                  %qp: memref<1xi32>, %kp: memref<?xi32>, %o: memref<1x4x1x64xf16>, %n: index,
                  %po: memref<1x4x1x?x64xf32>, %ps: memref<1x4x1x?x2xf32>) {
  pe_gpu.mma_attention %q, %k, %v into %o positions(%qp, %kp) splits(%n)
    partials(%po, %ps : memref<1x4x1x?x64xf32>, memref<1x4x1x?x2xf32>) scale(0.125) softcap(30.0)
    : memref<1x4x1x64xf16>, memref<1x4x?x64xf16>, memref<1x4x?x64xf16>, memref<1xi32>, memref<?xi32> -> memref<1x4x1x64xf16>
  return
}
