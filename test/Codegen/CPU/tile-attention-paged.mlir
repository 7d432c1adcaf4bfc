// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=sapphirerapids" --pe-tile-attention -split-input-file | FileCheck %s
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=sapphirerapids" --pe-tile-attention=threads=2 -split-input-file | FileCheck %s --check-prefix=CHECK-HEADS
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=sapphirerapids" --pe-tile-attention=bf16-dot=true -split-input-file | FileCheck %s --check-prefix=CHECK-DOT
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=sapphirerapids" --pe-tile-attention=amx=true -split-input-file | FileCheck %s --check-prefix=CHECK-AMX
// Numerics: python/tests/test_kv_cache.py (pe.paged_attention through the
// CPU pipeline, whose expansion gives each sequence such an attention).

// Keys and values of one sequence of a paged cache: the gathers' checks
// first, then a decode step (Sq = 1) and a prefill both read the caches in
// place through the block table (no copy of the sequence). Key row j of the
// sequence is row j mod 16 of page block_table[b, j / 16]. The prefill task
// holds 16 blocks of queries (the state of each: Q^T, O^T, statistics, its
// query positions' range) and packs each K/V tile once for all of them.
// CHECK-LABEL: func.func @in_place
// CHECK-SAME: (%{{.*}}: tensor<1x8x?x64xf32>, %[[KC:.*]]: tensor<?x16x2x64xf32>, %[[VC:.*]]: tensor<?x16x2x64xf32>, %[[BT:.*]]: tensor<?x32xi32>, %[[B:.*]]: index, %[[N:.*]]: index)
// CHECK: call @pe_runtime_sequence_out_of_range
// CHECK: call @pe_runtime_gather_length_out_of_range
// CHECK: call @pe_runtime_gather_page_out_of_range
// CHECK-DAG: %[[T:.*]] = bufferization.to_buffer %[[BT]] read_only : tensor<?x32xi32> to memref<?x32xi32>
// CHECK-DAG: %[[K:.*]] = bufferization.to_buffer %[[KC]] read_only : tensor<?x16x2x64xf32> to memref<?x16x2x64xf32>
// CHECK-DAG: %[[V:.*]] = bufferization.to_buffer %[[VC]] read_only : tensor<?x16x2x64xf32> to memref<?x16x2x64xf32>
// CHECK: %[[ONE:.*]] = arith.cmpi eq
// CHECK: scf.if %[[ONE]] {
// CHECK: call @[[DECODE:pe_attention_kernel[_0-9]*]](%{{.*}}, %[[K]], %[[V]], %{{.*}}, %{{.*}}, %[[T]], %[[B]], %[[N]], %{{.*}})
// CHECK: } else {
// CHECK-NOT: memref.alloc(%[[N]])
// CHECK: call @[[PREFILL:pe_attention_kernel[_0-9]*]](%{{.*}}, %[[K]], %[[V]], %{{.*}}, %{{.*}}, %[[T]], %[[B]], %[[N]], %{{.*}})
// CHECK-NOT: pe.gather_pages
// CHECK: func.func private @[[PREFILL]](
// CHECK-SAME: %[[PK:[^:]*]]: memref<?x16x2x64xf32>, %[[PV:[^:]*]]: memref<?x16x2x64xf32>
// CHECK-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<16x64x64xf32>
// CHECK-DAG: %[[RANGES:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<16x2xi64>
// CHECK: memref.store %{{.*}}, %[[RANGES]]
// Each tile: its keys packed (rows prefetched ahead), its values packed,
// then each block of queries in turn.
// CHECK: scf.for
// CHECK: memref.prefetch %[[PK]]
// CHECK: %[[ROWV:.*]] = vector.load %[[PV]][{{.*}}] : memref<?x16x2x64xf32>, vector<16xf32>
// CHECK: vector.store %[[ROWV]], %{{.*}} : memref<48x64xf32>, vector<16xf32>
// CHECK: scf.for %[[SLOT:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.load %[[RANGES]][%[[SLOT]], %{{.*}}] : memref<16x2xi64>
// CHECK: memref.load %{{.*}} : memref<48x64xf32>
// CHECK: func.func private @[[DECODE]](
// CHECK-SAME: %[[KK:[^:]*]]: memref<?x16x2x64xf32>
// CHECK-SAME: %[[TT:[^:]*]]: memref<?x32xi32>, %[[SEQ:[^:]*]]: index
// CHECK: %[[KCOL:.*]] = arith.divui %{{.*}}, %c16
// CHECK: %[[KROW:.*]] = arith.remui %{{.*}}, %c16
// CHECK: %[[KP:.*]] = memref.load %[[TT]][%[[SEQ]], %[[KCOL]]] : memref<?x32xi32>
// CHECK: %[[KPAGE:.*]] = arith.index_cast %[[KP]] : i32 to index
// CHECK: memref.prefetch %[[KK]][%[[KPAGE]], %[[KROW]], %{{.*}}, %{{.*}}], read, locality<3>, data : memref<?x16x2x64xf32>
// CHECK: vector.load %[[KK]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<?x16x2x64xf32>, vector<16xf32>
func.func @in_place(%q: tensor<1x8x?x64xf32>, %kc: tensor<?x16x2x64xf32>, %vc: tensor<?x16x2x64xf32>,
                    %bt: tensor<?x32xi32>, %b: index, %n: index) -> tensor<1x8x?x64xf32> {
  %k = pe.gather_pages %kc block_table(%bt : tensor<?x32xi32>) sequence(%b) length(%n) : tensor<?x16x2x64xf32> -> tensor<1x2x?x64xf32>
  %v = pe.gather_pages %vc block_table(%bt : tensor<?x32xi32>) sequence(%b) length(%n) : tensor<?x16x2x64xf32> -> tensor<1x2x?x64xf32>
  %o = pe.attention %q, %k, %v causal : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}

