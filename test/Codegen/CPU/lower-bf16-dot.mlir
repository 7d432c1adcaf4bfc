// Dot products of bf16 pairs (vector.contract over [N x 2] bf16 into N f32
// lanes) as the target's instruction: vdpbf16ps (AVX512-BF16, 16 lanes),
// BFDOT (AArch64 with BF16, 2 and 4 lanes), else two f32 FMAs per lane on
// the even and odd bf16 lanes.
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=znver4" --pe-lower-bf16-dot | FileCheck %s --check-prefix=CHECK-AVX512
// RUN: pe-opt %s --pe-set-target="triple=aarch64-linux-gnu cpu=neoverse-v2" --pe-lower-bf16-dot | FileCheck %s --check-prefix=CHECK-BFDOT
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=znver2" --pe-lower-bf16-dot | FileCheck %s --check-prefix=CHECK-FMA
// RUN: pe-opt %s --pe-set-target="triple=aarch64-linux-gnu cpu=neoverse-n1" --pe-lower-bf16-dot | FileCheck %s --check-prefix=CHECK-FMA

// CHECK-AVX512-LABEL: func.func @dot16
// CHECK-AVX512: x86vector.avx512.dot %{{.*}}, %{{.*}}, %{{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK-AVX512-LABEL: func.func @dot4
// CHECK-AVX512-NOT: x86vector
// CHECK-AVX512: math.fma
// CHECK-BFDOT-LABEL: func.func @dot16
// CHECK-BFDOT-NOT: llvm.call_intrinsic
// CHECK-BFDOT: math.fma
// CHECK-BFDOT-LABEL: func.func @dot4
// CHECK-BFDOT: llvm.call_intrinsic "llvm.aarch64.neon.bfdot"(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<4xf32>, vector<8xbf16>, vector<8xbf16>) -> vector<4xf32>

// CHECK-FMA-LABEL: func.func @dot4
// CHECK-FMA-SAME: (%[[ACC:.*]]: vector<4xf32>, %[[A2:.*]]: vector<4x2xbf16>, %[[B2:.*]]: vector<4x2xbf16>)
// CHECK-FMA-DAG: %[[A:.*]] = vector.shape_cast %[[A2]] : vector<4x2xbf16> to vector<8xbf16>
// CHECK-FMA-DAG: %[[B:.*]] = vector.shape_cast %[[B2]] : vector<4x2xbf16> to vector<8xbf16>
// CHECK-FMA-DAG: %[[AE:.*]] = vector.shuffle %[[A]], %[[A]] [0, 2, 4, 6]
// CHECK-FMA-DAG: %[[BE:.*]] = vector.shuffle %[[B]], %[[B]] [0, 2, 4, 6]
// CHECK-FMA-DAG: %[[AEF:.*]] = arith.extf %[[AE]] : vector<4xbf16> to vector<4xf32>
// CHECK-FMA-DAG: %[[BEF:.*]] = arith.extf %[[BE]] : vector<4xbf16> to vector<4xf32>
// CHECK-FMA: %[[EVEN:.*]] = math.fma %[[AEF]], %[[BEF]], %[[ACC]] : vector<4xf32>
// CHECK-FMA-DAG: %[[AO:.*]] = vector.shuffle %[[A]], %[[A]] [1, 3, 5, 7]
// CHECK-FMA-DAG: %[[BO:.*]] = vector.shuffle %[[B]], %[[B]] [1, 3, 5, 7]
// CHECK-FMA-DAG: %[[AOF:.*]] = arith.extf %[[AO]] : vector<4xbf16> to vector<4xf32>
// CHECK-FMA-DAG: %[[BOF:.*]] = arith.extf %[[BO]] : vector<4xbf16> to vector<4xf32>
// CHECK-FMA: %[[ODD:.*]] = math.fma %[[AOF]], %[[BOF]], %[[EVEN]] : vector<4xf32>
// CHECK-FMA: return %[[ODD]]
// CHECK-FMA-NOT: vector.contract
// CHECK-FMA-LABEL: func.func @others

// Other contractions stay: a masked one, an f32 one, a dot over 4 channels.
// CHECK-AVX512-LABEL: func.func @others
// CHECK-AVX512-NOT: x86vector
// CHECK-AVX512-COUNT-3: vector.contract
// CHECK-AVX512-NOT: x86vector
#pairs = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>]
#pair_dot = {indexing_maps = #pairs, iterator_types = ["parallel", "reduction"], kind = #vector.kind<add>}

func.func @dot16(%acc: vector<16xf32>, %a: vector<16x2xbf16>, %b: vector<16x2xbf16>) -> vector<16xf32> {
  %y = vector.contract #pair_dot %a, %b, %acc : vector<16x2xbf16>, vector<16x2xbf16> into vector<16xf32>
  return %y : vector<16xf32>
}

func.func @dot4(%acc: vector<4xf32>, %a: vector<4x2xbf16>, %b: vector<4x2xbf16>) -> vector<4xf32> {
  %y = vector.contract #pair_dot %a, %b, %acc : vector<4x2xbf16>, vector<4x2xbf16> into vector<4xf32>
  return %y : vector<4xf32>
}

func.func @others(%acc: vector<16xf32>, %a: vector<16x2xbf16>, %f: vector<16x2xf32>,
                  %q: vector<16x4xbf16>, %m: vector<16x2xi1>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>) {
  %x = vector.mask %m { vector.contract #pair_dot %a, %a, %acc : vector<16x2xbf16>, vector<16x2xbf16> into vector<16xf32> } : vector<16x2xi1> -> vector<16xf32>
  %y = vector.contract #pair_dot %f, %f, %acc : vector<16x2xf32>, vector<16x2xf32> into vector<16xf32>
  %z = vector.contract #pair_dot %q, %q, %acc : vector<16x4xbf16>, vector<16x4xbf16> into vector<16xf32>
  return %x, %y, %z : vector<16xf32>, vector<16xf32>, vector<16xf32>
}
