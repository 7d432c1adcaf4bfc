// RUN: pe-opt %s --pass-pipeline="builtin.module(func.func(pe-distribute-over-threads{threads=2}))" -split-input-file | FileCheck %s
// RUN: pe-opt %s --pass-pipeline="builtin.module(func.func(pe-distribute-over-threads{threads=1}))" -split-input-file | FileCheck %s --check-prefix=CHECK-ONE

// What pe-distribute-over-threads guarantees: one parallel loop of each
// linalg op on tensors is split into `threads` parts by an scf.forall (the
// first with a static extent >= threads, else the first dynamic one); a
// reduction is never split (results stay bit-identical to one thread);
// fills and ops without a parallel loop stay as they are; threads=1 changes
// nothing.

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rows = affine_map<(d0, d1, d2) -> (d0, d1)>

// The static loop of 8 (heads) is split in two halves of 4; the whole
// reduction over 16 stays inside each part.
// CHECK-LABEL: func.func @static_loop_first
// CHECK: scf.forall (%{{.*}}) in (2)
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, 0, 0] [4, %{{.*}}, 16] [1, 1, 1] : tensor<8x?x16xf32> to tensor<4x?x16xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%{{.*}} : tensor<4x?x16xf32>)
// CHECK: tensor.parallel_insert_slice
// CHECK-ONE-LABEL: func.func @static_loop_first
// CHECK-ONE-NOT: scf.forall
func.func @static_loop_first(%x: tensor<8x?x16xf32>, %init: tensor<8x?xf32>) -> tensor<8x?xf32> {
  %r = linalg.generic {indexing_maps = [#id3, #rows], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<8x?x16xf32>) outs(%init : tensor<8x?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x?xf32>
  return %r : tensor<8x?xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rows = affine_map<(d0, d1, d2) -> (d0, d1)>

// A static extent of 1 is too small for 2 threads: the dynamic loop (the
// sequence) is split instead, in parts of ceil(S / 2).
// CHECK-LABEL: func.func @dynamic_loop_when_static_too_small
// CHECK: scf.forall (%{{.*}}) in (2)
// CHECK: tensor.extract_slice %{{.*}}[0, %{{.*}}, 0] [1, %{{.*}}, 16] [1, 1, 1]
func.func @dynamic_loop_when_static_too_small(%x: tensor<1x?x16xf32>, %init: tensor<1x?xf32>) -> tensor<1x?xf32> {
  %r = linalg.generic {indexing_maps = [#id3, #rows], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<1x?x16xf32>) outs(%init : tensor<1x?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x?xf32>
  return %r : tensor<1x?xf32>
}

// -----

// A pure reduction has no loop to split; a fill stays whole.
// CHECK-LABEL: func.func @unsplittable
// CHECK-NOT: scf.forall
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]
func.func @unsplittable(%x: tensor<64xf32>, %init: tensor<f32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %filled = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<64xf32>) outs(%filled : tensor<f32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// An empty iteration space (a static extent 0) is left as it is.
// CHECK-LABEL: func.func @empty
// CHECK-NOT: scf.forall
// CHECK: linalg.generic
func.func @empty(%x: tensor<?x8x0xf32>, %init: tensor<?x8x0xf32>) -> tensor<?x8x0xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x8x0xf32>) outs(%init : tensor<?x8x0xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<?x8x0xf32>
  return %r : tensor<?x8x0xf32>
}
