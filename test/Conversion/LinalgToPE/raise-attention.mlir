// RUN: pe-opt %s --pe-raise-positional-encodings -split-input-file | FileCheck %s

// batch x heads merged ([BH, S, D], as torch.matmul becomes batch_matmul),
// K transposed by linalg.transpose, the scale a division, linalg.softmax.

#m = affine_map<(b, i, j) -> (b, i, j)>

// CHECK-LABEL: func @batch_matmul_softmax
//       CHECK: %[[A:.*]] = pe.attention %{{.*}}, %{{.*}}, %{{.*}} scale(2.500000e-01) : tensor<1x3x4x16xf32>, tensor<1x3x4x16xf32>, tensor<1x3x4x16xf32> -> tensor<1x3x4x16xf32>
//       CHECK: %[[O:.*]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1], [2], [3]] : tensor<1x3x4x16xf32> into tensor<3x4x16xf32>
//       CHECK: return %[[O]]
func.func @batch_matmul_softmax(%q: tensor<3x4x16xf32>, %k: tensor<3x4x16xf32>, %v: tensor<3x4x16xf32>) -> tensor<3x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %ekt = tensor.empty() : tensor<3x16x4xf32>
  %kt = linalg.transpose ins(%k : tensor<3x4x16xf32>) outs(%ekt : tensor<3x16x4xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<3x4x4xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<3x4x4xf32>) -> tensor<3x4x4xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<3x4x16xf32>, tensor<3x16x4xf32>) outs(%zs : tensor<3x4x4xf32>) -> tensor<3x4x4xf32>
  %sc = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<3x4x4xf32>) outs(%es : tensor<3x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.divf %a, %four : f32
    linalg.yield %d : f32
  } -> tensor<3x4x4xf32>
  %p = linalg.softmax dimension(2) ins(%sc : tensor<3x4x4xf32>) outs(%es : tensor<3x4x4xf32>) -> tensor<3x4x4xf32>
  %eo = tensor.empty() : tensor<3x4x16xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<3x4x16xf32>) -> tensor<3x4x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<3x4x4xf32>, tensor<3x4x16xf32>) outs(%zo : tensor<3x4x16xf32>) -> tensor<3x4x16xf32>
  return %o : tensor<3x4x16xf32>
}

// -----

// Near miss: the softmax runs over the queries (dim 1), not the keys.

#m = affine_map<(b, i, j) -> (b, i, j)>

// CHECK-LABEL: func @softmax_over_queries
//   CHECK-NOT: pe.attention
func.func @softmax_over_queries(%q: tensor<3x4x16xf32>, %kt: tensor<3x16x4xf32>, %v: tensor<3x4x16xf32>) -> tensor<3x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<3x4x4xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<3x4x4xf32>) -> tensor<3x4x4xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<3x4x16xf32>, tensor<3x16x4xf32>) outs(%zs : tensor<3x4x4xf32>) -> tensor<3x4x4xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<3x4x4xf32>) outs(%es : tensor<3x4x4xf32>) -> tensor<3x4x4xf32>
  %eo = tensor.empty() : tensor<3x4x16xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<3x4x16xf32>) -> tensor<3x4x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<3x4x4xf32>, tensor<3x4x16xf32>) outs(%zo : tensor<3x4x16xf32>) -> tensor<3x4x16xf32>
  return %o : tensor<3x4x16xf32>
}

// -----

// BSHD tensors, GQA by repeat_kv (broadcast of 2 KV heads to 4 + reshape),
// generic contractions, the softmax spelled max / sub / exp / sum / div
// with keep-dim reductions, an additive [S, S] mask.

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

