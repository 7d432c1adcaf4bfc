// RUN: pe-opt %s --pe-gpu-tile-attention -split-input-file | FileCheck %s
// The decode splits are sized for the chip's threads: 108 SMs x 256 threads
// of 255 registers for an A100 (sm_80), 56 x 256 for a product named by its
// multiprocessors, 132 x 256 for the default sm_90a.
// RUN: pe-opt %s --pe-gpu-tile-attention=chip=sm_80 -split-input-file | FileCheck %s --check-prefix=SM80
// RUN: pe-opt %s --pe-gpu-tile-attention="chip=sm_80 multiprocessors=56" -split-input-file | FileCheck %s --check-prefix=SM56
// SM80-LABEL: func.func @decode_splits
// SM80: arith.ceildivui %c27648,
// SM56-LABEL: func.func @decode_splits
// SM56: arith.ceildivui %c14336,
// RUN: not pe-opt %s --pe-gpu-tile-attention=chip=sm_75 -split-input-file 2>&1 | FileCheck %s --check-prefix=BADCHIP
// BADCHIP: pe-gpu-tile-attention: unknown chip 'sm_75'

// GQA 8/2, bf16, D = Dv = 64, causal window with ALiBi and interleaved
// partial RoPE: one scf.parallel over (batch, query head, query, chunk of 8
// value channels); query head h reads KV head h / 4; each thread streams
// the keys in an scf.for holding (max, sum, output chunk), rotating both
// rows piece by piece (interleaved pairs split by shuffles) from the f32
// tables of the query's and the key's rows. The output is the only buffer
// the kernel allocates: no scores, no rotated Q/K.
// CHECK-LABEL: func.func @gqa_rope_alibi_window
// CHECK: %[[Q:.*]] = bufferization.to_buffer %arg0 read_only : tensor<2x8x?x64xbf16> to memref<2x8x?x64xbf16>
// CHECK: %[[K:.*]] = bufferization.to_buffer %arg1 read_only
// CHECK: %[[V:.*]] = bufferization.to_buffer %arg2 read_only
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) : memref<2x8x?x64xbf16>
// CHECK-NOT: memref.alloc
// CHECK: %[[KEYS:.*]] = memref.dim %[[K]], %c2
// CHECK: scf.parallel (%[[B:.*]], %[[H:.*]], %[[I:.*]], %[[C:.*]]) = ({{.*}}) to (%{{.*}}, %c8{{.*}}, %{{.*}}, %c8{{.*}}) step
// CHECK: %[[KVH:.*]] = arith.divui %[[H]], %c4
// CHECK: %[[E0:.*]] = arith.muli %[[C]], %c8
// CHECK: %[[QP:.*]] = arith.extsi
// CHECK: %[[SLOPE:.*]] = memref.load %{{.*}}[%[[H]]] : memref<8xf32>
// Tiles of 32 keys: the range of a tile's key positions decides whether the
// causal/window masks hide all of it (then its state passes unchanged).
// CHECK: scf.for %[[T0:[a-z0-9_]+]] = %{{.*}} to %[[KEYS]] step %c32 iter_args(%[[TM:[a-z0-9_]+]] = %{{.*}}, %[[TL:[a-z0-9_]+]] = %{{.*}}, %[[TACC:[a-z0-9_]+]] = %{{.*}}) -> (f32, f32, vector<8xf32>)
// CHECK: %[[T1:.*]] = arith.minui %{{.*}}, %[[KEYS]]
// CHECK: %[[RANGE:.*]]:2 = scf.for %{{.*}} = %[[T0]] to %[[T1]] {{.*}} -> (i64, i64)
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: arith.cmpi sgt, %[[RANGE]]#0, %[[QP]] : i64
// CHECK: %[[STATE:.*]]:3 = scf.if %{{.*}} -> (f32, f32, vector<8xf32>) {
// CHECK-NEXT: scf.yield %[[TM]], %[[TL]], %[[TACC]]
// CHECK-NEXT: } else {
// CHECK: scf.for %[[J:[a-z0-9_]+]] = %[[T0]] to %[[T1]] step %{{.*}} iter_args(%[[M:[a-z0-9_]+]] = %[[TM]], %[[L:[a-z0-9_]+]] = %[[TL]], %[[ACC:[a-z0-9_]+]] = %[[TACC]]) -> (f32, f32, vector<8xf32>)
// CHECK: vector.load %{{.*}}[%[[I]], %{{.*}}] : memref<?x16xf32>, vector<8xf32>
// CHECK: vector.load %[[Q]][%[[B]], %[[H]], %[[I]], %{{.*}}] : memref<2x8x?x64xbf16>, vector<16xbf16>
// CHECK: vector.shuffle {{.*}} [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK: vector.load %{{.*}}[%[[J]], %{{.*}}] : memref<?x16xf32>, vector<8xf32>
// CHECK: vector.load %[[K]][%[[B]], %[[KVH]], %[[J]], %{{.*}}] : memref<2x2x?x64xbf16>, vector<16xbf16>
// CHECK: math.fma
// The pass-through channels 32..63 are read as they are.
// CHECK: vector.load %[[K]][%[[B]], %[[KVH]], %[[J]], %c32{{.*}}] : memref<2x2x?x64xbf16>, vector<8xbf16>
// CHECK: %[[DOT:.*]] = vector.reduction <add>, %{{.*}} : vector<8xf32> into f32
// CHECK: %[[S:.*]] = arith.mulf %[[DOT]], %{{.*}} : f32
// ALiBi: score + slope * (k - q) as one FMA; then -inf where causal or the
// window hides the key.
// CHECK: %[[KP:.*]] = memref.load %{{.*}}[%[[J]]] : memref<?xi64>
// CHECK: %[[BIASED:.*]] = math.fma %[[SLOPE]], %{{.*}}, %[[S]] : f32
// CHECK: arith.cmpi sgt, %[[KP]], %[[QP]] : i64
// CHECK: %[[MASKED:.*]] = arith.select %{{.*}}, %{{.*}}, %[[BIASED]] : f32
// CHECK: vector.load %[[V]][%[[B]], %[[KVH]], %[[J]], %[[E0]]] : memref<2x2x?x64xbf16>, vector<8xbf16>
// CHECK: arith.cmpf ogt, %[[MASKED]], %[[M]] : f32
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, vector<8xf32>
// CHECK: arith.divf
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[B]], %[[H]], %[[I]], %[[E0]]] : memref<2x8x?x64xbf16>, vector<8xbf16>
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
func.func @gqa_rope_alibi_window(%q: tensor<2x8x?x64xbf16>, %k: tensor<2x2x?x64xbf16>,
                                 %v: tensor<2x2x?x64xbf16>, %pos: tensor<?xi32>) -> tensor<2x8x?x64xbf16> {
  %o = pe.attention %q, %k, %v q_positions(%pos : tensor<?xi32>) causal window(16)
       rope(#pe.rope<theta = 10000.0, rotary_dim = 32, style = interleaved>) alibi(8.0)
       : tensor<2x8x?x64xbf16>, tensor<2x2x?x64xbf16>, tensor<2x2x?x64xbf16> -> tensor<2x8x?x64xbf16>
  return %o : tensor<2x8x?x64xbf16>
}

// -----

// A mask [1, 1, Sq, Skv] broadcasts over batch and heads; Dv = 24 is three
// chunks of 8; the scale multiplies the dot product.
// CHECK-LABEL: func.func @broadcast_mask
// CHECK: %[[MASK:.*]] = bufferization.to_buffer %arg3 read_only
// CHECK: scf.parallel (%[[B:.*]], %[[H:.*]], %[[I:.*]], %[[C:.*]]) = ({{.*}}) to (%{{.*}}, %c4{{.*}}, %{{.*}}, %c3{{.*}}) step
// CHECK: scf.for %[[J:[a-z0-9_]+]] =
// CHECK: arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK: %[[ENTRY:.*]] = memref.load %[[MASK]][%c0{{.*}}, %c0{{.*}}, %[[I]], %[[J]]] : memref<1x1x?x?xf32>
// CHECK: arith.addf %{{.*}}, %[[ENTRY]] : f32
func.func @broadcast_mask(%q: tensor<1x4x?x16xf32>, %k: tensor<1x4x?x16xf32>, %v: tensor<1x4x?x24xf32>,
                          %m: tensor<1x1x?x?xf32>) -> tensor<1x4x?x24xf32> {
  %o = pe.attention %q, %k, %v mask(%m : tensor<1x1x?x?xf32>) scale(0.5)
       : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x24xf32> -> tensor<1x4x?x24xf32>
  return %o : tensor<1x4x?x24xf32>
}

// -----

// A D = 128 query row does not fit a thread's registers: the thread steps
// through the channels in loops (the rotated pairs, 8 at a time), reading
// the query again for every key.
// CHECK-LABEL: func.func @wide_head
// CHECK-NOT: pe.attention
// CHECK: scf.parallel
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %c1
// CHECK: scf.for %[[P:.*]] = %c0{{.*}} to %c64{{.*}} step %c8{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8xf32>)
// CHECK: vector.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[P]]] : memref<1x32x?x128xf32>, vector<8xf32>
func.func @wide_head(%q: tensor<1x32x?x128xf32>, %k: tensor<1x8x?x128xf32>,
                     %v: tensor<1x8x?x128xf32>) -> tensor<1x32x?x128xf32> {
  %o = pe.attention %q, %k, %v causal rope(#pe.rope<rotary_dim = 128>)
       : tensor<1x32x?x128xf32>, tensor<1x8x?x128xf32>, tensor<1x8x?x128xf32> -> tensor<1x32x?x128xf32>
  return %o : tensor<1x32x?x128xf32>
}

// -----

// Absorbed latent attention (DeepSeek's decode over the compressed cache):
// 16 query heads of 512 + 64 channels against one KV head whose first 512
// channels are the values. A thread per (batch, head, query, chunk of 8 of
// the 512 value channels, key split) steps through the 32 rotated pairs
// (the trailing block, interleaved) and the 512 pass-through channels of
// each key row; the values are the buffer of the keys' slice (a view of
// the keys once bufferized, not a copy).
// CHECK-LABEL: func.func @absorbed_latent
// CHECK-NOT: pe.attention
// CHECK: %[[K:.*]] = bufferization.to_buffer %arg1 read_only : tensor<2x1x?x576xbf16>
// CHECK: bufferization.to_buffer %{{.*}} read_only : tensor<2x1x?x512xbf16>
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) = ({{.*}}) to (%c2{{.*}}, %c16{{.*}}, %c1{{.*}}, %c64{{.*}}, %{{.*}}) step
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c32{{.*}} step %c8{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8xf32>)
// CHECK: vector.load %[[K]][%{{.*}}] : memref<2x1x?x576xbf16>, vector<16xbf16>
// CHECK: scf.for %[[E:.*]] = %c0{{.*}} to %c512 step %c8{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8xf32>)
// CHECK: vector.load %[[K]][%{{.*}}, %{{.*}}, %{{.*}}, %[[E]]] : memref<2x1x?x576xbf16>, vector<8xbf16>
func.func @absorbed_latent(%q: tensor<2x16x1x576xbf16>, %c: tensor<2x1x?x576xbf16>) -> tensor<2x16x1x512xbf16> {
  %c2 = arith.constant 2 : index
  %s = tensor.dim %c, %c2 : tensor<2x1x?x576xbf16>
  %v = tensor.extract_slice %c[0, 0, 0, 0] [2, 1, %s, 512] [1, 1, 1, 1] : tensor<2x1x?x576xbf16> to tensor<2x1x?x512xbf16>
  %o = pe.attention %q, %c, %v causal rope(#pe.rope<rotary_dim = 64, rotary_offset = 512, style = interleaved>)
       : tensor<2x16x1x576xbf16>, tensor<2x1x?x576xbf16>, tensor<2x1x?x512xbf16> -> tensor<2x16x1x512xbf16>
  return %o : tensor<2x16x1x512xbf16>
}

// -----

// Heads of more than 1024 channels: the reference lowering.
// CHECK-LABEL: func.func @wider_head
// CHECK: pe.attention
// CHECK-NOT: scf.parallel
func.func @wider_head(%q: tensor<1x4x?x1280xf32>, %k: tensor<1x4x?x1280xf32>,
                      %v: tensor<1x4x?x1280xf32>) -> tensor<1x4x?x1280xf32> {
  %o = pe.attention %q, %k, %v causal
       : tensor<1x4x?x1280xf32>, tensor<1x4x?x1280xf32>, tensor<1x4x?x1280xf32> -> tensor<1x4x?x1280xf32>
  return %o : tensor<1x4x?x1280xf32>
}

// -----

// Decode (one query, static): the keys in splits = clamp(ceil(Skv / 32), 1,
// cap) ranges, cap = clamp(ceil(33792 / threads without splits), 1, 128)
// (33792: the threads of 255 registers an sm_90a's 132 SMs hold);
// one thread per (batch, head, query, chunk, split) writes the
// split's output chunk and, from chunk 0, its (max, sum); a second loop per
// (batch, head, query, chunk) merges the splits and normalizes.
// CHECK-LABEL: func.func @decode_splits
// CHECK: %[[KEYS:.*]] = memref.dim %{{.*}}, %c2
// CHECK: %[[CAPN:.*]] = arith.ceildivui %c33792, %{{.*}}
// CHECK: %[[CAP1:.*]] = arith.maxui %[[CAPN]], %c1
// CHECK: %[[CAP:.*]] = arith.minui %[[CAP1]], %c128
// CHECK: %[[N:.*]] = arith.ceildivui %[[KEYS]], %c32
// CHECK: %[[N1:.*]] = arith.maxui %[[N]], %c1
// CHECK: %[[SPLITS:.*]] = arith.minui %[[N1]], %[[CAP]]
// CHECK: %[[LEN:.*]] = arith.ceildivui %[[KEYS]], %[[SPLITS]]
// CHECK: %[[POUT:.*]] = memref.alloc(%[[SPLITS]]) : memref<1x8x1x?x64xf32>
// CHECK: %[[PSTATS:.*]] = memref.alloc(%[[SPLITS]]) : memref<1x8x1x?x2xf32>
// CHECK: scf.parallel (%[[B:.*]], %[[H:.*]], %[[I:.*]], %[[C:.*]], %[[S:.*]]) = ({{.*}}) to (%c1{{.*}}, %c8{{.*}}, %c1{{.*}}, %c8{{.*}}, %[[SPLITS]])
// CHECK: %[[E0:.*]] = arith.muli %[[C]], %c8
// CHECK: %[[K0:.*]] = arith.muli %[[S]], %[[LEN]]
// CHECK: %[[END:.*]] = arith.addi %[[K0]], %[[LEN]]
// CHECK: %[[K1:.*]] = arith.minui %[[END]], %[[KEYS]]
// CHECK: %[[STATE:.*]]:3 = scf.for %{{.*}} = %[[K0]] to %[[K1]]
// CHECK: vector.store %[[STATE]]#2, %[[POUT]][%[[B]], %[[H]], %[[I]], %[[S]], %[[E0]]]
// CHECK: scf.if
// CHECK: memref.store %[[STATE]]#0, %[[PSTATS]][%[[B]], %[[H]], %[[I]], %[[S]], %c0
// CHECK: memref.store %[[STATE]]#1, %[[PSTATS]][%[[B]], %[[H]], %[[I]], %[[S]], %c1
// CHECK: scf.parallel (%{{.*}}) = ({{.*}}) to (%c1{{.*}}, %c8{{.*}}, %c1{{.*}}, %c8{{.*}})
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[SPLITS]]
// CHECK: memref.load %[[PSTATS]]
// CHECK: memref.load %[[PSTATS]]
// CHECK: vector.load %[[POUT]]
// CHECK: arith.divf
func.func @decode_splits(%q: tensor<1x8x1x64xf32>, %k: tensor<1x2x?x64xf32>,
                         %v: tensor<1x2x?x64xf32>) -> tensor<1x8x1x64xf32> {
  %o = pe.attention %q, %k, %v causal
       : tensor<1x8x1x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x1x64xf32>
  return %o : tensor<1x8x1x64xf32>
}

// -----

// A paged attention (hnd cache of 4-key pages, GQA 8/2, Dv = 16 in chunks of
// 8, RoPE on the queries): the op's checks first, tables of the rows'
// positions (each row's sequence by bisection of cu_seqlens), then one grid
// over (row, head, chunk, split) that reads the block table row of its
// sequence per key (page j / 4, slot j mod 4 at [page, kv head, slot]) and
// either writes its output (one split) or its partial state, merged by a
// second loop only when there are several splits. No loop over the
// sequences, no gathered copy of the pages. The checks: one loop over the
// sequences (key and query counts), then one over the block table's B x 6
// entries, entry t at (t / 6, t mod 6), each checked where its column holds
// keys (independent iterations: a GPU thread each, not a nest in one).
// CHECK-LABEL: func.func @paged
// CHECK-SAME: (%[[Q:.*]]: tensor<?x8x32xf32>, %[[KC:.*]]: tensor<?x4x2x32xf32>, %[[VC:.*]]: tensor<?x4x2x16xf32>, %[[BT:.*]]: tensor<?x6xi32>, %[[LENS:.*]]: tensor<?xi32>, %[[CU:.*]]: tensor<?xi64>)
// CHECK: scf.for
// CHECK: call @pe_runtime_kv_length_out_of_range
// CHECK-NOT: call @pe_runtime_page_out_of_range
// CHECK: %[[ENTRIES:.*]] = arith.muli %{{.*}}, %c6 : index
// CHECK-NEXT: scf.for %[[T:.*]] = %{{.*}} to %[[ENTRIES]] step %{{.*}} {
// CHECK-NEXT: %[[SEQ:.*]] = arith.divui %[[T]], %c6 : index
// CHECK-NEXT: %[[COL:.*]] = arith.remui %[[T]], %c6 : index
// CHECK: %[[HOLDS:.*]] = arith.cmpi slt, %[[COL]], %{{.*}} : index
// CHECK: %[[GATE:.*]] = arith.andi %{{.*}}, %[[HOLDS]] : i1
// CHECK-NEXT: scf.if %[[GATE]] {
// CHECK-NEXT: tensor.extract %[[BT]][%[[SEQ]], %[[COL]]] : tensor<?x6xi32>
// CHECK: call @pe_runtime_page_out_of_range
// CHECK: tensor.generate
// CHECK: scf.while
// CHECK: %[[K:.*]] = bufferization.to_buffer %[[KC]] read_only
// CHECK: %[[V:.*]] = bufferization.to_buffer %[[VC]] read_only
// CHECK: %[[TABLE:.*]] = bufferization.to_buffer %[[BT]] read_only
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) : memref<?x8x16xf32>
// CHECK: %[[CAP:.*]] = arith.minui %{{.*}}, %c128
// CHECK: %[[SPLITS:.*]] = arith.minui %{{.*}}, %[[CAP]]
// CHECK: %[[DIRECT:.*]] = arith.cmpi eq, %[[SPLITS]], %c1
// CHECK: %[[HELD:.*]] = arith.select %[[DIRECT]], %c0{{.*}}, %[[SPLITS]]
// CHECK: %[[POUT:.*]] = memref.alloc(%{{.*}}, %[[HELD]]) : memref<?x8x?x16xf32>
// CHECK: %[[PSTATS:.*]] = memref.alloc(%{{.*}}, %[[HELD]]) : memref<?x8x?x2xf32>
// CHECK: scf.parallel (%[[T:.*]], %[[H:.*]], %[[C:.*]], %[[S:.*]]) = ({{.*}}) to (%{{.*}}, %c8, %c2{{.*}}, %[[SPLITS]])
// CHECK: %[[BISECT:.*]]:2 = scf.while ({{.*}}) : (i64, i64) -> (i64, i64)
// CHECK: %[[SEQ:.*]] = arith.index_cast %[[BISECT]]#0 : i64 to index
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %c1
// CHECK: %[[COLUMN:.*]] = arith.divui %[[J]], %[[PAGE:.*]] : index
// CHECK: %[[ENTRY:.*]] = memref.load %[[TABLE]][%[[SEQ]], %[[COLUMN]]] : memref<?x6xi32>
// CHECK: %[[PAGEIDX:.*]] = arith.index_cast %[[ENTRY]] : i32 to index
// CHECK: %[[SLOT:.*]] = arith.remui %[[J]], %[[PAGE]] : index
// CHECK: vector.load %[[K]][%[[PAGEIDX]], %{{.*}}, %[[SLOT]], %{{.*}}] : memref<?x4x2x32xf32>
// CHECK: vector.load %[[V]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<?x4x2x16xf32>
// CHECK: scf.if %[[DIRECT]] {
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[T]], %[[H]], %{{.*}}] : memref<?x8x16xf32>
// CHECK: } else {
// CHECK: vector.store %{{.*}}, %[[POUT]][%[[T]], %[[H]], %[[S]], %{{.*}}]
// CHECK: memref.store %{{.*}}, %[[PSTATS]][%[[T]], %[[H]], %[[S]], %c0
// CHECK: scf.if %[[DIRECT]] {
// CHECK-NEXT: } else {
// CHECK: scf.parallel
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[SPLITS]]
// CHECK: memref.load %[[PSTATS]]
// CHECK: vector.store %{{.*}}, %[[OUT]]
// CHECK-NOT: pe.gather_pages
// CHECK-NOT: pe.attention
func.func @paged(%q: tensor<?x8x32xf32>, %kc: tensor<?x4x2x32xf32>, %vc: tensor<?x4x2x16xf32>,
                 %bt: tensor<?x6xi32>, %lens: tensor<?xi32>, %cu: tensor<?xi64>) -> tensor<?x8x16xf32> {
  %o = pe.paged_attention %q, %kc, %vc block_table(%bt : tensor<?x6xi32>)
       kv_lens(%lens : tensor<?xi32>) cu_seqlens(%cu : tensor<?xi64>) layout(hnd) causal
       rope(#pe.rope<theta = 10000.0, rotary_dim = 32>)
       : tensor<?x8x32xf32>, tensor<?x4x2x32xf32>, tensor<?x4x2x16xf32> -> tensor<?x8x16xf32>
  return %o : tensor<?x8x16xf32>
}
