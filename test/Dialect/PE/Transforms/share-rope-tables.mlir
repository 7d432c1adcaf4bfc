// RUN: pe-opt %s --pe-share-rope-tables | FileCheck %s
// RUN: pe-opt %s --pe-share-rope-tables --pe-lower-to-linalg | FileCheck %s --check-prefix=LOWERED

#rope = #pe.rope<theta = 500000.0, rotary_dim = 32, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>

// Four layers, each rotating Q and K at the same positions: one table
// computation, read by all eight rotations.
// CHECK-LABEL: func.func @four_layers
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<1x4x?x32xf32>, %[[P:[a-z0-9]+]]: tensor<?xi32>, %[[P2:[a-z0-9]+]]: tensor<?xi32>)
// CHECK: %[[COS:.*]], %[[SIN:.*]] = pe.rope_tables #pe.rope<theta = 500000.0, rotary_dim = 32, {{.*}}> %[[P]] : tensor<?xi32> -> tensor<?x16xf32>
// CHECK-NOT: pe.rope_tables
// CHECK-COUNT-8: pe.rope #pe.rope<{{.*}}> %{{.*}}, %[[P]] tables(%[[COS]], %[[SIN]] : tensor<?x16xf32>, tensor<?x16xf32>)
// A rotation with another configuration, and one at other positions, keep
// computing their own tables.
// CHECK: pe.rope #pe.rope<rotary_dim = 32> %{{.*}}, %[[P]] :
// CHECK: pe.rope #pe.rope<{{.*}}> %{{.*}}, %[[P2]] :
// LOWERED-LABEL: func.func @four_layers
// LOWERED-COUNT-3: math.cos
// LOWERED-NOT: math.cos
func.func @four_layers(%x: tensor<1x4x?x32xf32>, %p: tensor<?xi32>, %p2: tensor<?xi32>) -> tensor<1x4x?x32xf32> {
  %h = pe.rope #rope %x, %p : tensor<1x4x?x32xf32>, tensor<?xi32>
  %0 = pe.rope #rope %h, %p : tensor<1x4x?x32xf32>, tensor<?xi32>
  %1 = pe.rope #rope %0, %p : tensor<1x4x?x32xf32>, tensor<?xi32>
  %2 = pe.rope #rope %1, %p : tensor<1x4x?x32xf32>, tensor<?xi32>
  %3 = pe.rope #rope %2, %p : tensor<1x4x?x32xf32>, tensor<?xi32>
  %4 = pe.rope #rope %3, %p : tensor<1x4x?x32xf32>, tensor<?xi32>
  %5 = pe.rope #rope %4, %p : tensor<1x4x?x32xf32>, tensor<?xi32>
  %6 = pe.rope #rope %5, %p : tensor<1x4x?x32xf32>, tensor<?xi32>
  %7 = pe.rope #pe.rope<rotary_dim = 32> %6, %p : tensor<1x4x?x32xf32>, tensor<?xi32>
  %8 = pe.rope #rope %7, %p2 : tensor<1x4x?x32xf32>, tensor<?xi32>
  return %8 : tensor<1x4x?x32xf32>
}

// Multi-stream rotations share tables per token: [3, S] positions give
// [S, r/2] tables.
// CHECK-LABEL: func.func @multi_stream
// CHECK: %[[C:.*]], %[[S:.*]] = pe.rope_tables #pe.rope<rotary_dim = 32, sections = [4, 6, 6]> %{{.*}} : tensor<3x?xi64> -> tensor<?x16xf32>
// CHECK-COUNT-2: tables(%[[C]], %[[S]] : tensor<?x16xf32>, tensor<?x16xf32>)
// LOWERED-LABEL: func.func @multi_stream
// LOWERED: linalg.generic
// LOWERED: tensor.extract
// LOWERED: math.cos
// LOWERED-NOT: math.cos
func.func @multi_stream(%x: tensor<1x4x?x32xf32>, %p: tensor<3x?xi64>) -> tensor<1x4x?x32xf32> {
  %0 = pe.rope #pe.rope<rotary_dim = 32, sections = [4, 6, 6]> %x, %p : tensor<1x4x?x32xf32>, tensor<3x?xi64>
  %1 = pe.rope #pe.rope<rotary_dim = 32, sections = [4, 6, 6]> %0, %p : tensor<1x4x?x32xf32>, tensor<3x?xi64>
  return %1 : tensor<1x4x?x32xf32>
}
