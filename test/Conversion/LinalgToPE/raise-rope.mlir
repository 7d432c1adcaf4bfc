// RUN: pe-opt %s --pe-raise-positional-encodings -split-input-file | FileCheck %s

// Hugging Face rotate_half as torch-mlir spells it: slices, a negation, a
// concatenation, one generic per multiply and add; cos/sin of the outer
// product positions x inv_freq concatenated with itself.

#s = affine_map<(s, i) -> (s)>
#i = affine_map<(s, i) -> (i)>
#si = affine_map<(s, i) -> (s, i)>
#x = affine_map<(b, h, s, d) -> (b, h, s, d)>
#t = affine_map<(b, h, s, d) -> (s, d)>

// CHECK-LABEL: func @rotate_half
//  CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x8xf32>, %[[P:.*]]: tensor<4xi64>)
//       CHECK: %[[R:.*]] = pe.rope #pe.rope<rotary_dim = 8> %[[X]], %[[P]] : tensor<1x2x4x8xf32>, tensor<4xi64>
//   CHECK-NOT: linalg
//       CHECK: return %[[R]]
func.func @rotate_half(%x: tensor<1x2x4x8xf32>, %pos: tensor<4xi64>) -> tensor<1x2x4x8xf32> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %freqs = linalg.generic {indexing_maps = [#s, #i, #si], iterator_types = ["parallel", "parallel"]}
      ins(%pos, %inv : tensor<4xi64>, tensor<4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%p: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %p : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %e8 = tensor.empty() : tensor<4x8xf32>
  %cos = linalg.generic {indexing_maps = [#si, #si], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e8 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<4x8xf32>
  %sin = linalg.generic {indexing_maps = [#si, #si], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e8 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.sin %a : f32
    linalg.yield %c : f32
  } -> tensor<4x8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 4] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %e4 = tensor.empty() : tensor<1x2x4x4xf32>
  %neg = linalg.negf ins(%x2 : tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %rot = tensor.concat dim(3) %neg, %x1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %ex = tensor.empty() : tensor<1x2x4x8xf32>
  %xc = linalg.generic {indexing_maps = [#x, #t, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos : tensor<1x2x4x8xf32>, tensor<4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %rs = linalg.generic {indexing_maps = [#x, #t, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%rot, %sin : tensor<1x2x4x8xf32>, tensor<4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %out = linalg.add ins(%xc, %rs : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %out : tensor<1x2x4x8xf32>
}

// -----

// One fused generic (as after dispatch formation): the partner channel read
// with tensor.extract at (c + r/2) mod r, the sign selected, positions from
// the loop index, frequencies from a constant table: Llama 3.1 scaling.

#x = affine_map<(b, h, s, d) -> (b, h, s, d)>

// CHECK-LABEL: func @fused_generic_llama3
//       CHECK: %[[POS:.*]] = arith.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
//       CHECK: pe.rope #pe.rope<theta = 500000.0, rotary_dim = 32, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>> %{{.*}}, %[[POS]]
//   CHECK-NOT: linalg.generic
func.func @fused_generic_llama3(%x: tensor<1x2x4x32xf32>) -> tensor<1x2x4x32xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 4.403665960e-01, 1.939227432e-01, 8.539710194e-02, 3.760603070e-02, 1.656044088e-02, 7.292664610e-03, 3.211446106e-03, 5.248461384e-04, 7.784655463e-05, 3.428102355e-05, 1.509621688e-05, 6.647869668e-06, 2.927499963e-06, 1.289173156e-06, 5.677088097e-07]> : tensor<16xf32>
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %one = arith.constant 1.0 : f32
  %mone = arith.constant -1.0 : f32
  %e = tensor.empty() : tensor<1x2x4x32xf32>
  %r = linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x2x4x32xf32>) outs(%e : tensor<1x2x4x32xf32>) {
  ^bb0(%xin: f32, %o: f32):
    %b = linalg.index 0 : index
    %h = linalg.index 1 : index
    %s = linalg.index 2 : index
    %c = linalg.index 3 : index
    %shifted = arith.addi %c, %c16 : index
    %pc = arith.remui %shifted, %c32 : index
    %xp = tensor.extract %x[%b, %h, %s, %pc] : tensor<1x2x4x32xf32>
    %i = arith.remui %c, %c16 : index
    %f = tensor.extract %inv[%i] : tensor<16xf32>
    %si = arith.index_cast %s : index to i64
    %sf = arith.sitofp %si : i64 to f32
    %a = arith.mulf %sf, %f : f32
    %co = math.cos %a : f32
    %sn = math.sin %a : f32
    %lo = arith.cmpi ult, %c, %c16 : index
    %sign = arith.select %lo, %mone, %one : f32
    %t1 = arith.mulf %xin, %co : f32
    %t2 = arith.mulf %xp, %sn : f32
    %t3 = arith.mulf %t2, %sign : f32
    %y = arith.addf %t1, %t3 : f32
    linalg.yield %y : f32
  } -> tensor<1x2x4x32xf32>
  return %r : tensor<1x2x4x32xf32>
}

// -----

// GPT-J / Meta interleaved pairs: even and odd channels by strided slices,
// the real and imaginary parts of the complex product, stacked into pairs
// by a reshape; BSHD layout (positions index dim 1); [B, S] positions;
// linear scaling.

#x = affine_map<(b, s, h, d) -> (b, s, h, d)>
#t = affine_map<(b, s, h, d) -> (b, s, d)>
#p = affine_map<(b, s, i) -> (b, s)>
#f = affine_map<(b, s, i) -> (i)>
#o = affine_map<(b, s, i) -> (b, s, i)>

// CHECK-LABEL: func @interleaved_complex
//  CHECK-SAME: (%[[X:.*]]: tensor<2x4x3x8xf32>, %[[P:.*]]: tensor<2x4xi64>)
//       CHECK: pe.rope #pe.rope<rotary_dim = 8, style = interleaved, scaling = #pe.linear<factor = 4.0>> %[[X]], %[[P]] layout(bshd)
func.func @interleaved_complex(%x: tensor<2x4x3x8xf32>, %pos: tensor<2x4xi64>) -> tensor<2x4x3x8xf32> {
  %inv = arith.constant dense<[2.500000000e-01, 2.500000037e-02, 2.499999944e-03, 2.500000119e-04]> : tensor<4xf32>
  %e = tensor.empty() : tensor<2x4x4xf32>
  %ang = linalg.generic {indexing_maps = [#p, #f, #o], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%pos, %inv : tensor<2x4xi64>, tensor<4xf32>) outs(%e : tensor<2x4x4xf32>) {
  ^bb0(%p: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %p : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<2x4x4xf32>
  %xr = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 3, 4] [1, 1, 1, 2] : tensor<2x4x3x8xf32> to tensor<2x4x3x4xf32>
  %xi = tensor.extract_slice %x[0, 0, 0, 1] [2, 4, 3, 4] [1, 1, 1, 2] : tensor<2x4x3x8xf32> to tensor<2x4x3x4xf32>
  %e4 = tensor.empty() : tensor<2x4x3x4xf32>
  %re, %im = linalg.generic {indexing_maps = [#x, #x, #t, #x, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%xr, %xi, %ang : tensor<2x4x3x4xf32>, tensor<2x4x3x4xf32>, tensor<2x4x4xf32>) outs(%e4, %e4 : tensor<2x4x3x4xf32>, tensor<2x4x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %t: f32, %o1: f32, %o2: f32):
    %c = math.cos %t : f32
    %s = math.sin %t : f32
    %ac = arith.mulf %a, %c : f32
    %bs = arith.mulf %b, %s : f32
    %real = arith.subf %ac, %bs : f32
    %as = arith.mulf %a, %s : f32
    %bc = arith.mulf %b, %c : f32
    %imag = arith.addf %as, %bc : f32
    linalg.yield %real, %imag : f32, f32
  } -> (tensor<2x4x3x4xf32>, tensor<2x4x3x4xf32>)
  %re5 = tensor.expand_shape %re [[0], [1], [2], [3, 4]] output_shape [2, 4, 3, 4, 1] : tensor<2x4x3x4xf32> into tensor<2x4x3x4x1xf32>
  %im5 = tensor.expand_shape %im [[0], [1], [2], [3, 4]] output_shape [2, 4, 3, 4, 1] : tensor<2x4x3x4xf32> into tensor<2x4x3x4x1xf32>
  %st = tensor.concat dim(4) %re5, %im5 : (tensor<2x4x3x4x1xf32>, tensor<2x4x3x4x1xf32>) -> tensor<2x4x3x4x2xf32>
  %out = tensor.collapse_shape %st [[0], [1], [2], [3, 4]] : tensor<2x4x3x4x2xf32> into tensor<2x4x3x8xf32>
  return %out : tensor<2x4x3x8xf32>
}

// -----

// Partial rotary (GPT-NeoX rotary_pct): the first 4 of 8 channels rotate
// (rotate_half), the rest are concatenated back unchanged; positions [1, S]
// shared by a batch of 2 are collapsed to [S].

#x = affine_map<(b, h, s, d) -> (b, h, s, d)>
#t = affine_map<(b, h, s, d) -> (0, s, d)>
#p = affine_map<(b, s, i) -> (b, s)>
#f = affine_map<(b, s, i) -> (i)>
#o = affine_map<(b, s, i) -> (b, s, i)>

// CHECK-LABEL: func @partial_rotary
//       CHECK: %[[P:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<1x4xi64> into tensor<4xi64>
//       CHECK: pe.rope #pe.rope<rotary_dim = 4> %{{.*}}, %[[P]] : tensor<2x2x4x8xf32>, tensor<4xi64>
func.func @partial_rotary(%x: tensor<2x2x4x8xf32>, %pos: tensor<1x4xi64>) -> tensor<2x2x4x8xf32> {
  %inv = arith.constant dense<[1.0, 0.01]> : tensor<2xf32>
  %e = tensor.empty() : tensor<1x4x2xf32>
  %ang = linalg.generic {indexing_maps = [#p, #f, #o], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%pos, %inv : tensor<1x4xi64>, tensor<2xf32>) outs(%e : tensor<1x4x2xf32>) {
  ^bb0(%p: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %p : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<1x4x2xf32>
  %emb = tensor.concat dim(2) %ang, %ang : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x4xf32>
  %rotx = tensor.extract_slice %x[0, 0, 0, 0] [2, 2, 4, 4] [1, 1, 1, 1] : tensor<2x2x4x8xf32> to tensor<2x2x4x4xf32>
  %pass = tensor.extract_slice %x[0, 0, 0, 4] [2, 2, 4, 4] [1, 1, 1, 1] : tensor<2x2x4x8xf32> to tensor<2x2x4x4xf32>
  %x1 = tensor.extract_slice %rotx[0, 0, 0, 0] [2, 2, 4, 2] [1, 1, 1, 1] : tensor<2x2x4x4xf32> to tensor<2x2x4x2xf32>
  %x2 = tensor.extract_slice %rotx[0, 0, 0, 2] [2, 2, 4, 2] [1, 1, 1, 1] : tensor<2x2x4x4xf32> to tensor<2x2x4x2xf32>
  %e2 = tensor.empty() : tensor<2x2x4x2xf32>
  %neg = linalg.negf ins(%x2 : tensor<2x2x4x2xf32>) outs(%e2 : tensor<2x2x4x2xf32>) -> tensor<2x2x4x2xf32>
  %e4 = tensor.empty() : tensor<2x2x4x4xf32>
  %rot0 = tensor.insert_slice %neg into %e4[0, 0, 0, 0] [2, 2, 4, 2] [1, 1, 1, 1] : tensor<2x2x4x2xf32> into tensor<2x2x4x4xf32>
  %rot = tensor.insert_slice %x1 into %rot0[0, 0, 0, 2] [2, 2, 4, 2] [1, 1, 1, 1] : tensor<2x2x4x2xf32> into tensor<2x2x4x4xf32>
  %y = linalg.generic {indexing_maps = [#x, #x, #t, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%rotx, %rot, %emb : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<1x4x4xf32>) outs(%e4 : tensor<2x2x4x4xf32>) {
  ^bb0(%a: f32, %r: f32, %t: f32, %o: f32):
    %c = math.cos %t : f32
    %s = math.sin %t : f32
    %ac = arith.mulf %a, %c : f32
    %rs = arith.mulf %r, %s : f32
    %sum = arith.addf %ac, %rs : f32
    linalg.yield %sum : f32
  } -> tensor<2x2x4x4xf32>
  %out = tensor.concat dim(3) %y, %pass : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x8xf32>
  return %out : tensor<2x2x4x8xf32>
}

// -----

// Near miss: the rotated half is not negated (x2, x1 instead of -x2, x1). Left unchanged.

#s = affine_map<(s, i) -> (s)>
#i = affine_map<(s, i) -> (i)>
#si = affine_map<(s, i) -> (s, i)>
#x = affine_map<(b, h, s, d) -> (b, h, s, d)>
#t = affine_map<(b, h, s, d) -> (s, d)>

// CHECK-LABEL: func @no_negation
//   CHECK-NOT: pe.rope
func.func @no_negation(%x: tensor<1x2x4x8xf32>, %pos: tensor<4xi64>) -> tensor<1x2x4x8xf32> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %freqs = linalg.generic {indexing_maps = [#s, #i, #si], iterator_types = ["parallel", "parallel"]}
      ins(%pos, %inv : tensor<4xi64>, tensor<4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%p: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %p : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %e8 = tensor.empty() : tensor<4x8xf32>
  %cos = linalg.generic {indexing_maps = [#si, #si], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e8 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<4x8xf32>
  %sin = linalg.generic {indexing_maps = [#si, #si], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e8 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.sin %a : f32
    linalg.yield %c : f32
  } -> tensor<4x8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 4] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %e4 = tensor.empty() : tensor<1x2x4x4xf32>
  %neg = linalg.negf ins(%x2 : tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %rot = tensor.concat dim(3) %x2, %x1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %ex = tensor.empty() : tensor<1x2x4x8xf32>
  %xc = linalg.generic {indexing_maps = [#x, #t, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos : tensor<1x2x4x8xf32>, tensor<4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %rs = linalg.generic {indexing_maps = [#x, #t, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%rot, %sin : tensor<1x2x4x8xf32>, tensor<4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %out = linalg.add ins(%xc, %rs : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %out : tensor<1x2x4x8xf32>
}


// -----

// Near miss: each channel pairs with itself (x1, -x2). Left unchanged.

#s = affine_map<(s, i) -> (s)>
#i = affine_map<(s, i) -> (i)>
#si = affine_map<(s, i) -> (s, i)>
#x = affine_map<(b, h, s, d) -> (b, h, s, d)>
#t = affine_map<(b, h, s, d) -> (s, d)>

// CHECK-LABEL: func @wrong_pairing
//   CHECK-NOT: pe.rope
func.func @wrong_pairing(%x: tensor<1x2x4x8xf32>, %pos: tensor<4xi64>) -> tensor<1x2x4x8xf32> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %freqs = linalg.generic {indexing_maps = [#s, #i, #si], iterator_types = ["parallel", "parallel"]}
      ins(%pos, %inv : tensor<4xi64>, tensor<4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%p: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %p : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %e8 = tensor.empty() : tensor<4x8xf32>
  %cos = linalg.generic {indexing_maps = [#si, #si], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e8 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<4x8xf32>
  %sin = linalg.generic {indexing_maps = [#si, #si], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e8 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.sin %a : f32
    linalg.yield %c : f32
  } -> tensor<4x8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 4] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %e4 = tensor.empty() : tensor<1x2x4x4xf32>
  %neg = linalg.negf ins(%x2 : tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %rot = tensor.concat dim(3) %x1, %neg : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %ex = tensor.empty() : tensor<1x2x4x8xf32>
  %xc = linalg.generic {indexing_maps = [#x, #t, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos : tensor<1x2x4x8xf32>, tensor<4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %rs = linalg.generic {indexing_maps = [#x, #t, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%rot, %sin : tensor<1x2x4x8xf32>, tensor<4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %out = linalg.add ins(%xc, %rs : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %out : tensor<1x2x4x8xf32>
}


// -----

// Near miss: the second half turns by other frequencies than the first. Left unchanged.

#s = affine_map<(s, i) -> (s)>
#i = affine_map<(s, i) -> (i)>
#si = affine_map<(s, i) -> (s, i)>
#x = affine_map<(b, h, s, d) -> (b, h, s, d)>
#t = affine_map<(b, h, s, d) -> (s, d)>

// CHECK-LABEL: func @shifted_frequency
//   CHECK-NOT: pe.rope
func.func @shifted_frequency(%x: tensor<1x2x4x8xf32>, %pos: tensor<4xi64>) -> tensor<1x2x4x8xf32> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %freqs = linalg.generic {indexing_maps = [#s, #i, #si], iterator_types = ["parallel", "parallel"]}
      ins(%pos, %inv : tensor<4xi64>, tensor<4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%p: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %p : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  %freqs2 = tensor.extract_slice %freqs[0, 0] [4, 4] [1, 1] : tensor<4x4xf32> to tensor<4x4xf32>
  %freqs3 = linalg.negf ins(%freqs2 : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs3 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %e8 = tensor.empty() : tensor<4x8xf32>
  %cos = linalg.generic {indexing_maps = [#si, #si], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e8 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<4x8xf32>
  %sin = linalg.generic {indexing_maps = [#si, #si], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e8 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.sin %a : f32
    linalg.yield %c : f32
  } -> tensor<4x8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 4] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %e4 = tensor.empty() : tensor<1x2x4x4xf32>
  %neg = linalg.negf ins(%x2 : tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %rot = tensor.concat dim(3) %neg, %x1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %ex = tensor.empty() : tensor<1x2x4x8xf32>
  %xc = linalg.generic {indexing_maps = [#x, #t, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos : tensor<1x2x4x8xf32>, tensor<4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %rs = linalg.generic {indexing_maps = [#x, #t, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%rot, %sin : tensor<1x2x4x8xf32>, tensor<4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %out = linalg.add ins(%xc, %rs : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %out : tensor<1x2x4x8xf32>
}


// -----

// Near miss: both terms multiply by cos. Left unchanged.

#s = affine_map<(s, i) -> (s)>
#i = affine_map<(s, i) -> (i)>
#si = affine_map<(s, i) -> (s, i)>
#x = affine_map<(b, h, s, d) -> (b, h, s, d)>
#t = affine_map<(b, h, s, d) -> (s, d)>

// CHECK-LABEL: func @cos_for_both
//   CHECK-NOT: pe.rope
func.func @cos_for_both(%x: tensor<1x2x4x8xf32>, %pos: tensor<4xi64>) -> tensor<1x2x4x8xf32> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %freqs = linalg.generic {indexing_maps = [#s, #i, #si], iterator_types = ["parallel", "parallel"]}
      ins(%pos, %inv : tensor<4xi64>, tensor<4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%p: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %p : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %e8 = tensor.empty() : tensor<4x8xf32>
  %cos = linalg.generic {indexing_maps = [#si, #si], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e8 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<4x8xf32>
  %sin = linalg.generic {indexing_maps = [#si, #si], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e8 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.sin %a : f32
    linalg.yield %c : f32
  } -> tensor<4x8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 4] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %e4 = tensor.empty() : tensor<1x2x4x4xf32>
  %neg = linalg.negf ins(%x2 : tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %rot = tensor.concat dim(3) %neg, %x1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %ex = tensor.empty() : tensor<1x2x4x8xf32>
  %xc = linalg.generic {indexing_maps = [#x, #t, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos : tensor<1x2x4x8xf32>, tensor<4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %rs = linalg.generic {indexing_maps = [#x, #t, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%rot, %cos : tensor<1x2x4x8xf32>, tensor<4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %out = linalg.add ins(%xc, %rs : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %out : tensor<1x2x4x8xf32>
}

// -----

// The frequency table as HF computes it (inv_freq [1, r/2, 1] x positions
// [1, 1, S] by a K = 1 batch_matmul, transposed), frequencies that match no
// scaling, and cos/sin scaled by a magnitude 1.5: kept exactly, as LongRoPE
// factors over theta with the magnitude as attention factor.

#s = affine_map<(s, i) -> (s)>
#i = affine_map<(s, i) -> (i)>
#si = affine_map<(s, i) -> (s, i)>
#x = affine_map<(b, h, s, d) -> (b, h, s, d)>
#t = affine_map<(b, h, s, d) -> (s, d)>

// CHECK-LABEL: func @matmul_table_magnitude
//       CHECK: pe.rope #pe.rope<theta = {{[0-9.]*}}, rotary_dim = 8, scaling = #pe.longrope<short_factor = [{{.*}}], long_factor = [{{.*}}], original_max_position_embeddings = 1, attention_factor = 1.5, select = short>>
//   CHECK-NOT: linalg.batch_matmul
func.func @matmul_table_magnitude(%x: tensor<1x2x4x8xf32>, %pos: tensor<4xi64>) -> tensor<1x2x4x8xf32> {
  %inv = arith.constant dense<[[[1.0], [0.3], [0.05], [0.001]]]> : tensor<1x4x1xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x1x4xf32>
  %posf = linalg.generic {indexing_maps = [affine_map<(a, b, s) -> (s)>, affine_map<(a, b, s) -> (a, b, s)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%pos : tensor<4xi64>) outs(%e1 : tensor<1x1x4xf32>) {
  ^bb0(%p: i64, %o: f32):
    %pf = arith.sitofp %p : i64 to f32
    linalg.yield %pf : f32
  } -> tensor<1x1x4xf32>
  %e44 = tensor.empty() : tensor<1x4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e44 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %fm = linalg.batch_matmul ins(%inv, %posf : tensor<1x4x1xf32>, tensor<1x1x4xf32>) outs(%z : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %ft = linalg.transpose ins(%fm : tensor<1x4x4xf32>) outs(%e44 : tensor<1x4x4xf32>) permutation = [0, 2, 1]
  %freqs = tensor.collapse_shape %ft [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %e8 = tensor.empty() : tensor<4x8xf32>
  %cos = linalg.generic {indexing_maps = [#si, #si], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e8 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    %m = arith.constant 1.5 : f32
    %cm = arith.mulf %c, %m : f32
    linalg.yield %cm : f32
  } -> tensor<4x8xf32>
  %sin = linalg.generic {indexing_maps = [#si, #si], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e8 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.sin %a : f32
    %m = arith.constant 1.5 : f32
    %cm = arith.mulf %c, %m : f32
    linalg.yield %cm : f32
  } -> tensor<4x8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 4] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %e4 = tensor.empty() : tensor<1x2x4x4xf32>
  %neg = linalg.negf ins(%x2 : tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %rot = tensor.concat dim(3) %neg, %x1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %ex = tensor.empty() : tensor<1x2x4x8xf32>
  %xc = linalg.generic {indexing_maps = [#x, #t, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos : tensor<1x2x4x8xf32>, tensor<4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %rs = linalg.generic {indexing_maps = [#x, #t, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%rot, %sin : tensor<1x2x4x8xf32>, tensor<4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %out = linalg.add ins(%xc, %rs : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%ex : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %out : tensor<1x2x4x8xf32>
}

// -----

// cos/sin from constant tables of 16 positions (a rotary cache), sliced to
// the sequence: positions 0..S-1; frequency and magnitude fitted to every
// row of the tables.

#x = affine_map<(b, h, s, d) -> (b, h, s, d)>
#t = affine_map<(b, h, s, d) -> (s, d)>
#g = affine_map<(b, s, d) -> (b, s)>
#gt = affine_map<(b, s, d) -> (b, s, d)>
#bt = affine_map<(b, h, s, d) -> (b, s, d)>

// CHECK-LABEL: func @sliced_cache
//       CHECK: %[[P:.*]] = arith.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
//       CHECK: pe.rope #pe.rope<rotary_dim = 8> %{{.*}}, %[[P]] : tensor<2x2x4x8xf32>, tensor<4xi64>
func.func @sliced_cache(%x: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %cc = arith.constant dense<[[1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00], [5.403022766e-01, 9.950041771e-01, 9.999499917e-01, 9.999995232e-01, 5.403022766e-01, 9.950041771e-01, 9.999499917e-01, 9.999995232e-01], [-4.161468148e-01, 9.800665975e-01, 9.998000264e-01, 9.999979734e-01, -4.161468148e-01, 9.800665975e-01, 9.998000264e-01, 9.999979734e-01], [-9.899924994e-01, 9.553365111e-01, 9.995500445e-01, 9.999955297e-01, -9.899924994e-01, 9.553365111e-01, 9.995500445e-01, 9.999955297e-01], [-6.536436081e-01, 9.210609794e-01, 9.992001057e-01, 9.999920130e-01, -6.536436081e-01, 9.210609794e-01, 9.992001057e-01, 9.999920130e-01], [2.836621702e-01, 8.775825500e-01, 9.987502694e-01, 9.999874830e-01, 2.836621702e-01, 8.775825500e-01, 9.987502694e-01, 9.999874830e-01], [9.601702690e-01, 8.253356218e-01, 9.982005358e-01, 9.999819994e-01, 9.601702690e-01, 8.253356218e-01, 9.982005358e-01, 9.999819994e-01], [7.539022565e-01, 7.648422122e-01, 9.975510240e-01, 9.999755025e-01, 7.539022565e-01, 7.648422122e-01, 9.975510240e-01, 9.999755025e-01], [-1.455000341e-01, 6.967067122e-01, 9.968017340e-01, 9.999679923e-01, -1.455000341e-01, 6.967067122e-01, 9.968017340e-01, 9.999679923e-01], [-9.111302495e-01, 6.216099262e-01, 9.959527254e-01, 9.999595284e-01, -9.111302495e-01, 6.216099262e-01, 9.959527254e-01, 9.999595284e-01], [-8.390715122e-01, 5.403022766e-01, 9.950041771e-01, 9.999499917e-01, -8.390715122e-01, 5.403022766e-01, 9.950041771e-01, 9.999499917e-01], [4.425697960e-03, 4.535961151e-01, 9.939560890e-01, 9.999395013e-01, 4.425697960e-03, 4.535961151e-01, 9.939560890e-01, 9.999395013e-01], [8.438539505e-01, 3.623577356e-01, 9.928086400e-01, 9.999279976e-01, 8.438539505e-01, 3.623577356e-01, 9.928086400e-01, 9.999279976e-01], [9.074468017e-01, 2.674987614e-01, 9.915618896e-01, 9.999154806e-01, 9.074468017e-01, 2.674987614e-01, 9.915618896e-01, 9.999154806e-01], [1.367372274e-01, 1.699671596e-01, 9.902160168e-01, 9.999020100e-01, 1.367372274e-01, 1.699671596e-01, 9.902160168e-01, 9.999020100e-01], [-7.596879005e-01, 7.073719800e-02, 9.887710810e-01, 9.998875260e-01, -7.596879005e-01, 7.073719800e-02, 9.887710810e-01, 9.998875260e-01]]> : tensor<16x8xf32>
  %sc = arith.constant dense<[[0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00], [8.414710164e-01, 9.983342141e-02, 9.999833070e-03, 9.999999311e-04, 8.414710164e-01, 9.983342141e-02, 9.999833070e-03, 9.999999311e-04], [9.092974067e-01, 1.986693293e-01, 1.999866590e-02, 1.999998698e-03, 9.092974067e-01, 1.986693293e-01, 1.999866590e-02, 1.999998698e-03], [1.411200017e-01, 2.955202162e-01, 2.999549918e-02, 2.999995602e-03, 1.411200017e-01, 2.955202162e-01, 2.999549918e-02, 2.999995602e-03], [-7.568024993e-01, 3.894183338e-01, 3.998933360e-02, 3.999989480e-03, -7.568024993e-01, 3.894183338e-01, 3.998933360e-02, 3.999989480e-03], [-9.589242935e-01, 4.794255495e-01, 4.997916520e-02, 4.999979399e-03, -9.589242935e-01, 4.794255495e-01, 4.997916520e-02, 4.999979399e-03], [-2.794154882e-01, 5.646424890e-01, 5.996400490e-02, 5.999964196e-03, -2.794154882e-01, 5.646424890e-01, 5.996400490e-02, 5.999964196e-03], [6.569865942e-01, 6.442176700e-01, 6.994284689e-02, 6.999942940e-03, 6.569865942e-01, 6.442176700e-01, 6.994284689e-02, 6.999942940e-03], [9.893582463e-01, 7.173560858e-01, 7.991468906e-02, 7.999914698e-03, 9.893582463e-01, 7.173560858e-01, 7.991468906e-02, 7.999914698e-03], [4.121184647e-01, 7.833269238e-01, 8.987854421e-02, 8.999879472e-03, 4.121184647e-01, 7.833269238e-01, 8.987854421e-02, 8.999879472e-03], [-5.440210700e-01, 8.414710164e-01, 9.983341396e-02, 9.999834001e-03, -5.440210700e-01, 8.414710164e-01, 9.983341396e-02, 9.999834001e-03], [-9.999902248e-01, 8.912073374e-01, 1.097782999e-01, 1.099977922e-02, -9.999902248e-01, 8.912073374e-01, 1.097782999e-01, 1.099977922e-02], [-5.365729332e-01, 9.320390821e-01, 1.197122037e-01, 1.199971233e-02, -5.365729332e-01, 9.320390821e-01, 1.197122037e-01, 1.199971233e-02], [4.201670587e-01, 9.635581970e-01, 1.296341419e-01, 1.299963426e-02, 4.201670587e-01, 9.635581970e-01, 1.296341419e-01, 1.299963426e-02], [9.906073809e-01, 9.854497313e-01, 1.395431161e-01, 1.399954315e-02, 9.906073809e-01, 9.854497313e-01, 1.395431161e-01, 1.399954315e-02], [6.502878666e-01, 9.974949956e-01, 1.494381279e-01, 1.499943808e-02, 6.502878666e-01, 9.974949956e-01, 1.494381279e-01, 1.499943808e-02]]> : tensor<16x8xf32>
  %cos = tensor.extract_slice %cc[0, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
  %sin = tensor.extract_slice %sc[0, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [2, 2, 4, 4] [1, 1, 1, 1] : tensor<2x2x4x8xf32> to tensor<2x2x4x4xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 4] [2, 2, 4, 4] [1, 1, 1, 1] : tensor<2x2x4x8xf32> to tensor<2x2x4x4xf32>
  %e4 = tensor.empty() : tensor<2x2x4x4xf32>
  %neg = linalg.negf ins(%x2 : tensor<2x2x4x4xf32>) outs(%e4 : tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %rot = tensor.concat dim(3) %neg, %x1 : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x8xf32>
  %ex = tensor.empty() : tensor<2x2x4x8xf32>
  %y = linalg.generic {indexing_maps = [#x, #t, #x, #t, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos, %rot, %sin : tensor<2x2x4x8xf32>, tensor<4x8xf32>, tensor<2x2x4x8xf32>, tensor<4x8xf32>) outs(%ex : tensor<2x2x4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %r: f32, %s: f32, %o: f32):
    %ac = arith.mulf %a, %c : f32
    %rs = arith.mulf %r, %s : f32
    %sum = arith.addf %ac, %rs : f32
    linalg.yield %sum : f32
  } -> tensor<2x2x4x8xf32>
  return %y : tensor<2x2x4x8xf32>
}

// -----

// The same tables gathered by [B, S] position ids (cos_cached[position_ids]
// as torch-mlir lowers indexing: tensor.extract at the id's row).

#x = affine_map<(b, h, s, d) -> (b, h, s, d)>
#t = affine_map<(b, h, s, d) -> (s, d)>
#g = affine_map<(b, s, d) -> (b, s)>
#gt = affine_map<(b, s, d) -> (b, s, d)>
#bt = affine_map<(b, h, s, d) -> (b, s, d)>

// CHECK-LABEL: func @gathered_cache
//  CHECK-SAME: %[[P:[a-z0-9]+]]: tensor<2x4xi64>
//       CHECK: pe.rope #pe.rope<rotary_dim = 8> %{{.*}}, %[[P]] : tensor<2x2x4x8xf32>, tensor<2x4xi64>
func.func @gathered_cache(%x: tensor<2x2x4x8xf32>, %pos: tensor<2x4xi64>) -> tensor<2x2x4x8xf32> {
  %cc = arith.constant dense<[[1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00], [5.403022766e-01, 9.950041771e-01, 9.999499917e-01, 9.999995232e-01, 5.403022766e-01, 9.950041771e-01, 9.999499917e-01, 9.999995232e-01], [-4.161468148e-01, 9.800665975e-01, 9.998000264e-01, 9.999979734e-01, -4.161468148e-01, 9.800665975e-01, 9.998000264e-01, 9.999979734e-01], [-9.899924994e-01, 9.553365111e-01, 9.995500445e-01, 9.999955297e-01, -9.899924994e-01, 9.553365111e-01, 9.995500445e-01, 9.999955297e-01], [-6.536436081e-01, 9.210609794e-01, 9.992001057e-01, 9.999920130e-01, -6.536436081e-01, 9.210609794e-01, 9.992001057e-01, 9.999920130e-01], [2.836621702e-01, 8.775825500e-01, 9.987502694e-01, 9.999874830e-01, 2.836621702e-01, 8.775825500e-01, 9.987502694e-01, 9.999874830e-01], [9.601702690e-01, 8.253356218e-01, 9.982005358e-01, 9.999819994e-01, 9.601702690e-01, 8.253356218e-01, 9.982005358e-01, 9.999819994e-01], [7.539022565e-01, 7.648422122e-01, 9.975510240e-01, 9.999755025e-01, 7.539022565e-01, 7.648422122e-01, 9.975510240e-01, 9.999755025e-01], [-1.455000341e-01, 6.967067122e-01, 9.968017340e-01, 9.999679923e-01, -1.455000341e-01, 6.967067122e-01, 9.968017340e-01, 9.999679923e-01], [-9.111302495e-01, 6.216099262e-01, 9.959527254e-01, 9.999595284e-01, -9.111302495e-01, 6.216099262e-01, 9.959527254e-01, 9.999595284e-01], [-8.390715122e-01, 5.403022766e-01, 9.950041771e-01, 9.999499917e-01, -8.390715122e-01, 5.403022766e-01, 9.950041771e-01, 9.999499917e-01], [4.425697960e-03, 4.535961151e-01, 9.939560890e-01, 9.999395013e-01, 4.425697960e-03, 4.535961151e-01, 9.939560890e-01, 9.999395013e-01], [8.438539505e-01, 3.623577356e-01, 9.928086400e-01, 9.999279976e-01, 8.438539505e-01, 3.623577356e-01, 9.928086400e-01, 9.999279976e-01], [9.074468017e-01, 2.674987614e-01, 9.915618896e-01, 9.999154806e-01, 9.074468017e-01, 2.674987614e-01, 9.915618896e-01, 9.999154806e-01], [1.367372274e-01, 1.699671596e-01, 9.902160168e-01, 9.999020100e-01, 1.367372274e-01, 1.699671596e-01, 9.902160168e-01, 9.999020100e-01], [-7.596879005e-01, 7.073719800e-02, 9.887710810e-01, 9.998875260e-01, -7.596879005e-01, 7.073719800e-02, 9.887710810e-01, 9.998875260e-01]]> : tensor<16x8xf32>
  %sc = arith.constant dense<[[0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00], [8.414710164e-01, 9.983342141e-02, 9.999833070e-03, 9.999999311e-04, 8.414710164e-01, 9.983342141e-02, 9.999833070e-03, 9.999999311e-04], [9.092974067e-01, 1.986693293e-01, 1.999866590e-02, 1.999998698e-03, 9.092974067e-01, 1.986693293e-01, 1.999866590e-02, 1.999998698e-03], [1.411200017e-01, 2.955202162e-01, 2.999549918e-02, 2.999995602e-03, 1.411200017e-01, 2.955202162e-01, 2.999549918e-02, 2.999995602e-03], [-7.568024993e-01, 3.894183338e-01, 3.998933360e-02, 3.999989480e-03, -7.568024993e-01, 3.894183338e-01, 3.998933360e-02, 3.999989480e-03], [-9.589242935e-01, 4.794255495e-01, 4.997916520e-02, 4.999979399e-03, -9.589242935e-01, 4.794255495e-01, 4.997916520e-02, 4.999979399e-03], [-2.794154882e-01, 5.646424890e-01, 5.996400490e-02, 5.999964196e-03, -2.794154882e-01, 5.646424890e-01, 5.996400490e-02, 5.999964196e-03], [6.569865942e-01, 6.442176700e-01, 6.994284689e-02, 6.999942940e-03, 6.569865942e-01, 6.442176700e-01, 6.994284689e-02, 6.999942940e-03], [9.893582463e-01, 7.173560858e-01, 7.991468906e-02, 7.999914698e-03, 9.893582463e-01, 7.173560858e-01, 7.991468906e-02, 7.999914698e-03], [4.121184647e-01, 7.833269238e-01, 8.987854421e-02, 8.999879472e-03, 4.121184647e-01, 7.833269238e-01, 8.987854421e-02, 8.999879472e-03], [-5.440210700e-01, 8.414710164e-01, 9.983341396e-02, 9.999834001e-03, -5.440210700e-01, 8.414710164e-01, 9.983341396e-02, 9.999834001e-03], [-9.999902248e-01, 8.912073374e-01, 1.097782999e-01, 1.099977922e-02, -9.999902248e-01, 8.912073374e-01, 1.097782999e-01, 1.099977922e-02], [-5.365729332e-01, 9.320390821e-01, 1.197122037e-01, 1.199971233e-02, -5.365729332e-01, 9.320390821e-01, 1.197122037e-01, 1.199971233e-02], [4.201670587e-01, 9.635581970e-01, 1.296341419e-01, 1.299963426e-02, 4.201670587e-01, 9.635581970e-01, 1.296341419e-01, 1.299963426e-02], [9.906073809e-01, 9.854497313e-01, 1.395431161e-01, 1.399954315e-02, 9.906073809e-01, 9.854497313e-01, 1.395431161e-01, 1.399954315e-02], [6.502878666e-01, 9.974949956e-01, 1.494381279e-01, 1.499943808e-02, 6.502878666e-01, 9.974949956e-01, 1.494381279e-01, 1.499943808e-02]]> : tensor<16x8xf32>
  %et = tensor.empty() : tensor<2x4x8xf32>
  %cos, %sin = linalg.generic {indexing_maps = [#g, #gt, #gt], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%pos : tensor<2x4xi64>) outs(%et, %et : tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  ^bb0(%p: i64, %o1: f32, %o2: f32):
    %row = arith.index_cast %p : i64 to index
    %col = linalg.index 2 : index
    %cv = tensor.extract %cc[%row, %col] : tensor<16x8xf32>
    %sv = tensor.extract %sc[%row, %col] : tensor<16x8xf32>
    linalg.yield %cv, %sv : f32, f32
  } -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>)
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [2, 2, 4, 4] [1, 1, 1, 1] : tensor<2x2x4x8xf32> to tensor<2x2x4x4xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 4] [2, 2, 4, 4] [1, 1, 1, 1] : tensor<2x2x4x8xf32> to tensor<2x2x4x4xf32>
  %e4 = tensor.empty() : tensor<2x2x4x4xf32>
  %neg = linalg.negf ins(%x2 : tensor<2x2x4x4xf32>) outs(%e4 : tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %rot = tensor.concat dim(3) %neg, %x1 : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x8xf32>
  %ex = tensor.empty() : tensor<2x2x4x8xf32>
  %y = linalg.generic {indexing_maps = [#x, #bt, #x, #bt, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos, %rot, %sin : tensor<2x2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x4x8xf32>) outs(%ex : tensor<2x2x4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %r: f32, %s: f32, %o: f32):
    %ac = arith.mulf %a, %c : f32
    %rs = arith.mulf %r, %s : f32
    %sum = arith.addf %ac, %rs : f32
    linalg.yield %sum : f32
  } -> tensor<2x2x4x8xf32>
  return %y : tensor<2x2x4x8xf32>
}

// -----

// Near miss: the same cache with one cos entry off by 1e-3 (row 3, channel
// 1): no frequency fits every row. Left unchanged.

#x = affine_map<(b, h, s, d) -> (b, h, s, d)>
#t = affine_map<(b, h, s, d) -> (s, d)>
#g = affine_map<(b, s, d) -> (b, s)>
#gt = affine_map<(b, s, d) -> (b, s, d)>
#bt = affine_map<(b, h, s, d) -> (b, s, d)>

// CHECK-LABEL: func @corrupted_cache
//   CHECK-NOT: pe.rope
func.func @corrupted_cache(%x: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %cc = arith.constant dense<[[1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00], [5.403022766e-01, 9.950041771e-01, 9.999499917e-01, 9.999995232e-01, 5.403022766e-01, 9.950041771e-01, 9.999499917e-01, 9.999995232e-01], [-4.161468148e-01, 9.800665975e-01, 9.998000264e-01, 9.999979734e-01, -4.161468148e-01, 9.800665975e-01, 9.998000264e-01, 9.999979734e-01], [-9.899924994e-01, 9.563365111e-01, 9.995500445e-01, 9.999955297e-01, -9.899924994e-01, 9.553365111e-01, 9.995500445e-01, 9.999955297e-01], [-6.536436081e-01, 9.210609794e-01, 9.992001057e-01, 9.999920130e-01, -6.536436081e-01, 9.210609794e-01, 9.992001057e-01, 9.999920130e-01], [2.836621702e-01, 8.775825500e-01, 9.987502694e-01, 9.999874830e-01, 2.836621702e-01, 8.775825500e-01, 9.987502694e-01, 9.999874830e-01], [9.601702690e-01, 8.253356218e-01, 9.982005358e-01, 9.999819994e-01, 9.601702690e-01, 8.253356218e-01, 9.982005358e-01, 9.999819994e-01], [7.539022565e-01, 7.648422122e-01, 9.975510240e-01, 9.999755025e-01, 7.539022565e-01, 7.648422122e-01, 9.975510240e-01, 9.999755025e-01], [-1.455000341e-01, 6.967067122e-01, 9.968017340e-01, 9.999679923e-01, -1.455000341e-01, 6.967067122e-01, 9.968017340e-01, 9.999679923e-01], [-9.111302495e-01, 6.216099262e-01, 9.959527254e-01, 9.999595284e-01, -9.111302495e-01, 6.216099262e-01, 9.959527254e-01, 9.999595284e-01], [-8.390715122e-01, 5.403022766e-01, 9.950041771e-01, 9.999499917e-01, -8.390715122e-01, 5.403022766e-01, 9.950041771e-01, 9.999499917e-01], [4.425697960e-03, 4.535961151e-01, 9.939560890e-01, 9.999395013e-01, 4.425697960e-03, 4.535961151e-01, 9.939560890e-01, 9.999395013e-01], [8.438539505e-01, 3.623577356e-01, 9.928086400e-01, 9.999279976e-01, 8.438539505e-01, 3.623577356e-01, 9.928086400e-01, 9.999279976e-01], [9.074468017e-01, 2.674987614e-01, 9.915618896e-01, 9.999154806e-01, 9.074468017e-01, 2.674987614e-01, 9.915618896e-01, 9.999154806e-01], [1.367372274e-01, 1.699671596e-01, 9.902160168e-01, 9.999020100e-01, 1.367372274e-01, 1.699671596e-01, 9.902160168e-01, 9.999020100e-01], [-7.596879005e-01, 7.073719800e-02, 9.887710810e-01, 9.998875260e-01, -7.596879005e-01, 7.073719800e-02, 9.887710810e-01, 9.998875260e-01]]> : tensor<16x8xf32>
  %sc = arith.constant dense<[[0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00], [8.414710164e-01, 9.983342141e-02, 9.999833070e-03, 9.999999311e-04, 8.414710164e-01, 9.983342141e-02, 9.999833070e-03, 9.999999311e-04], [9.092974067e-01, 1.986693293e-01, 1.999866590e-02, 1.999998698e-03, 9.092974067e-01, 1.986693293e-01, 1.999866590e-02, 1.999998698e-03], [1.411200017e-01, 2.955202162e-01, 2.999549918e-02, 2.999995602e-03, 1.411200017e-01, 2.955202162e-01, 2.999549918e-02, 2.999995602e-03], [-7.568024993e-01, 3.894183338e-01, 3.998933360e-02, 3.999989480e-03, -7.568024993e-01, 3.894183338e-01, 3.998933360e-02, 3.999989480e-03], [-9.589242935e-01, 4.794255495e-01, 4.997916520e-02, 4.999979399e-03, -9.589242935e-01, 4.794255495e-01, 4.997916520e-02, 4.999979399e-03], [-2.794154882e-01, 5.646424890e-01, 5.996400490e-02, 5.999964196e-03, -2.794154882e-01, 5.646424890e-01, 5.996400490e-02, 5.999964196e-03], [6.569865942e-01, 6.442176700e-01, 6.994284689e-02, 6.999942940e-03, 6.569865942e-01, 6.442176700e-01, 6.994284689e-02, 6.999942940e-03], [9.893582463e-01, 7.173560858e-01, 7.991468906e-02, 7.999914698e-03, 9.893582463e-01, 7.173560858e-01, 7.991468906e-02, 7.999914698e-03], [4.121184647e-01, 7.833269238e-01, 8.987854421e-02, 8.999879472e-03, 4.121184647e-01, 7.833269238e-01, 8.987854421e-02, 8.999879472e-03], [-5.440210700e-01, 8.414710164e-01, 9.983341396e-02, 9.999834001e-03, -5.440210700e-01, 8.414710164e-01, 9.983341396e-02, 9.999834001e-03], [-9.999902248e-01, 8.912073374e-01, 1.097782999e-01, 1.099977922e-02, -9.999902248e-01, 8.912073374e-01, 1.097782999e-01, 1.099977922e-02], [-5.365729332e-01, 9.320390821e-01, 1.197122037e-01, 1.199971233e-02, -5.365729332e-01, 9.320390821e-01, 1.197122037e-01, 1.199971233e-02], [4.201670587e-01, 9.635581970e-01, 1.296341419e-01, 1.299963426e-02, 4.201670587e-01, 9.635581970e-01, 1.296341419e-01, 1.299963426e-02], [9.906073809e-01, 9.854497313e-01, 1.395431161e-01, 1.399954315e-02, 9.906073809e-01, 9.854497313e-01, 1.395431161e-01, 1.399954315e-02], [6.502878666e-01, 9.974949956e-01, 1.494381279e-01, 1.499943808e-02, 6.502878666e-01, 9.974949956e-01, 1.494381279e-01, 1.499943808e-02]]> : tensor<16x8xf32>
  %cos = tensor.extract_slice %cc[0, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
  %sin = tensor.extract_slice %sc[0, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [2, 2, 4, 4] [1, 1, 1, 1] : tensor<2x2x4x8xf32> to tensor<2x2x4x4xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 4] [2, 2, 4, 4] [1, 1, 1, 1] : tensor<2x2x4x8xf32> to tensor<2x2x4x4xf32>
  %e4 = tensor.empty() : tensor<2x2x4x4xf32>
  %neg = linalg.negf ins(%x2 : tensor<2x2x4x4xf32>) outs(%e4 : tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %rot = tensor.concat dim(3) %neg, %x1 : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x8xf32>
  %ex = tensor.empty() : tensor<2x2x4x8xf32>
  %y = linalg.generic {indexing_maps = [#x, #t, #x, #t, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos, %rot, %sin : tensor<2x2x4x8xf32>, tensor<4x8xf32>, tensor<2x2x4x8xf32>, tensor<4x8xf32>) outs(%ex : tensor<2x2x4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %r: f32, %s: f32, %o: f32):
    %ac = arith.mulf %a, %c : f32
    %rs = arith.mulf %r, %s : f32
    %sum = arith.addf %ac, %rs : f32
    linalg.yield %sum : f32
  } -> tensor<2x2x4x8xf32>
  return %y : tensor<2x2x4x8xf32>
}