// -----

// hnd pages: row j of head h is at [page, h, j mod 16].
// CHECK-LABEL: func.func @hnd
// CHECK: func.func private @pe_attention_kernel(
// CHECK-SAME: %[[KK:[^:]*]]: memref<?x2x16x64xbf16>
// CHECK: %[[ROW:.*]] = arith.remui %{{.*}}, %c16
// CHECK: %[[PAGE:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: %[[KK]][%[[PAGE]], %{{.*}}, %[[ROW]], %{{.*}}]
// Decode tiles of two pages (32 keys) over hnd pages: the decode kernel's
// scores S^T are 32 keys x 16 rows.
// CHECK: func.func private @pe_attention_kernel_0(
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<32x16xf32>
func.func @hnd(%q: tensor<1x8x?x64xbf16>, %kc: tensor<?x2x16x64xbf16>, %vc: tensor<?x2x16x64xbf16>,
               %bt: tensor<?x?xi64>, %b: index, %n: index) -> tensor<1x8x?x64xbf16> {
  %k = pe.gather_pages %kc block_table(%bt : tensor<?x?xi64>) sequence(%b) length(%n) layout(hnd) : tensor<?x2x16x64xbf16> -> tensor<1x2x?x64xbf16>
  %v = pe.gather_pages %vc block_table(%bt : tensor<?x?xi64>) sequence(%b) length(%n) layout(hnd) : tensor<?x2x16x64xbf16> -> tensor<1x2x?x64xbf16>
  %o = pe.attention %q, %k, %v : tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x8x?x64xbf16>
  return %o : tensor<1x8x?x64xbf16>
}

// -----

// Prefill over hnd pages reads in place (a head's rows of a page are
// contiguous); the rows a few pages ahead are prefetched as a key tile is
// packed, since the pages' rows are beyond the hardware prefetchers' reach.
// CHECK-LABEL: func.func @prefill_hnd
// CHECK-NOT: memref.alloc(%
// CHECK: call @pe_attention_kernel(
// CHECK: func.func private @pe_attention_kernel(
// CHECK-SAME: %[[KK:[^:]*]]: memref<?x2x16x64xf32>
// CHECK: %[[ROW:.*]] = arith.remui %{{.*}}, %c16
// CHECK: %[[PAGE:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: memref.prefetch %[[KK]][%[[PAGE]], %{{.*}}, %[[ROW]], %{{.*}}], read, locality<3>, data : memref<?x2x16x64xf32>
func.func @prefill_hnd(%q: tensor<1x8x64x64xf32>, %kc: tensor<?x2x16x64xf32>, %vc: tensor<?x2x16x64xf32>,
                       %bt: tensor<?x32xi32>, %b: index, %n: index) -> tensor<1x8x64x64xf32> {
  %k = pe.gather_pages %kc block_table(%bt : tensor<?x32xi32>) sequence(%b) length(%n) layout(hnd) : tensor<?x2x16x64xf32> -> tensor<1x2x?x64xf32>
  %v = pe.gather_pages %vc block_table(%bt : tensor<?x32xi32>) sequence(%b) length(%n) layout(hnd) : tensor<?x2x16x64xf32> -> tensor<1x2x?x64xf32>
  %o = pe.attention %q, %k, %v causal : tensor<1x8x64x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x64x64xf32>
  return %o : tensor<1x8x64x64xf32>
}

