// pe-raise-positional-encodings{verify}: every rewrite is checked by running
// the function before and after it (CPU pipeline, JIT, random inputs).
// RUN: pe-opt %s --pe-raise-positional-encodings=verify 2>&1 | FileCheck %s --check-prefix=CHECK-CHECKED
// RUN: pe-opt %s --pe-raise-positional-encodings="verify verify-tolerance=0" 2>&1 | FileCheck %s --check-prefix=CHECK-EXACT

// Within the default tolerance (1e-4 of the largest result): raised. With
// tolerance 0 the rounding of the online softmax (which differs from the
// generic one in the last bits) is a difference: refused, with a remark
// giving it, and the function is left as it was.

// CHECK-CHECKED-NOT: remark
// CHECK-CHECKED-LABEL: func.func @gqa_attention
// CHECK-CHECKED: pe.attention

// CHECK-EXACT: remark: not raised: the raised form differs from the original by {{[0-9.e-]+}} (relative; tolerance 0{{.*}}) on random inputs
// CHECK-EXACT-LABEL: func.func @gqa_attention
// CHECK-EXACT-NOT: pe.attention
#q4 = affine_map<(b, h, i, j, d) -> (b, i, h, d)>
#k4 = affine_map<(b, h, i, j, d) -> (b, j, h, d)>
#s4 = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#x = affine_map<(b, h, i, j) -> (b, h, i, j)>
#mask = affine_map<(b, h, i, j) -> (i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i, 0)>
#v4 = affine_map<(b, h, i, e, j) -> (b, j, h, e)>
#p4 = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#o4 = affine_map<(b, h, i, e, j) -> (b, i, h, e)>
#rep_in = affine_map<(b, s, g, n, d) -> (b, s, g, d)>
#rep_out = affine_map<(b, s, g, n, d) -> (b, s, g, n, d)>

func.func @gqa_attention(%q: tensor<2x4x4x8xf32>, %k: tensor<2x4x2x8xf32>, %v: tensor<2x4x2x8xf32>, %mask: tensor<4x4xf32>) -> tensor<2x4x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.353553385 : f32
  // repeat_kv: [B, S, 2, D] -> [B, S, 2, 2, D] -> [B, S, 4, D]
  %er = tensor.empty() : tensor<2x4x2x2x8xf32>
  %kr = linalg.generic {indexing_maps = [#rep_in, #rep_out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<2x4x2x8xf32>) outs(%er : tensor<2x4x2x2x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x4x2x2x8xf32>
  %kx = tensor.collapse_shape %kr [[0], [1], [2, 3], [4]] : tensor<2x4x2x2x8xf32> into tensor<2x4x4x8xf32>
  %vr = linalg.generic {indexing_maps = [#rep_in, #rep_out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%v : tensor<2x4x2x8xf32>) outs(%er : tensor<2x4x2x2x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x4x2x2x8xf32>
  %vx = tensor.collapse_shape %vr [[0], [1], [2, 3], [4]] : tensor<2x4x2x2x8xf32> into tensor<2x4x4x8xf32>
  %es = tensor.empty() : tensor<2x4x4x4xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %s = linalg.generic {indexing_maps = [#q4, #k4, #s4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kx : tensor<2x4x4x8xf32>, tensor<2x4x4x8xf32>) outs(%zs : tensor<2x4x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<2x4x4x4xf32>
  %x = linalg.generic {indexing_maps = [#x, #mask, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x4x4x4xf32>, tensor<4x4xf32>) outs(%es : tensor<2x4x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %scale : f32
    %y = arith.addf %m, %b : f32
    linalg.yield %y : f32
  } -> tensor<2x4x4x4xf32>
  %er1 = tensor.empty() : tensor<2x4x4x1xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%er1 : tensor<2x4x4x1xf32>) -> tensor<2x4x4x1xf32>
  %max = linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x4x4x4xf32>) outs(%mi : tensor<2x4x4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<2x4x4x1xf32>
  %ex = linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %max : tensor<2x4x4x4xf32>, tensor<2x4x4x1xf32>) outs(%es : tensor<2x4x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x4x4x4xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%er1 : tensor<2x4x4x1xf32>) -> tensor<2x4x4x1xf32>
  %sum = linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x4x4x4xf32>) outs(%z1 : tensor<2x4x4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<2x4x4x1xf32>
  %p = linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x4x4x4xf32>, tensor<2x4x4x1xf32>) outs(%es : tensor<2x4x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<2x4x4x4xf32>
  %eo = tensor.empty() : tensor<2x4x4x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32>
  %o = linalg.generic {indexing_maps = [#p4, #v4, #o4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %vx : tensor<2x4x4x4xf32>, tensor<2x4x4x8xf32>) outs(%zo : tensor<2x4x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<2x4x4x8xf32>
  return %o : tensor<2x4x4x8xf32>
}
