// RUN: pe-opt %s --pe-expand-paged-attention | FileCheck %s

// The checks first (lengths, query counts, every page a sequence reads),
// then one pe.attention per sequence: its query rows transposed to
// [1, Hq, Sq, D] and rotated at L - Sq + i, its keys and values the
// sequence's pages (pe.gather_pages of row b of the block table, L rows), the
// result rows written back into the packed [T, Hq, Dv]. The attention keeps the
// op's masks and parameters and rotates nothing itself (the cache holds
// rotated keys).
// CHECK-LABEL: func.func @decode
// CHECK: call @pe_runtime_size_mismatch
// CHECK: scf.for %[[SEQ:.*]] =
// CHECK: func.call @pe_runtime_kv_length_out_of_range
// CHECK: func.call @pe_runtime_query_count_out_of_range
// CHECK: scf.for
// CHECK: func.call @pe_runtime_page_out_of_range
// CHECK: scf.for %[[B:.*]] = %{{.*}} iter_args(%[[OUT:.*]] = %{{.*}}) -> (tensor<?x8x32xf32>)
// CHECK: %[[L:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: tensor.extract_slice %{{.*}} : tensor<?x8x64xf32> to tensor<?x8x64xf32>
// CHECK: linalg.transpose
// CHECK: tensor.generate
// CHECK: pe.rope #pe.rope<theta = 500000.0, rotary_dim = 64>
// CHECK: %[[K:.*]] = pe.gather_pages %{{.*}} block_table(%{{.*}} : tensor<?x32xi32>) sequence(%[[B]]) length(%[[L]]) : tensor<?x16x2x64xf32> -> tensor<1x2x?x64xf32>
// CHECK: %[[V:.*]] = pe.gather_pages %{{.*}} block_table(%{{.*}} : tensor<?x32xi32>) sequence(%[[B]]) length(%[[L]]) : tensor<?x16x2x32xf32> -> tensor<1x2x?x32xf32>
// CHECK: pe.attention %{{.*}}, %[[K]], %[[V]] causal window(128) chunk(64) softcap(5.000000e+01) : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x32xf32> -> tensor<1x8x?x32xf32>
// CHECK-NOT: rope(
// CHECK: tensor.insert_slice %{{.*}} into %[[OUT]]
// CHECK-NOT: pe.paged_attention
func.func @decode(%q: tensor<?x8x64xf32>, %kc: tensor<?x16x2x64xf32>, %vc: tensor<?x16x2x32xf32>,
                  %bt: tensor<?x32xi32>, %lens: tensor<?xi32>, %cu: tensor<?xi64>) -> tensor<?x8x32xf32> {
  %o = pe.paged_attention %q, %kc, %vc block_table(%bt : tensor<?x32xi32>) kv_lens(%lens : tensor<?xi32>) cu_seqlens(%cu : tensor<?xi64>) causal window(128) chunk(64) rope(#pe.rope<theta = 500000.0, rotary_dim = 64>) softcap(50.0) : tensor<?x8x64xf32>, tensor<?x16x2x64xf32>, tensor<?x16x2x32xf32> -> tensor<?x8x32xf32>
  return %o : tensor<?x8x32xf32>
}

// -----

// Attention sinks (gpt-oss) and the query temperature (Llama 4) go to each
// sequence's pe.attention, whose default positions are L - Sq + i.
// CHECK-LABEL: func.func @sinks
// CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} sinks(%arg6 : tensor<8xbf16>) causal window(128) temperature(#pe.temperature<floor_scale = 8192, attn_scale = 0.1>)
func.func @sinks(%q: tensor<?x8x64xbf16>, %kc: tensor<?x16x2x64xbf16>, %vc: tensor<?x16x2x64xbf16>,
                 %bt: tensor<?x32xi32>, %lens: tensor<?xi32>, %cu: tensor<?xi64>,
                 %s: tensor<8xbf16>) -> tensor<?x8x64xbf16> {
  %o = pe.paged_attention %q, %kc, %vc block_table(%bt : tensor<?x32xi32>) kv_lens(%lens : tensor<?xi32>) cu_seqlens(%cu : tensor<?xi64>) sinks(%s : tensor<8xbf16>) causal window(128) temperature(#pe.temperature<floor_scale = 8192, attn_scale = 0.1>) : tensor<?x8x64xbf16>, tensor<?x16x2x64xbf16>, tensor<?x16x2x64xbf16> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// -----

// A soft mask [T, H|1, K]: its rows must be the query's, each sequence's keys
// at most its K columns (checked before anything is read); each sequence
// attends with its rows and first L columns, as [1, H, Sq, L].
// CHECK-LABEL: func.func @soft_mask
// CHECK: %[[ROWS:.*]] = tensor.dim %arg6, %c0 : tensor<?x1x?xf32>
// CHECK: arith.cmpi ne, %[[ROWS]], %{{.*}} : index
// CHECK: call @pe_runtime_size_mismatch
// CHECK: scf.for %[[SEQ:.*]] =
// CHECK: func.call @pe_runtime_query_count_out_of_range
// CHECK: %[[COLUMNS:.*]] = tensor.dim %arg6, %{{.*}} : tensor<?x1x?xf32>
// CHECK: %[[FEW:.*]] = arith.cmpi sgt, %{{.*}}, %[[COLUMNS]] : index
// CHECK: scf.if
// CHECK: func.call @pe_runtime_mask_columns_out_of_range
// CHECK: scf.for %{{.*}} = %{{.*}} iter_args
// CHECK: %[[L:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %arg6[%[[FIRST:.*]], 0, 0] [%[[SQ:.*]], 1, %[[L]]] [1, 1, 1] : tensor<?x1x?xf32> to tensor<?x1x?xf32>
// CHECK: linalg.transpose ins(%[[ROWS]] : tensor<?x1x?xf32>) outs(%{{.*}} : tensor<1x?x?xf32>) permutation = [1, 0, 2]
// CHECK: %[[MASK:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] output_shape [1, 1, %{{.*}}, %{{.*}}] : tensor<1x?x?xf32> into tensor<1x1x?x?xf32>
// CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%[[MASK]] : tensor<1x1x?x?xf32>) causal
func.func @soft_mask(%q: tensor<?x8x64xf32>, %kc: tensor<?x16x2x64xf32>, %vc: tensor<?x16x2x64xf32>,
                     %bt: tensor<?x32xi32>, %lens: tensor<?xi32>, %cu: tensor<?xi64>,
                     %m: tensor<?x1x?xf32>) -> tensor<?x8x64xf32> {
  %o = pe.paged_attention %q, %kc, %vc block_table(%bt : tensor<?x32xi32>) kv_lens(%lens : tensor<?xi32>) cu_seqlens(%cu : tensor<?xi64>) mask(%m : tensor<?x1x?xf32>) causal : tensor<?x8x64xf32>, tensor<?x16x2x64xf32>, tensor<?x16x2x64xf32> -> tensor<?x8x64xf32>
  return %o : tensor<?x8x64xf32>
}