// CHECK-LABEL: func @bshd_gqa_decomposed_softmax
//  CHECK-SAME: (%[[Q:.*]]: tensor<2x4x4x8xf32>, %[[K:.*]]: tensor<2x4x2x8xf32>, %[[V:.*]]: tensor<2x4x2x8xf32>, %[[M:.*]]: tensor<4x4xf32>)
//   CHECK-DAG: %[[QT:.*]] = linalg.transpose ins(%[[Q]] : tensor<2x4x4x8xf32>) {{.*}} permutation = [0, 2, 1, 3]
//   CHECK-DAG: %[[KT:.*]] = linalg.transpose ins(%[[K]] : tensor<2x4x2x8xf32>) {{.*}} permutation = [0, 2, 1, 3]
//   CHECK-DAG: %[[VT:.*]] = linalg.transpose ins(%[[V]] : tensor<2x4x2x8xf32>) {{.*}} permutation = [0, 2, 1, 3]
//   CHECK-DAG: %[[M4:.*]] = tensor.expand_shape %[[M]]
//       CHECK: %[[A:.*]] = pe.attention %[[QT]], %[[KT]], %[[VT]] mask(%[[M4]] : tensor<1x1x4x4xf32>) scale(0.353553{{[0-9]*}}) : tensor<2x4x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32> -> tensor<2x4x4x8xf32>
//       CHECK: linalg.transpose ins(%[[A]] : tensor<2x4x4x8xf32>) {{.*}} permutation = [0, 2, 1, 3]
//   CHECK-NOT: math.exp
func.func @bshd_gqa_decomposed_softmax(%q: tensor<2x4x4x8xf32>, %k: tensor<2x4x2x8xf32>, %v: tensor<2x4x2x8xf32>, %mask: tensor<4x4xf32>) -> tensor<2x4x4x8xf32> {
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

// -----

// ALiBi (BLOOM-style): scores + slope[h] * (j - i) from loop indices, the
// slopes a constant of 4 heads (max_bias 8); BHSD; linalg.softmax.

#q4 = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k4 = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s4 = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#x = affine_map<(b, h, i, j) -> (b, h, i, j)>
#sl = affine_map<(b, h, i, j) -> (h)>
#v4 = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#p4 = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#o4 = affine_map<(b, h, i, e, j) -> (b, h, i, e)>

// CHECK-LABEL: func @alibi
//       CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) alibi(8.000000e+00)
func.func @alibi(%q: tensor<1x4x6x8xf32>, %k: tensor<1x4x6x8xf32>, %v: tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %slopes = arith.constant dense<[0.25, 0.0625, 0.015625, 0.00390625]> : tensor<4xf32>
  %es = tensor.empty() : tensor<1x4x6x6xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %s = linalg.generic {indexing_maps = [#q4, #k4, #s4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>) outs(%zs : tensor<1x4x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<1x4x6x6xf32>
  %x = linalg.generic {indexing_maps = [#x, #sl, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %slopes : tensor<1x4x6x6xf32>, tensor<4xf32>) outs(%es : tensor<1x4x6x6xf32>) {
  ^bb0(%a: f32, %slope: f32, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %ii = arith.index_cast %i : index to i64
    %ji = arith.index_cast %j : index to i64
    %d = arith.subi %ji, %ii : i64
    %df = arith.sitofp %d : i64 to f32
    %b = arith.mulf %slope, %df : f32
    %m = arith.mulf %a, %scale : f32
    %y = arith.addf %m, %b : f32
    linalg.yield %y : f32
  } -> tensor<1x4x6x6xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x6x6xf32>) outs(%es : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %eo = tensor.empty() : tensor<1x4x6x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>
  %o = linalg.generic {indexing_maps = [#p4, #v4, #o4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x6x6xf32>, tensor<1x4x6x8xf32>) outs(%zo : tensor<1x4x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<1x4x6x8xf32>
  return %o : tensor<1x4x6x8xf32>
}

// -----

// Near miss: ALiBi with the wrong sign, slope[h] * (i - j), rewards distance from loop indices, the
// slopes a constant of 4 heads (max_bias 8); BHSD; linalg.softmax.

#q4 = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k4 = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s4 = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#x = affine_map<(b, h, i, j) -> (b, h, i, j)>
#sl = affine_map<(b, h, i, j) -> (h)>
#v4 = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#p4 = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#o4 = affine_map<(b, h, i, e, j) -> (b, h, i, e)>

// CHECK-LABEL: func @alibi_wrong_sign
//   CHECK-NOT: pe.attention
func.func @alibi_wrong_sign(%q: tensor<1x4x6x8xf32>, %k: tensor<1x4x6x8xf32>, %v: tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %slopes = arith.constant dense<[0.25, 0.0625, 0.015625, 0.00390625]> : tensor<4xf32>
  %es = tensor.empty() : tensor<1x4x6x6xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %s = linalg.generic {indexing_maps = [#q4, #k4, #s4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>) outs(%zs : tensor<1x4x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<1x4x6x6xf32>
  %x = linalg.generic {indexing_maps = [#x, #sl, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %slopes : tensor<1x4x6x6xf32>, tensor<4xf32>) outs(%es : tensor<1x4x6x6xf32>) {
  ^bb0(%a: f32, %slope: f32, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %ii = arith.index_cast %i : index to i64
    %ji = arith.index_cast %j : index to i64
    %d = arith.subi %ii, %ji : i64
    %df = arith.sitofp %d : i64 to f32
    %b = arith.mulf %slope, %df : f32
    %m = arith.mulf %a, %scale : f32
    %y = arith.addf %m, %b : f32
    linalg.yield %y : f32
  } -> tensor<1x4x6x6xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x6x6xf32>) outs(%es : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %eo = tensor.empty() : tensor<1x4x6x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>
  %o = linalg.generic {indexing_maps = [#p4, #v4, #o4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x6x6xf32>, tensor<1x4x6x8xf32>) outs(%zo : tensor<1x4x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<1x4x6x8xf32>
  return %o : tensor<1x4x6x8xf32>
}

// -----

// A mask computed from the loop indices (what HF builds from cache
// positions): masked when j > i or i - j >= 3. Checked at every (i, j), it
// is causal with a window of 3 (the operands are not rotated).

#q4 = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k4 = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s4 = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#x = affine_map<(b, h, i, j) -> (b, h, i, j)>
#v4 = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#p4 = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#o4 = affine_map<(b, h, i, e, j) -> (b, h, i, e)>

// CHECK-LABEL: func @causal_window_from_indices
//       CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) causal window(3) :
//   CHECK-NOT: linalg.generic
func.func @causal_window_from_indices(%q: tensor<1x4x6x8xf32>, %k: tensor<1x4x6x8xf32>, %v: tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %es = tensor.empty() : tensor<1x4x6x6xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %s = linalg.generic {indexing_maps = [#q4, #k4, #s4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>) outs(%zs : tensor<1x4x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<1x4x6x6xf32>
  %x = linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x4x6x6xf32>) outs(%es : tensor<1x4x6x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %c3 = arith.constant 3 : index
    %ninf = arith.constant 0xFF800000 : f32
    %future = arith.cmpi ugt, %j, %i : index
    %d = arith.subi %i, %j : index
    %far = arith.cmpi sge, %d, %c3 : index
    %masked = arith.ori %future, %far : i1
    %b = arith.select %masked, %ninf, %zero : f32
    %m = arith.mulf %a, %scale : f32
    %y = arith.addf %m, %b : f32
    linalg.yield %y : f32
  } -> tensor<1x4x6x6xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x6x6xf32>) outs(%es : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %eo = tensor.empty() : tensor<1x4x6x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>
  %o = linalg.generic {indexing_maps = [#p4, #v4, #o4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x6x6xf32>, tensor<1x4x6x8xf32>) outs(%zo : tensor<1x4x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<1x4x6x8xf32>
  return %o : tensor<1x4x6x8xf32>
}

// -----

// The scores selected by an i1 mask (torch.where(mask, s, -inf), the mask
// from a comparison): raised with the additive mask select(mask, 0, -inf).

#q4 = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k4 = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s4 = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#x = affine_map<(b, h, i, j) -> (b, h, i, j)>
#sl = affine_map<(b, h, i, j) -> (i, j)>
#v4 = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#p4 = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#o4 = affine_map<(b, h, i, e, j) -> (b, h, i, e)>

// CHECK-LABEL: func @select_on_i1_mask
//       CHECK: %[[M:[0-9]+]] = linalg.generic {{.*}} ins(%{{[0-9]+}} : tensor<6x6xi1>)
//       CHECK:   arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
//       CHECK: %[[M4:.*]] = tensor.expand_shape %[[M]]
//       CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%[[M4]] : tensor<1x1x6x6xf32>) scale(1.250000e-01) :
func.func @select_on_i1_mask(%q: tensor<1x4x6x8xf32>, %k: tensor<1x4x6x8xf32>, %v: tensor<1x4x6x8xf32>, %keepf: tensor<6x6xf32>) -> tensor<1x4x6x8xf32> {
  %eb = tensor.empty() : tensor<6x6xi1>
  %keep = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%keepf : tensor<6x6xf32>) outs(%eb : tensor<6x6xi1>) {
  ^bb0(%a: f32, %o: i1):
    %z = arith.constant 0.0 : f32
    %c = arith.cmpf ogt, %a, %z : f32
    linalg.yield %c : i1
  } -> tensor<6x6xi1>
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %es = tensor.empty() : tensor<1x4x6x6xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %s = linalg.generic {indexing_maps = [#q4, #k4, #s4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>) outs(%zs : tensor<1x4x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<1x4x6x6xf32>
  %x = linalg.generic {indexing_maps = [#x, #sl, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %keep : tensor<1x4x6x6xf32>, tensor<6x6xi1>) outs(%es : tensor<1x4x6x6xf32>) {
  ^bb0(%a: f32, %kp: i1, %o: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %m = arith.mulf %a, %scale : f32
    %y = arith.select %kp, %m, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<1x4x6x6xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x6x6xf32>) outs(%es : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %eo = tensor.empty() : tensor<1x4x6x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>
  %o = linalg.generic {indexing_maps = [#p4, #v4, #o4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x6x6xf32>, tensor<1x4x6x8xf32>) outs(%zo : tensor<1x4x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<1x4x6x8xf32>
  return %o : tensor<1x4x6x8xf32>
}

// -----

// ALiBi with the slopes computed from the head index, 2^(-2 (h + 1)),
// evaluated for every head and recognized as max_bias 8.

#q4 = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k4 = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s4 = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#x = affine_map<(b, h, i, j) -> (b, h, i, j)>
#v4 = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#p4 = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#o4 = affine_map<(b, h, i, e, j) -> (b, h, i, e)>

// CHECK-LABEL: func @alibi_computed_slopes
//       CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) alibi(8.000000e+00)
func.func @alibi_computed_slopes(%q: tensor<1x4x6x8xf32>, %k: tensor<1x4x6x8xf32>, %v: tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %es = tensor.empty() : tensor<1x4x6x6xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %s = linalg.generic {indexing_maps = [#q4, #k4, #s4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>) outs(%zs : tensor<1x4x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<1x4x6x6xf32>
  %x = linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x4x6x6xf32>) outs(%es : tensor<1x4x6x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %hh = linalg.index 1 : index
    %hi = arith.index_cast %hh : index to i64
    %hf = arith.sitofp %hi : i64 to f32
    %one = arith.constant 1.0 : f32
    %mtwo = arith.constant -2.0 : f32
    %h1 = arith.addf %hf, %one : f32
    %ex = arith.mulf %h1, %mtwo : f32
    %slope = math.exp2 %ex : f32
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %ii = arith.index_cast %i : index to i64
    %ji = arith.index_cast %j : index to i64
    %d = arith.subi %ji, %ii : i64
    %df = arith.sitofp %d : i64 to f32
    %b = arith.mulf %slope, %df : f32
    %m = arith.mulf %a, %scale : f32
    %y = arith.addf %m, %b : f32
    linalg.yield %y : f32
  } -> tensor<1x4x6x6xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x6x6xf32>) outs(%es : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %eo = tensor.empty() : tensor<1x4x6x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>
  %o = linalg.generic {indexing_maps = [#p4, #v4, #o4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x6x6xf32>, tensor<1x4x6x8xf32>) outs(%zo : tensor<1x4x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<1x4x6x8xf32>
  return %o : tensor<1x4x6x8xf32>
}


// -----

// A fused QKV projection sliced apart ([B, S, 3 H D] -> Q, K, V by
// extract_slice, split into heads by expand_shape, BSHD), scores by generic
// contractions, linalg.softmax: Q, K, V become the reshaped slices.

#q4 = affine_map<(b, h, i, j, d) -> (b, i, h, d)>
#k4 = affine_map<(b, h, i, j, d) -> (b, j, h, d)>
#s4 = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#v4 = affine_map<(b, h, i, e, j) -> (b, j, h, e)>
#p4 = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#o4 = affine_map<(b, h, i, e, j) -> (b, i, h, e)>

// CHECK-LABEL: func @fused_qkv
//   CHECK-DAG: %[[Q:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [1, 5, 2, 8]
//   CHECK-DAG: %[[QT:.*]] = linalg.transpose ins(%[[Q]] : tensor<1x5x2x8xf32>)
//       CHECK: pe.attention %[[QT]], %{{.*}}, %{{.*}} scale(0.35355{{[0-9]*}}) : tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32> -> tensor<1x2x5x8xf32>
//       CHECK: %[[O:.*]] = linalg.transpose ins(%{{.*}} : tensor<1x2x5x8xf32>) {{.*}} permutation = [0, 2, 1, 3]
//  CHECK-NEXT: return %[[O]]
func.func @fused_qkv(%qkv: tensor<1x5x48xf32>) -> tensor<1x5x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.353553385 : f32
  %qs = tensor.extract_slice %qkv[0, 0, 0] [1, 5, 16] [1, 1, 1] : tensor<1x5x48xf32> to tensor<1x5x16xf32>
  %ks = tensor.extract_slice %qkv[0, 0, 16] [1, 5, 16] [1, 1, 1] : tensor<1x5x48xf32> to tensor<1x5x16xf32>
  %vs = tensor.extract_slice %qkv[0, 0, 32] [1, 5, 16] [1, 1, 1] : tensor<1x5x48xf32> to tensor<1x5x16xf32>
  %q = tensor.expand_shape %qs [[0], [1], [2, 3]] output_shape [1, 5, 2, 8] : tensor<1x5x16xf32> into tensor<1x5x2x8xf32>
  %k = tensor.expand_shape %ks [[0], [1], [2, 3]] output_shape [1, 5, 2, 8] : tensor<1x5x16xf32> into tensor<1x5x2x8xf32>
  %v = tensor.expand_shape %vs [[0], [1], [2, 3]] output_shape [1, 5, 2, 8] : tensor<1x5x16xf32> into tensor<1x5x2x8xf32>
  %es = tensor.empty() : tensor<1x2x5x5xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
  %s = linalg.generic {indexing_maps = [#q4, #k4, #s4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x5x2x8xf32>, tensor<1x5x2x8xf32>) outs(%zs : tensor<1x2x5x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<1x2x5x5xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x2x5x5xf32>) outs(%es : tensor<1x2x5x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %scale : f32
    linalg.yield %m : f32
  } -> tensor<1x2x5x5xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x5x5xf32>) outs(%es : tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
  %eo = tensor.empty() : tensor<1x5x2x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x5x2x8xf32>) -> tensor<1x5x2x8xf32>
  %o = linalg.generic {indexing_maps = [#p4, #v4, #o4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x2x5x5xf32>, tensor<1x5x2x8xf32>) outs(%zo : tensor<1x5x2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<1x5x2x8xf32>
  return %o : tensor<1x5x2x8xf32>
}
