// f32 -> bf16 rounding as integer arithmetic where the target has no
// instruction for it (AVX2), as it is where it has (AVX512-BF16).
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=znver2" --pe-expand-bf16-conversions | FileCheck %s
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=znver4" --pe-expand-bf16-conversions | FileCheck %s --check-prefix=NATIVE

// CHECK-LABEL: func.func @round
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK: %[[LSB:.*]] = arith.andi %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK: %[[ROUNDED:.*]] = arith.addi %[[BITS]], %{{.*}} : vector<8xi32>
// CHECK: %[[QUIET:.*]] = arith.ori %[[BITS]], %{{.*}} : vector<8xi32>
// CHECK: %[[NAN:.*]] = arith.cmpf uno
// CHECK: %[[WORD:.*]] = arith.select %[[NAN]], %[[QUIET]], %[[ROUNDED]] : vector<8xi1>, vector<8xi32>
// CHECK: %[[HIGH:.*]] = arith.shrui %[[WORD]], %{{.*}} : vector<8xi32>
// CHECK: %[[HALF:.*]] = arith.trunci %[[HIGH]] : vector<8xi32> to vector<8xi16>
// CHECK: arith.bitcast %[[HALF]] : vector<8xi16> to vector<8xbf16>
// CHECK-NOT: arith.truncf
// NATIVE-LABEL: func.func @round
// NATIVE: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
func.func @round(%x: vector<8xf32>) -> vector<8xbf16> {
  %y = arith.truncf %x : vector<8xf32> to vector<8xbf16>
  return %y : vector<8xbf16>
}

// CHECK-LABEL: func.func @widen
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : bf16 to i16
// CHECK: %[[WIDE:.*]] = arith.extui %[[BITS]] : i16 to i32
// CHECK: %[[WORD:.*]] = arith.shli %[[WIDE]], %{{.*}} : i32
// CHECK: arith.bitcast %[[WORD]] : i32 to f32
func.func @widen(%x: bf16) -> f32 {
  %y = arith.extf %x : bf16 to f32
  return %y : f32
}
