// The stock mlir-opt raises generic attention (batch_matmul, scale,
// linalg.softmax, batch_matmul) into pe.attention with the plugin's pass.
// REQUIRES: plugin
// RUN: mlir-opt %s --load-dialect-plugin=%pe_libs/libPEPlugin%shlibext \
// RUN:   --load-pass-plugin=%pe_libs/libPEPlugin%shlibext \
// RUN:   --pass-pipeline="builtin.module(pe-raise-positional-encodings)" | FileCheck %s

// CHECK-LABEL: func @attention
//       CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} scale(2.500000e-01) : tensor<1x3x4x16xf32>
//   CHECK-NOT: linalg.softmax
func.func @attention(%q: tensor<3x4x16xf32>, %kt: tensor<3x16x4xf32>, %v: tensor<3x4x16xf32>) -> tensor<3x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<3x4x4xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<3x4x4xf32>) -> tensor<3x4x4xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<3x4x16xf32>, tensor<3x16x4xf32>) outs(%zs : tensor<3x4x4xf32>) -> tensor<3x4x4xf32>
  %quarter = arith.constant 0.25 : f32
  %sc = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<3x4x4xf32>) outs(%es : tensor<3x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %quarter : f32
    linalg.yield %m : f32
  } -> tensor<3x4x4xf32>
  %p = linalg.softmax dimension(2) ins(%sc : tensor<3x4x4xf32>) outs(%es : tensor<3x4x4xf32>) -> tensor<3x4x4xf32>
  %eo = tensor.empty() : tensor<3x4x16xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<3x4x16xf32>) -> tensor<3x4x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<3x4x4xf32>, tensor<3x4x16xf32>) outs(%zo : tensor<3x4x16xf32>) -> tensor<3x4x16xf32>
  return %o : tensor<3x4x16xf32>
}
