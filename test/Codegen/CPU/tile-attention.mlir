// The schedule comes from the module's target: an AVX-512 CPU here (16 f32
// lanes, 32 vector registers); tile-attention-targets.mlir covers others.
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=sapphirerapids" --pe-tile-attention -split-input-file | FileCheck %s
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=sapphirerapids" --pe-tile-attention="threads=2" -split-input-file | FileCheck %s --check-prefix=CHECK-THREADS
// RUN: not pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=sapphirerapids" --pe-tile-attention="rows=-1" -split-input-file 2>&1 | FileCheck %s --check-prefix=CHECK-BAD

// RUN: not pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=sapphirerapids" --pe-tile-attention="block-keys=4611686018427387904" -split-input-file 2>&1 | FileCheck %s --check-prefix=CHECK-BAD
// CHECK-BAD: pe-tile-attention: threads must be positive, rows and block-keys non-negative

// GQA 8/2 with fused RoPE and a causal mask. Rows: 32 queries x 2 heads = 64
// (4 vectors); key tiles of 48 (their rows within 3/4 of the 32 KiB L1d LLVM gives the
// CPU: 48 x 4 (64 + 64) bytes). The attention becomes a call of a kernel on
// buffers of the inputs (read only) that writes one result buffer; its
// scratch is per task and nothing has a dimension of Sq or Skv except the
// operands and the result.
// CHECK-LABEL: func.func @gqa_rope_causal
// CHECK-DAG: %[[Q:.*]] = bufferization.to_buffer %arg0 read_only : tensor<1x8x?x64xf32> to memref<1x8x?x64xf32>
// CHECK-DAG: %[[K:.*]] = bufferization.to_buffer %arg1 read_only
// CHECK-DAG: %[[V:.*]] = bufferization.to_buffer %arg2 read_only
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) : memref<1x8x?x64xf32>
// Sq is dynamic: a call with one query (a decode step) runs the decode
// kernel, any other the prefill kernel.
// CHECK: %[[SQ:.*]] = memref.dim %[[Q]], %{{.*}} : memref<1x8x?x64xf32>
// CHECK: %[[ONE:.*]] = arith.cmpi eq, %[[SQ]], %{{.*}} : index
// CHECK: scf.if %[[ONE]] {
// CHECK-NEXT: call @pe_attention_kernel_0(%[[Q]], %[[K]], %[[V]], %{{.*}}, %[[OUT]])
// CHECK-NEXT: } else {
// CHECK-NEXT: call @pe_attention_kernel(%[[Q]], %[[K]], %[[V]], %{{.*}}, %[[OUT]])
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// A second attention of the same shapes calls the same two kernels.
// CHECK: call @pe_attention_kernel_0(
// CHECK: call @pe_attention_kernel(
// CHECK-NOT: func.func private @pe_attention_kernel_1
// CHECK-LABEL: func.func private @pe_attention_kernel(
// Sequential code: one set of scratch, allocated before the task loops;
// the state (Q^T, O^T, statistics) of the 16 blocks of queries a task
// holds, each K/V tile (keys and values) packed once for all of them.
// CHECK-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<16x64x64xf32>
// CHECK-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<48x64xf32>
// CHECK-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<16x2xi64>
// CHECK-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<48xi64>
// CHECK-NOT: scf.parallel
// The 4 x 6 micro-tile of S^T = K Qt: 24 vector FMAs per channel, two
// channels a trip of its loop (32 trips at D = 64, no remainder loop); the
// rows' max over the tile's scores (from -inf) follows each micro-tile's
// stores, six keys per row vector, and the softmax of a tile whose scores
// need no fix reads it instead of the scores.
// CHECK: %[[NEGINF:.*]] = arith.constant dense<0xFF800000> : vector<16xf32>
// CHECK: vector.store %[[NEGINF]], %[[TILEMAX:[a-z_0-9]+]][{{.*}}] : memref<64xf32>
// CHECK: %[[ACC:.*]]:24 = scf.for %{{.*}} = %c0{{(_[0-9]+)?}} to %c64{{(_[0-9]+)?}} step %c2{{(_[0-9]+)?}} iter_args({{.*}}) -> ({{(vector<16xf32>, )+}}vector<16xf32>)
// CHECK-COUNT-48: math.fma %{{.*}} : vector<16xf32>
// CHECK-NOT: scf.for
// CHECK-COUNT-24: vector.store %[[ACC]]#
// CHECK: %[[M0:.*]] = vector.load %[[TILEMAX]]
// CHECK-NEXT: %[[GT:.*]] = arith.cmpf ogt, %[[ACC]]#0, %[[M0]]
// CHECK-NEXT: arith.select %[[GT]], %[[ACC]]#0, %[[M0]]
// CHECK-COUNT-5: arith.cmpf ogt, %[[ACC]]#
// CHECK: vector.store %{{.*}}, %[[TILEMAX]]
// The softmax's read, at its row vector's index (the loop's own variable):
// m' = max(m, the tile's max), the latter the first operand.
// CHECK: %[[TM:.*]] = vector.load %[[TILEMAX]][%arg{{[0-9]+}}] : memref<64xf32>, vector<16xf32>
// CHECK-NEXT: arith.cmpf ogt, %[[TM]], %{{.*}} : vector<16xf32>
// exp is a polynomial on 2^n (no math.exp, no libm call).
// CHECK-NOT: math.exp
// O^T = alpha O^T + V^T P on micro-tiles of 4 row vectors x 6 value
// channels, two keys a trip; a tile's odd last key in a loop of its own.
// CHECK: %[[PV:.*]]:24 = scf.for %{{.*}} = %{{.*}} to %[[SPLIT:[0-9]+]] step %c2{{(_[0-9]+)?}} iter_args
// CHECK-COUNT-48: math.fma %{{.*}} : vector<16xf32>
// CHECK: scf.for %{{.*}} = %[[SPLIT]] to %{{.*}} step %c1{{(_[0-9]+)?}} iter_args(%{{.*}} = %[[PV]]#0, {{.*}} = %[[PV]]#23)
// CHECK-COUNT-24: math.fma %{{.*}} : vector<16xf32>
// CHECK-NOT: math.exp
// CHECK: return
// The decode kernel: 1 query x 4 heads in one vector of rows, Q and O
// row-major (16 x 64), scores as dot products whose rows share one
// reduction (the halves of two rows added, then of two pairs, then the
// blocks of 4 lanes within the vector).
// CHECK-LABEL: func.func private @pe_attention_kernel_0(
// CHECK-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<16x64xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23] : vector<16xf32>, vector<16xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31] : vector<16xf32>, vector<16xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27] : vector<16xf32>, vector<16xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13] : vector<16xf32>, vector<16xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14] : vector<16xf32>, vector<16xf32>
// CHECK: %[[SUMS:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 4, 8, 12] : vector<16xf32>, vector<16xf32>
// CHECK: vector.store %[[SUMS]], %{{.*}} : memref<16x16xf32>, vector<4xf32>
// CHECK: return
#llama3 = #pe.rope<theta = 500000.0, rotary_dim = 64, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>
func.func @gqa_rope_causal(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>, %v: tensor<1x2x?x64xf32>, %p: tensor<?xi32>) -> tensor<1x8x?x64xf32> {
  %o = pe.attention %q, %k, %v q_positions(%p : tensor<?xi32>) k_positions(%p : tensor<?xi32>) causal rope(#llama3) : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  %o2 = pe.attention %o, %k, %v q_positions(%p : tensor<?xi32>) k_positions(%p : tensor<?xi32>) causal rope(#llama3) : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o2 : tensor<1x8x?x64xf32>
}

// CHECK-THREADS-LABEL: func.func private @pe_attention_kernel(
// Threads: tasks (batch, KV head, query group, key split) in one scf.parallel,
// scratch inside it; a second parallel loop combines split partials.
// CHECK-THREADS: memref.alloc(%{{.*}}) : memref<?x4224xf32>
// CHECK-THREADS: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) =
// CHECK-THREADS: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<16x64x64xf32>
// CHECK-THREADS: scf.if
// CHECK-THREADS: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) =

// -----

// Decode (one query, static): 1 query x 4 heads = 4 rows in one vector of
// statistics, Q and O row-major (16 x D), scores as reduced dot products,
// P V along the value channels. ALiBi and the mask are applied inside the
// tile; the mask is gathered.
// CHECK-LABEL: func.func private @pe_attention_kernel(
// CHECK: memref.collapse_shape %{{.*}} {{\[}}[0, 1, 2, 3]] : memref<1x1x1x?xf32> into memref<?xf32>
// CHECK-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<16x64xf32>
// CHECK-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<16xf32>
// CHECK: arith.addf %{{.*}} fastmath<reassoc> : vector<16xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 4, 8, 12] : vector<16xf32>, vector<16xf32>
// CHECK-NOT: vector.reduction
// CHECK: arith.sitofp %{{.*}} : vector<16xi64> to vector<16xf32>
// CHECK: vector.gather
func.func @decode_alibi_mask(%q: tensor<1x4x1x64xf32>, %k: tensor<1x1x?x64xf32>, %v: tensor<1x1x?x64xf32>, %m: tensor<1x1x1x?xf32>) -> tensor<1x4x1x64xf32> {
  %o = pe.attention %q, %k, %v mask(%m : tensor<1x1x1x?xf32>) alibi(8.0) : tensor<1x4x1x64xf32>, tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32> -> tensor<1x4x1x64xf32>
  return %o : tensor<1x4x1x64xf32>
}

// -----

// bf16: loads extend to f32, the result is rounded once.
// CHECK-LABEL: func.func private @pe_attention_kernel(
// CHECK: arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: memref.store %{{.*}} : memref<2x4x?x32xbf16>
func.func @bf16(%q: tensor<2x4x?x32xbf16>, %k: tensor<2x4x?x32xbf16>, %v: tensor<2x4x?x32xbf16>) -> tensor<2x4x?x32xbf16> {
  %o = pe.attention %q, %k, %v causal window(128) : tensor<2x4x?x32xbf16>, tensor<2x4x?x32xbf16>, tensor<2x4x?x32xbf16> -> tensor<2x4x?x32xbf16>
  return %o : tensor<2x4x?x32xbf16>
}

// -----

// Heads too wide for a task's stack scratch (1 MiB) are left to the
// reference lowering.
// CHECK-LABEL: func.func @wide
// CHECK: pe.attention
func.func @wide(%q: tensor<1x1x?x8192xf32>, %k: tensor<1x1x?x8192xf32>) -> tensor<1x1x?x8192xf32> {
  %o = pe.attention %q, %k, %k : tensor<1x1x?x8192xf32>, tensor<1x1x?x8192xf32>, tensor<1x1x?x8192xf32> -> tensor<1x1x?x8192xf32>
  return %o : tensor<1x1x?x8192xf32>
}

// -----

// A head of 2^55 channels: the scratch size would overflow 64 bits; the plan
// is overflow-checked and leaves the op to the reference lowering.
// CHECK-LABEL: func.func @huge_head
// CHECK: pe.attention
func.func @huge_head(%q: tensor<1x1x1x36028797018963968xf32>) -> tensor<1x1x1x36028797018963968xf32> {
  %o = pe.attention %q, %q, %q causal : tensor<1x1x1x36028797018963968xf32>, tensor<1x1x1x36028797018963968xf32>, tensor<1x1x1x36028797018963968xf32> -> tensor<1x1x1x36028797018963968xf32>
  return %o : tensor<1x1x1x36028797018963968xf32>
}

// -----

// Many query heads per KV head: the task's rows overflow the plan's
// arithmetic, so the op keeps the reference lowering (no division by zero,
// no overflow).
// CHECK-LABEL: func.func @huge_group
// CHECK: pe.attention
func.func @huge_group(%q: tensor<1x36028797018963968x1x16xf32>, %k: tensor<1x1x1x16xf32>) -> tensor<1x36028797018963968x1x16xf32> {
  %o = pe.attention %q, %k, %k : tensor<1x36028797018963968x1x16xf32>, tensor<1x1x1x16xf32>, tensor<1x1x1x16xf32> -> tensor<1x36028797018963968x1x16xf32>
  return %o : tensor<1x36028797018963968x1x16xf32>
}

// -----

// bf16 on AMX tiles (amx=true): S^T = K Q^T and O = P V as tile products,
// the AMX state requested first, P transposed by shuffles, V zipped into
// VNNI pairs, O row-major.
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=sapphirerapids" --pe-tile-attention="amx=true" -split-input-file | FileCheck %s --check-prefix=CHECK-AMX
// RUN: pe-opt %s --pe-cpu-pipeline="target-triple=x86_64-linux-gnu target-cpu=sapphirerapids amx=true" -split-input-file | FileCheck %s --check-prefix=CHECK-AMX-LLVM
// CHECK-AMX-LABEL: func.func private @pe_attention_kernel(%{{.*}}: memref<1x8x?x64xbf16>
// CHECK-AMX: call @pe_runtime_enable_amx()
// Q^T as VNNI pairs (D/2 x 2 rows) and O (rows x Dv) for each of the 16
// blocks of queries a task holds, V pairs (Bk/2 x 2 Dv) and P rows (rows x
// Bk) shared by them:
// CHECK-AMX-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<16x32x128xbf16>
// CHECK-AMX-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<16x64x64xf32>
// CHECK-AMX-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<48x128xbf16>
// CHECK-AMX-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<64x96xbf16>
// The K/V tile is packed once for the task's blocks: packing V looks for
// NaN/inf (all exponent bits set); then for each block of queries (its
// slot of Q and O) the tile products, and where a value was NaN or inf
// the vector P V that skips weight-0 keys, else the tile product.
// CHECK-AMX: scf.for {{.*}} -> (vector<16xi1>)
// CHECK-AMX: arith.andi %{{.*}}, %{{.*}} : vector<16xi16>
// CHECK-AMX: vector.shuffle {{.*}} [0, 16, 1, 17, 2, 18,
// CHECK-AMX: %[[NONFINITE:.*]] = vector.reduction <or>, %{{.*}} : vector<16xi1> into i1
// CHECK-AMX: memref.subview %{{.*}} : memref<16x32x128xbf16> to memref<32x128xbf16, strided<[128, 1], offset: ?>>
// Both products in 2 x 2 blocks of tiles (four independent accumulators):
// S^T over D = 64 (2 steps of 32 channels) ...
// CHECK-AMX-COUNT-4: amx.tile_zero : !amx.tile<16x16xf32>
// CHECK-AMX-COUNT-8: amx.tile_mulf %{{.*}}, %{{.*}}, %{{.*}} : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
// CHECK-AMX-COUNT-4: amx.tile_store
// CHECK-AMX: vector.shuffle {{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
// ... O rescaled only in the rows whose max grew (alpha != 1) ...
// CHECK-AMX: %[[GREW:.*]] = arith.cmpf une, %{{.*}}, %{{.*}} : f32
// CHECK-AMX-NEXT: scf.if %[[GREW]] {
// CHECK-AMX: scf.if %[[NONFINITE]] {
// CHECK-AMX: arith.cmpf une
// CHECK-AMX: math.fma
// CHECK-AMX: } else {
// ... and O += P V over 96 keys (3 steps of 32).
// CHECK-AMX-COUNT-4: amx.tile_load %{{.*}} : memref<64x64xf32, strided<[64, 1], offset: ?>> into !amx.tile<16x16xf32>
// CHECK-AMX-COUNT-12: amx.tile_mulf
// CHECK-AMX-LLVM: llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"
func.func @bf16_amx(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x2x?x64xbf16>, %v: tensor<1x2x?x64xbf16>) -> tensor<1x8x?x64xbf16> {
  %o = pe.attention %q, %k, %v causal rope(#pe.rope<rotary_dim = 64>) : tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x8x?x64xbf16>
  return %o : tensor<1x8x?x64xbf16>
}

// -----

// bf16 on AVX512-BF16 dot products (bf16-dot=true): both products are
// micro-tiles of vdpbf16ps, each adding the products of one bf16 pair to 16
// f32 lanes (rows): S^T from Q^T pairs and a broadcast pair of Kr, O^T from
// the bf16-rounded P^T pairs and a broadcast pair of V; the softmax stays f32.
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=sapphirerapids" --pe-tile-attention="bf16-dot=true" -split-input-file | FileCheck %s --check-prefix=CHECK-DOT
// RUN: pe-opt %s --pe-cpu-pipeline="target-triple=x86_64-linux-gnu target-cpu=sapphirerapids bf16-dot=true" -split-input-file | FileCheck %s --check-prefix=CHECK-DOT-LLVM
// CHECK-DOT-LABEL: func.func private @pe_attention_kernel(%{{.*}}: memref<1x4x?x32xbf16>
// Q^T pairs (D/2 x 2 rows) for each of the 16 blocks of queries a task
// holds; Kr (Bk x D, bf16), P^T pairs (Bk/2 x 2 rows), V pairs (Bk/2 x 2 Dv)
// shared by them:
// CHECK-DOT-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<16x16x128xbf16>
// CHECK-DOT-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<96x32xbf16>
// CHECK-DOT-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<48x128xbf16>
// CHECK-DOT-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<48x64xbf16>
// The K/V tile is packed once for the task's blocks, V pairs checked for
// NaN/inf; then for each block of queries (its slot of Q and O):
// CHECK-DOT: %[[NONFINITE:.*]] = vector.reduction <or>, %{{.*}} : vector<16xi1> into i1
// CHECK-DOT: memref.subview %{{.*}} : memref<16x16x128xbf16> to memref<16x128xbf16, strided<[128, 1], offset: ?>>
// S^T: a pair of Kr in every 32-bit lane, 6 keys x 4 row vectors.
// CHECK-DOT: %[[KPAIR:.*]] = vector.load %{{.*}} : memref<96x32xbf16>, vector<2xbf16>
// CHECK-DOT: vector.bitcast %[[KPAIR]] : vector<2xbf16> to vector<1xi32>
// CHECK-DOT: vector.broadcast %{{.*}} : i32 to vector<16xi32>
// CHECK-DOT: %[[K:.*]] = vector.bitcast %{{.*}} : vector<16xi32> to vector<32xbf16>
// CHECK-DOT: %[[KP:.*]] = vector.shape_cast %[[K]] : vector<32xbf16> to vector<16x2xbf16>
// CHECK-DOT: vector.contract {{.*}} %{{.*}}, %[[KP]], %{{.*}} : vector<16x2xbf16>, vector<16x2xbf16> into vector<16xf32>
// CHECK-DOT-COUNT-23: vector.contract
// Weight rows 2 jp and 2 jp + 1 zipped, rounded to bf16.
// CHECK-DOT: vector.shuffle {{.*}} [0, 16, 1, 17, 2, 18, {{.*}} : vector<16xf32>, vector<16xf32>
// CHECK-DOT-NEXT: arith.truncf %{{.*}} : vector<32xf32> to vector<32xbf16>
// Only a tile with masked keys and a NaN or inf value takes the f32 path
// that skips weight-0 keys.
// CHECK-DOT: %[[SLOW:.*]] = arith.andi %{{.*}}, %[[NONFINITE]] : i1
// CHECK-DOT: scf.if %[[SLOW]] {
// CHECK-DOT: arith.cmpf une
// CHECK-DOT: math.fma
// CHECK-DOT: } else {
// CHECK-DOT: vector.load %{{.*}} : memref<48x128xbf16>, vector<32xbf16>
// CHECK-DOT: vector.contract
// CHECK-DOT-LLVM: llvm.func internal @pe_attention_kernel
// CHECK-DOT-LLVM: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
func.func @bf16_dot(%q: tensor<1x4x?x32xbf16>, %k: tensor<1x1x?x32xbf16>, %v: tensor<1x1x?x32xbf16>) -> tensor<1x4x?x32xbf16> {
  %o = pe.attention %q, %k, %v causal rope(#pe.rope<rotary_dim = 32>) : tensor<1x4x?x32xbf16>, tensor<1x1x?x32xbf16>, tensor<1x1x?x32xbf16> -> tensor<1x4x?x32xbf16>
  return %o : tensor<1x4x?x32xbf16>
}

// -----

// Decode with bf16-dot: the scores are dot products of 32-channel pair
// vectors of Q (bf16) and K (read in place), prefetching the next tile's
// rows (into L1, then further ahead into L2); tiles with masked keys take
// the FMAs that skip weight-0 keys, others the pair products of zipped V
// rows and the bf16 weights (pairs of the tile's 16 keys).
// CHECK-DOT-LABEL: func.func private @pe_attention_kernel(%{{.*}}: memref<1x8x1x64xbf16>
// CHECK-DOT-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<16x64xbf16>
// CHECK-DOT-DAG: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<8x32xbf16>
// CHECK-DOT: memref.prefetch %arg1[{{.*}}], read, locality<3>, data : memref<1x2x?x64xbf16>
// CHECK-DOT: memref.prefetch %arg1[{{.*}}], read, locality<2>, data : memref<1x2x?x64xbf16>
// CHECK-DOT: %[[DOT:.*]] = vector.contract {{.*}} : vector<16x2xbf16>, vector<16x2xbf16> into vector<16xf32>
// CHECK-DOT: vector.contract {{.*}}, %[[DOT]] : vector<16x2xbf16>, vector<16x2xbf16> into vector<16xf32>
// CHECK-DOT: vector.shuffle %{{.*}}, %{{.*}} [0, 4, 8, 12] : vector<16xf32>, vector<16xf32>
// CHECK-DOT: scf.if %{{.*}} {
// CHECK-DOT: arith.cmpf une
// CHECK-DOT: } else {
// CHECK-DOT: arith.truncf %{{.*}} : vector<32xf32> to vector<32xbf16>
// CHECK-DOT: memref.prefetch %arg2
// CHECK-DOT: vector.shuffle {{.*}} [0, 16, 1, 17, 2, 18, {{.*}} : vector<16xbf16>, vector<16xbf16>
// CHECK-DOT: vector.contract
func.func @bf16_dot_decode(%q: tensor<1x8x1x64xbf16>, %k: tensor<1x2x?x64xbf16>, %v: tensor<1x2x?x64xbf16>) -> tensor<1x8x1x64xbf16> {
  %o = pe.attention %q, %k, %v causal : tensor<1x8x1x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x8x1x64xbf16>
  return %o : tensor<1x8x1x64xbf16>
}