// -----

// bf16 prefill over nhd pages of two KV heads: the dot-product and the AMX
// kernels read the pages in place, a task packing each K/V tile once for its
// 16 blocks of queries (their Q^T pairs); no dense copy of the sequence.
// CHECK-DOT-LABEL: func.func @prefill_bf16_nhd
// CHECK-DOT-SAME: %[[KC:[^:]*]]: tensor<?x16x2x64xbf16>
// CHECK-DOT-DAG: %[[K:.*]] = bufferization.to_buffer %[[KC]] read_only
// CHECK-DOT-NOT: memref.alloc(%{{.*}}) : memref<1x2x?x64xbf16>
// CHECK-DOT: call @[[KERNEL:pe_attention_kernel]](%{{.*}}, %[[K]],
// CHECK-DOT: func.func private @[[KERNEL]](
// CHECK-DOT: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<16x32x128xbf16>
// CHECK-AMX-LABEL: func.func @prefill_bf16_nhd
// CHECK-AMX-SAME: %[[KC:[^:]*]]: tensor<?x16x2x64xbf16>, %[[VC:[^:]*]]: tensor<?x16x2x64xbf16>
// CHECK-AMX-DAG: %[[K:.*]] = bufferization.to_buffer %[[KC]] read_only
// CHECK-AMX-DAG: %[[V:.*]] = bufferization.to_buffer %[[VC]] read_only
// CHECK-AMX-NOT: memref.alloc(%{{.*}}) : memref<1x2x?x64xbf16>
// CHECK-AMX: call @pe_attention_kernel{{.*}}(%{{.*}}, %[[K]], %[[V]],
func.func @prefill_bf16_nhd(%q: tensor<1x8x?x64xbf16>, %kc: tensor<?x16x2x64xbf16>, %vc: tensor<?x16x2x64xbf16>,
                            %bt: tensor<?x32xi32>, %b: index, %n: index) -> tensor<1x8x?x64xbf16> {
  %k = pe.gather_pages %kc block_table(%bt : tensor<?x32xi32>) sequence(%b) length(%n) : tensor<?x16x2x64xbf16> -> tensor<1x2x?x64xbf16>
  %v = pe.gather_pages %vc block_table(%bt : tensor<?x32xi32>) sequence(%b) length(%n) : tensor<?x16x2x64xbf16> -> tensor<1x2x?x64xbf16>
  %o = pe.attention %q, %k, %v causal : tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x8x?x64xbf16>
  return %o : tensor<1x8x?x64xbf16>
}

// -----

// Keys and values of different sequences: no paged kernel; the gathers stay
// (pe-lower-to-linalg copies them) and the kernel reads dense buffers.
// CHECK-LABEL: func.func @two_sequences
// CHECK: %[[K:.*]] = pe.gather_pages
// CHECK: %[[V:.*]] = pe.gather_pages
// CHECK: bufferization.to_buffer %[[K]] read_only : tensor<1x2x?x64xf32>
// CHECK: call @pe_attention_kernel
func.func @two_sequences(%q: tensor<1x8x?x64xf32>, %kc: tensor<?x16x2x64xf32>, %bt: tensor<?x32xi32>,
                         %b: index, %c: index, %n: index) -> tensor<1x8x?x64xf32> {
  %k = pe.gather_pages %kc block_table(%bt : tensor<?x32xi32>) sequence(%b) length(%n) : tensor<?x16x2x64xf32> -> tensor<1x2x?x64xf32>
  %v = pe.gather_pages %kc block_table(%bt : tensor<?x32xi32>) sequence(%c) length(%n) : tensor<?x16x2x64xf32> -> tensor<1x2x?x64xf32>
  %o = pe.attention %q, %k, %v : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}

// -----

