// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=sapphirerapids" --pe-tile-paged-decode=threads=2 -split-input-file | FileCheck %s
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=sapphirerapids" --pe-tile-paged-decode -split-input-file | FileCheck %s --check-prefix=ONE-THREAD
// Numerics: python/tests/test_kv_cache.py (DECODE_SEQUENCES, every case, both
// layouts, f32 and bf16, with tiles small enough that threads share a sequence).

// A decode step of a paged batch: when cu_seqlens is 0, 1, ..., B (read
// within its size, before any check), pe.paged_attention's checks and one
// kernel call for the whole batch (its queries [T, Hq, 1, D] rotated at
// kv_lens[b] - 1), else the op itself for pe-expand-paged-attention, which
// checks it. The kernel reads the caches, the block table
// and kv_lens in place: a prefix sum of the (sequence, key tile) units, one
// parallel iteration per thread (at most one per unit) over its equal share
// of them, then a second parallel loop combining the sequences that two
// threads share.
// CHECK-LABEL: func.func @decode
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<?x8x64xf32>, %[[KC:[^:]*]]: tensor<?x16x2x64xf32>, %[[VC:[^:]*]]: tensor<?x16x2x32xf32>, %[[BT:[^:]*]]: tensor<?x32xi32>, %[[LENS:[^:]*]]: tensor<?xi32>, %[[CU:[^:]*]]: tensor<?xi64>, %[[S:[^:]*]]: tensor<8xf32>)
// CHECK: %[[Q4:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0], [1, 2], [3]] output_shape [%{{.*}}, 8, 1, 64] : tensor<?x8x64xf32> into tensor<?x8x1x64xf32>
// CHECK: %[[SAME:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK: %[[UPTO:.*]] = arith.minsi
// CHECK: %[[ONE:.*]] = scf.for %[[B:.*]] = %{{.*}} to %[[UPTO]] step %{{.*}} iter_args(%[[ALL:.*]] = %[[SAME]]) -> (i1) {
// CHECK:   %[[START:.*]] = tensor.extract %[[CU]][%[[B]]] : tensor<?xi64>
// CHECK:   %[[STARTI:.*]] = arith.index_cast %[[START]] : i64 to index
// CHECK:   %[[SINGLE:.*]] = arith.cmpi eq, %[[STARTI]], %[[B]] : index
// CHECK:   arith.andi %[[ALL]], %[[SINGLE]] : i1
// CHECK: %[[R:.*]] = scf.if %[[ONE]] -> (tensor<?x8x32xf32>) {
// CHECK:   call @pe_runtime_size_mismatch
// CHECK:   call @pe_runtime_kv_length_out_of_range
// CHECK:   call @pe_runtime_query_count_out_of_range
// CHECK:   call @pe_runtime_page_out_of_range
// CHECK:   %[[POS:.*]] = tensor.generate
// CHECK:     tensor.extract %[[LENS]]
// CHECK:     arith.subi
// CHECK:   } : tensor<?x1xi64>
// CHECK:   %[[ROT:.*]] = pe.rope #pe.rope<theta = 500000.0, rotary_dim = 64> %[[Q4]], %[[POS]] : tensor<?x8x1x64xf32>, tensor<?x1xi64>
// CHECK:   %[[QB:.*]] = bufferization.to_buffer %[[ROT]] read_only
// CHECK:   %[[KB:.*]] = bufferization.to_buffer %[[KC]] read_only
// CHECK:   %[[VB:.*]] = bufferization.to_buffer %[[VC]] read_only
// CHECK:   %[[PB:.*]] = bufferization.to_buffer %[[POS]] read_only
// CHECK:   %[[TB:.*]] = bufferization.to_buffer %[[BT]] read_only
// CHECK:   %[[LB:.*]] = bufferization.to_buffer %[[LENS]] read_only
// CHECK:   %[[SB:.*]] = bufferization.to_buffer %[[S]] read_only
// CHECK:   %[[OUT:.*]] = memref.alloc(%{{.*}}) : memref<?x8x1x32xf32>
// CHECK:   call @[[KERNEL:pe_attention_kernel[_0-9]*]](%[[QB]], %[[KB]], %[[VB]], %[[PB]], %[[TB]], %[[LB]], %[[SB]], %[[OUT]])
// CHECK:   %[[T:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK:   %[[ROWS:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0], [1, 2], [3]] : tensor<?x8x1x32xf32> into tensor<?x8x32xf32>
// CHECK:   scf.yield %[[ROWS]]
// CHECK: } else {
// CHECK:   %[[SEQ:.*]] = pe.paged_attention %[[Q]], %[[KC]], %[[VC]] block_table(%[[BT]] : tensor<?x32xi32>) kv_lens(%[[LENS]] : tensor<?xi32>) cu_seqlens(%[[CU]] : tensor<?xi64>) sinks(%[[S]] : tensor<8xf32>) causal window(128) rope(
// CHECK:   scf.yield %[[SEQ]]
// CHECK: return %[[R]]
// CHECK: func.func private @[[KERNEL]](%{{.*}}: memref<?x8x1x64xf32>, %[[KK:[^:]*]]: memref<?x16x2x64xf32>, %{{.*}}: memref<?x16x2x32xf32>, %{{.*}}: memref<?x1xi64>, %[[TT:[^:]*]]: memref<?x32xi32>, %[[LL:[^:]*]]: memref<?xi32>, %{{.*}}: memref<8xf32>, %{{.*}}: memref<?x8x1x32xf32>)
// CHECK: %[[STARTS:.*]] = memref.alloc(%{{.*}}) : memref<?xindex>
// CHECK: %[[UNITS:.*]] = scf.for %[[SB2:.*]] = %{{.*}} iter_args(%[[U:.*]] = %{{.*}}) -> (index) {
// CHECK:   memref.store %[[U]], %[[STARTS]][%[[SB2]]]
// CHECK:   memref.load %[[LL]][%[[SB2]]] : memref<?xi32>
// CHECK:   arith.ceildivui
// CHECK: %[[WORKERS:.*]] = arith.minsi %c2, %[[UNITS]] : index
// CHECK: memref.alloc(%{{.*}}) : memref<?x544xf32>
// CHECK: scf.parallel (%[[W:.*]]) = (%{{.*}}) to (%[[WORKERS]]) step
// CHECK:   %[[LO:.*]] = arith.muli %[[W]], %[[UNITS]] : index
// CHECK:   arith.divui %[[LO]], %[[WORKERS]]
// CHECK:   scf.for %[[SEQB:.*]] = %{{.*}} to %{{.*}} step
// CHECK:     memref.load %[[TT]][%[[SEQB]], %{{.*}}] : memref<?x32xi32>
// CHECK:     memref.prefetch %[[KK]]
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %c2{{.*}}) step
// ONE-THREAD-LABEL: func.func private @pe_attention_kernel
// ONE-THREAD-NOT: scf.parallel
// ONE-THREAD: return
func.func @decode(%q: tensor<?x8x64xf32>, %kc: tensor<?x16x2x64xf32>, %vc: tensor<?x16x2x32xf32>,
                  %bt: tensor<?x32xi32>, %lens: tensor<?xi32>, %cu: tensor<?xi64>, %s: tensor<8xf32>) -> tensor<?x8x32xf32> {
  %o = pe.paged_attention %q, %kc, %vc block_table(%bt : tensor<?x32xi32>) kv_lens(%lens : tensor<?xi32>) cu_seqlens(%cu : tensor<?xi64>) sinks(%s : tensor<8xf32>) causal window(128) rope(#pe.rope<theta = 500000.0, rotary_dim = 64>) softcap(50.0) : tensor<?x8x64xf32>, tensor<?x16x2x64xf32>, tensor<?x16x2x32xf32> -> tensor<?x8x32xf32>
  return %o : tensor<?x8x32xf32>
}

// -----

// An MQA group of 32 query heads is more rows than the decode kernel holds:
// the op stays for the expansion.
// CHECK-LABEL: func.func @mqa32
// CHECK-NOT: pe_attention_kernel
// CHECK: pe.paged_attention
func.func @mqa32(%q: tensor<?x32x64xf32>, %kc: tensor<?x16x1x64xf32>, %vc: tensor<?x16x1x64xf32>,
                 %bt: tensor<?x32xi32>, %lens: tensor<?xi32>, %cu: tensor<?xi64>) -> tensor<?x32x64xf32> {
  %o = pe.paged_attention %q, %kc, %vc block_table(%bt : tensor<?x32xi32>) kv_lens(%lens : tensor<?xi32>) cu_seqlens(%cu : tensor<?xi64>) causal : tensor<?x32x64xf32>, tensor<?x16x1x64xf32>, tensor<?x16x1x64xf32> -> tensor<?x32x64xf32>
  return %o : tensor<?x32x64xf32>
}

// A soft mask [T, H|1, K] is read as [T, H|1, 1, K] (row b: sequence b's
// query); the kernel's rows are K columns long.
// CHECK-LABEL: func.func @mask
// CHECK-SAME: %[[M:[^:]*]]: tensor<?x1x?xf32>)
// CHECK: scf.if %{{.*}} -> (tensor<?x8x64xf32>) {
// CHECK: %[[M4:.*]] = tensor.expand_shape %[[M]] {{\[\[}}0], [1, 2], [3]] output_shape [%{{.*}}, 1, 1, %{{.*}}] : tensor<?x1x?xf32> into tensor<?x1x1x?xf32>
// CHECK: %[[MB:.*]] = bufferization.to_buffer %[[M4]] read_only
// CHECK: call @[[KERNEL:pe_attention_kernel[_0-9]*]](%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[MB]], %{{.*}})
// CHECK: } else {
// CHECK: pe.paged_attention {{.*}} mask(%[[M]] : tensor<?x1x?xf32>)
// CHECK: func.func private @[[KERNEL]](
// CHECK-SAME: %[[MK:[^:]*]]: memref<?x1x1x?xf32>
// CHECK: memref.dim %[[MK]], %c3
func.func @mask(%q: tensor<?x8x64xf32>, %kc: tensor<?x16x2x64xf32>, %vc: tensor<?x16x2x64xf32>,
                %bt: tensor<?x32xi32>, %lens: tensor<?xi32>, %cu: tensor<?xi64>, %m: tensor<?x1x?xf32>) -> tensor<?x8x64xf32> {
  %o = pe.paged_attention %q, %kc, %vc block_table(%bt : tensor<?x32xi32>) kv_lens(%lens : tensor<?xi32>) cu_seqlens(%cu : tensor<?xi64>) mask(%m : tensor<?x1x?xf32>) causal : tensor<?x8x64xf32>, tensor<?x16x2x64xf32>, tensor<?x16x2x64xf32> -> tensor<?x8x64xf32>
  return %o : tensor<?x8x64xf32>
}

// -----

// Decode tiles follow the cache layout: over hnd pages two pages (32 keys;
// the scores S^T 32 keys x 16 rows), where a head's rows of a page lie side
// by side; over nhd pages of several KV heads 16 keys, and the rows
// prefetched are the same head's (no wrap of the head at 2).
// CHECK-LABEL: func.func @tiles_nhd
// CHECK-LABEL: func.func @tiles_hnd
// CHECK: func.func private @{{pe_attention_kernel[_0-9]*}}(%{{.*}}: memref<?x8x1x64xf32>, %{{.*}}: memref<?x16x2x64xf32>
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<16x16xf32>
// CHECK-NOT: arith.cmpi uge, %{{.*}}, %c2{{(_[0-9]+)?}} : index
// CHECK: func.func private @{{pe_attention_kernel[_0-9]*}}(%{{.*}}: memref<?x8x1x64xf32>, %[[KC:[^:]*]]: memref<?x2x16x64xf32>
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<32x16xf32>
// The task walks the two KV heads inside each tile; over hnd pages a row
// prefetched past the tile is the next head's (the last head's: the first
// head's, on the next tile): step j + 16 (4 KiB of 256-byte rows) against
// the tile's keys, the head + 1 wrapping at 2.
// CHECK: %[[STEP:.*]] = arith.addi %arg{{[0-9]+}}, %c16{{(_[0-9]+)?}} : index
// CHECK: %[[PAST:.*]] = arith.cmpi uge, %[[STEP]], %[[TILE:[0-9]+]] : index
// CHECK: %[[NEXT:.*]] = arith.addi %[[HEAD:arg[0-9]+]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[WRAPS:.*]] = arith.cmpi uge, %[[NEXT]], %c2{{(_[0-9]+)?}} : index
// CHECK: %[[OTHER:.*]] = arith.select %[[WRAPS]], %c0{{(_[0-9]+)?}}, %[[NEXT]] : index
// CHECK: %[[PHEAD:.*]] = arith.select %[[PAST]], %[[OTHER]], %[[HEAD]] : index
// CHECK: memref.prefetch %[[KC]][%{{.*}}, %[[PHEAD]], %{{.*}}, %{{.*}}], read, locality<3>
func.func @tiles_nhd(%q: tensor<?x8x64xf32>, %kc: tensor<?x16x2x64xf32>, %vc: tensor<?x16x2x64xf32>,
                     %bt: tensor<?x32xi32>, %lens: tensor<?xi32>, %cu: tensor<?xi64>) -> tensor<?x8x64xf32> {
  %o = pe.paged_attention %q, %kc, %vc block_table(%bt : tensor<?x32xi32>) kv_lens(%lens : tensor<?xi32>) cu_seqlens(%cu : tensor<?xi64>) causal : tensor<?x8x64xf32>, tensor<?x16x2x64xf32>, tensor<?x16x2x64xf32> -> tensor<?x8x64xf32>
  return %o : tensor<?x8x64xf32>
}
func.func @tiles_hnd(%q: tensor<?x8x64xf32>, %kc: tensor<?x2x16x64xf32>, %vc: tensor<?x2x16x64xf32>,
                     %bt: tensor<?x32xi32>, %lens: tensor<?xi32>, %cu: tensor<?xi64>) -> tensor<?x8x64xf32> {
  %o = pe.paged_attention %q, %kc, %vc block_table(%bt : tensor<?x32xi32>) kv_lens(%lens : tensor<?xi32>) cu_seqlens(%cu : tensor<?xi64>) layout(hnd) causal : tensor<?x8x64xf32>, tensor<?x2x16x64xf32>, tensor<?x2x16x64xf32> -> tensor<?x8x64xf32>
  return %o : tensor<?x8x64xf32>
}
