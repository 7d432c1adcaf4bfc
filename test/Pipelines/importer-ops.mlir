// What importers emit and the pe ops do not cover compiles as it is: a
// linalg.softmax (decomposed) and i1 tensors (vector loads and stores of i1
// move bytes, the layout of an i1 memref).
// RUN: pe-opt %s --pe-cpu-pipeline="target-triple=x86_64-linux-gnu target-cpu=znver4" | FileCheck %s --check-prefix=CHECK-CPU
// RUN: pe-opt %s --pe-gpu-pipeline | FileCheck %s --check-prefix=CHECK-GPU

// CHECK-CPU-NOT: linalg.softmax
// CHECK-CPU-NOT: unrealized_conversion_cast
// CHECK-CPU-LABEL: llvm.func @masked_softmax
// CHECK-CPU-NOT: vector<{{[0-9]+}}xi1>, !llvm.ptr
// CHECK-CPU-NOT: !llvm.ptr -> vector<{{[0-9]+}}xi1>
// CHECK-CPU: llvm.load {{.*}} : !llvm.ptr -> vector<16xi8>
// CHECK-CPU: llvm.icmp "ne"
// CHECK-CPU: llvm.intr.exp
// CHECK-CPU-LABEL: llvm.func @_mlir_ciface_masked_softmax

// CHECK-GPU-NOT: linalg.softmax
// CHECK-GPU-LABEL: llvm.func @masked_softmax
// CHECK-GPU: gpu.binary

#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @masked_softmax(%x: tensor<8x8xf32>, %keep: tensor<8x8xi1>) -> tensor<8x8xf32> {
  %min = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %m = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%keep, %x : tensor<8x8xi1>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%k: i1, %v: f32, %o: f32):
    %s = arith.select %k, %v, %min : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  %s = linalg.softmax dimension(1) ins(%m : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}