// Decode over nhd pages: a key row holds the KV heads side by side, so a task
// holds the state (Q, O, row statistics) of both heads and walks them inside
// each key tile; the parallel loop has one KV head iteration, and the splits
// of the keys do the rest.
// CHECK-HEADS-LABEL: func.func @decode_nhd
// CHECK-HEADS: func.func private @pe_attention_kernel(
// CHECK-HEADS: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) to (%{{.*}}, %c1{{.*}}, %{{.*}}, %{{.*}})
// CHECK-HEADS: %[[O:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<2x16x64xf32>
// CHECK-HEADS: scf.for %[[H:.*]] = %{{.*}} to %c2{{.*}} step
// CHECK-HEADS: memref.subview %[[O]][%[[H]], 0, 0] [1, 16, 64] [1, 1, 1] : memref<2x16x64xf32> to memref<16x64xf32, strided<[64, 1], offset: ?>>
// Each key tile: the heads in turn, each reading its piece of the tile's rows.
// CHECK-HEADS: scf.for %[[KB:.*]] =
// CHECK-HEADS: scf.if
// CHECK-HEADS: scf.for %[[H2:.*]] = %{{.*}} to %c2{{.*}} step
// CHECK-HEADS: vector.load %{{.*}}[%{{.*}}, %{{.*}}, %[[H2]], %{{.*}}] : memref<?x16x2x64xf32>, vector<16xf32>
func.func @decode_nhd(%q: tensor<1x8x1x64xf32>, %kc: tensor<?x16x2x64xf32>, %vc: tensor<?x16x2x64xf32>,
                      %bt: tensor<?x32xi32>, %b: index, %n: index) -> tensor<1x8x1x64xf32> {
  %k = pe.gather_pages %kc block_table(%bt : tensor<?x32xi32>) sequence(%b) length(%n) : tensor<?x16x2x64xf32> -> tensor<1x2x?x64xf32>
  %v = pe.gather_pages %vc block_table(%bt : tensor<?x32xi32>) sequence(%b) length(%n) : tensor<?x16x2x64xf32> -> tensor<1x2x?x64xf32>
  %o = pe.attention %q, %k, %v : tensor<1x8x1x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x1x64xf32>
  return %o : tensor<1x8x1x64xf32>
}

// -----

// Decode over hnd pages: a page holds each KV head's rows in turn, and the
// heads are walked inside each key tile too, so the tile's pages are read
// whole (the heads' state held side by side, as for nhd).
// CHECK-HEADS-LABEL: func.func @decode_hnd
// CHECK-HEADS: func.func private @pe_attention_kernel(
// CHECK-HEADS: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) to (%{{.*}}, %c1{{.*}}, %{{.*}}, %{{.*}})
// CHECK-HEADS: %[[O:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<2x16x64xf32>
// CHECK-HEADS: scf.for %[[H:.*]] = %{{.*}} to %c2{{.*}} step
// CHECK-HEADS: memref.subview %[[O]][%[[H]], 0, 0] [1, 16, 64] [1, 1, 1] : memref<2x16x64xf32> to memref<16x64xf32, strided<[64, 1], offset: ?>>
// CHECK-HEADS: scf.for %[[KB:.*]] =
// CHECK-HEADS: scf.if
// CHECK-HEADS: scf.for %[[H2:.*]] = %{{.*}} to %c2{{.*}} step
// CHECK-HEADS: vector.load %{{.*}}[%{{.*}}, %[[H2]], %{{.*}}, %{{.*}}] : memref<?x2x16x64xf32>, vector<16xf32>
func.func @decode_hnd(%q: tensor<1x8x1x64xf32>, %kc: tensor<?x2x16x64xf32>, %vc: tensor<?x2x16x64xf32>,
                      %bt: tensor<?x32xi32>, %b: index, %n: index) -> tensor<1x8x1x64xf32> {
  %k = pe.gather_pages %kc block_table(%bt : tensor<?x32xi32>) sequence(%b) length(%n) layout(hnd) : tensor<?x2x16x64xf32> -> tensor<1x2x?x64xf32>
  %v = pe.gather_pages %vc block_table(%bt : tensor<?x32xi32>) sequence(%b) length(%n) layout(hnd) : tensor<?x2x16x64xf32> -> tensor<1x2x?x64xf32>
  %o = pe.attention %q, %k, %v : tensor<1x8x1x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x1x64xf32>
  return %o : tensor<1x8x1x64xf32>
}
