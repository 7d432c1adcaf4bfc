// RUN: pe-opt %s --pe-gpu-tile-attention="tensor-cores=true" -split-input-file | FileCheck %s --check-prefix=CHECK-SELECT
// RUN: pe-opt %s --pe-gpu-tile-attention -split-input-file | FileCheck %s --check-prefix=CHECK-SIMT
// RUN: pe-opt %s --pe-gpu-tile-attention="tensor-cores=true" -split-input-file --pe-gpu-mma-attention | FileCheck %s --check-prefix=CHECK-KERNEL
// RUN: pe-opt %s --pe-gpu-tile-attention="tensor-cores=true" -split-input-file --pe-gpu-mma-attention="warpgroup=true warp-specialize=false" | FileCheck %s --check-prefix=CHECK-WGMMA
// RUN: pe-opt %s --pe-gpu-tile-attention="tensor-cores=true" -split-input-file --pe-gpu-mma-attention="warpgroup=true" | FileCheck %s --check-prefix=CHECK-WS
// RUN: pe-opt %s --pe-gpu-tile-attention="tensor-cores=true" -split-input-file --pe-gpu-mma-attention="warpgroup=true tma=true" | FileCheck %s --check-prefix=CHECK-TMA
// RUN: pe-opt %s --pe-gpu-tile-attention="tensor-cores=true chip=sm_86" -split-input-file | FileCheck %s --check-prefix=CHECK-SM86
// RUN: pe-opt %s --pe-gpu-tile-attention="tensor-cores=true warpgroup-mma=false" -split-input-file | FileCheck %s --check-prefix=CHECK-SYNC90

// bf16 prefill, GQA 32/8, D = 128, causal, llama3 RoPE: with tensor-cores,
// pe_gpu.mma_attention on the buffers, the positions (the defaults: the
// queries are the last Sq keys) and the f32 cos/sin tables of each. K is
// rotated once, by a pe.rope reading the kernel's K tables, before the
// kernel (`rotated_keys`), not again by each of the row tiles of its head.
// CHECK-SELECT-LABEL: func.func @llama3
// CHECK-SELECT: %[[ROTATED:.*]] = pe.rope #pe.rope<theta = 500000.0, rotary_dim = 128, {{.*}}> %arg1, %{{.*}} tables(%[[KCOS:.*]], %[[KSIN:.*]] : tensor<?x64xf32>, tensor<?x64xf32>) : tensor<1x8x?x128xbf16>, tensor<?xi64>
// CHECK-SELECT: bufferization.to_buffer %[[KCOS]]
// CHECK-SELECT: bufferization.to_buffer %[[ROTATED]]
// CHECK-SELECT: %[[OUT:.*]] = memref.alloc(%{{.*}}) : memref<1x32x?x128xbf16>
// CHECK-SELECT: pe_gpu.mma_attention %{{.*}}, %{{.*}}, %{{.*}} into %[[OUT]] positions(%{{.*}}, %{{.*}}) tables(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : memref<?x64xf32>, memref<?x64xf32>, memref<?x64xf32>, memref<?x64xf32>) scale(0.088388347648318433) causal rope(#pe.rope<theta = 500000.0, rotary_dim = 128
// CHECK-SELECT-SAME: rotated_keys default_positions : memref<1x32x?x128xbf16>, memref<1x8x?x128xbf16>, memref<1x8x?x128xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x32x?x128xbf16>
// CHECK-SELECT: bufferization.to_tensor %[[OUT]]
// Without the option, D = 128 takes the SIMT kernel (its channels stepped
// in loops).
// CHECK-SIMT-LABEL: func.func @llama3
// CHECK-SIMT-NOT: pe_gpu.mma_attention
// CHECK-SIMT-NOT: pe.attention
// CHECK-SIMT: scf.parallel

// The kernel, a wide block (prefill on mma.sync, FlashAttention-2's
// tiles): 8 warps (256 threads) over 128 rows per (row tile, KV head,
// batch), launched into @pe_kernels with 87040 bytes of dynamic shared
// memory: Q (128 rows), K and two V stages of 64 keys (D = 128 keeps them in
// a wide block), rows padded to 136, as views of it at 16-byte aligned
// offsets. Q staged once, then per tile V and the rotated K by cp.async, S
// on ldmatrix x4/x2 + mma.sync, quad shuffles for the row max, P V on
// ldmatrix x2 .trans + mma.sync, and the row sums reduced by the quad at
// the end.
// CHECK-KERNEL-LABEL: func.func @llama3
// CHECK-KERNEL-NOT: pe_gpu.mma_attention
// CHECK-KERNEL: %[[ROWS:.*]] = arith.muli %{{.*}}, %c4 : index
// CHECK-KERNEL: %[[TILES:.*]] = arith.ceildivui %[[ROWS]], %c128 : index
// CHECK-KERNEL: scf.if
// CHECK-KERNEL: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[TILES]], %{{.*}} = %c8{{.*}}, %{{.*}} = %{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size %c87040_i32 module(@pe_kernels) function(@llama3_attention_0)
// CHECK-KERNEL: gpu.dynamic_shared_memory
// CHECK-KERNEL: memref.view %{{.*}}[%c0{{.*}}][] : memref<?xi8, 3> to memref<128x136xbf16, 3>
// CHECK-KERNEL: memref.view %{{.*}}[%c34816][] : memref<?xi8, 3> to memref<64x136xbf16, 3>
// CHECK-KERNEL: memref.view %{{.*}}[%c52224][] : memref<?xi8, 3> to memref<2x64x136xbf16, 3>
// The first row's scale c and c log2(e), once per block.
// CHECK-KERNEL: %[[SCALE:.*]] = arith.constant 0.0883883461 : f32
// CHECK-KERNEL-NEXT: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-KERNEL-NEXT: %[[FACTOR:.*]] = arith.mulf %[[SCALE]], %[[LOG2E]] : f32
// CHECK-KERNEL: scf.for
// CHECK-KERNEL: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<128x136xbf16, 3>, vector<2xbf16>
// The tile loop carries (m, l) of 2 rows, 16 accumulators of 8 channels and
// whether V and K of the tile are in flight already (false at first, and
// after a hidden tile).
// CHECK-KERNEL: %[[NO:.*]] = arith.constant false
// The default positions are computed (`default_positions`): the tile's key
// range is t0 .. min(t0 + 64, Skv) - 1, no position is loaded.
// CHECK-KERNEL: scf.for %{{.*}} = %c0{{.*}} to %{{.*}} step %c64{{.*}} iter_args({{.*}}, %[[FETCHED:.*]] = %[[NO]]) -> (f32, f32, f32, f32, {{(vector<4xf32>, )+}}i1)
// CHECK-KERNEL-NOT: memref.load {{.*}} : memref<?xi64>
// CHECK-KERNEL: scf.if
// CHECK-KERNEL: scf.yield {{.*}}, %false{{.*}} : f32
// CHECK-KERNEL: } else {
// Stage (tile index % 2) and the other; V and K of the tile when not in
// flight, after older copies land; then the next tile's V into the other
// stage, a wait for all but that one, and S; once every warp has read Ks (a
// barrier), the next tile's K, which lands during the softmax and P V.
// CHECK-KERNEL: %[[STAGE:.*]] = arith.remui %{{.*}}, %c2{{.*}} : index
// CHECK-KERNEL: %[[NEXT:.*]] = arith.subi %c1{{.*}}, %[[STAGE]] : index
// CHECK-KERNEL: %[[MISSING:.*]] = arith.xori %[[FETCHED]], %true
// CHECK-KERNEL: scf.if %[[MISSING]] {
// CHECK-KERNEL-NEXT: nvvm.cp.async.wait.group 0
// CHECK-KERNEL-COUNT-4: nvgpu.device_async_copy %{{.*}}, %{{.*}}[%[[STAGE]], %{{.*}}, %{{.*}}], 8, %{{.*}} {bypassL1} : memref<1x8x?x128xbf16> to memref<2x64x136xbf16, 3>
// CHECK-KERNEL: nvgpu.device_async_create_group
// CHECK-KERNEL-COUNT-4: nvgpu.device_async_copy {{.*}} : memref<1x8x?x128xbf16> to memref<64x136xbf16, 3>
// CHECK-KERNEL: nvgpu.device_async_create_group
// CHECK-KERNEL-NEXT: }
// CHECK-KERNEL-NOT: to memref<64x136xbf16, 3>
// CHECK-KERNEL-COUNT-4: nvgpu.device_async_copy %{{.*}}, %{{.*}}[%[[NEXT]], %{{.*}}, %{{.*}}], 8, %{{.*}} {bypassL1} : memref<1x8x?x128xbf16> to memref<2x64x136xbf16, 3>
// CHECK-KERNEL: nvgpu.device_async_create_group
// CHECK-KERNEL-NOT: vector.store {{.*}} : memref<64x136xbf16, 3>
// CHECK-KERNEL: nvvm.cp.async.wait.group 1
// CHECK-KERNEL-NEXT: gpu.barrier
// CHECK-KERNEL: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<128x136xbf16, 3> -> vector<4x2xbf16>
// CHECK-KERNEL: nvgpu.ldmatrix %{{.*}} {numTiles = 2 : i32, transpose = false} : memref<64x136xbf16, 3> -> vector<2x2xbf16>
// CHECK-KERNEL: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK-KERNEL: gpu.barrier
// CHECK-KERNEL-NOT: nvgpu.ldmatrix
// CHECK-KERNEL-COUNT-4: nvgpu.device_async_copy {{.*}} : memref<1x8x?x128xbf16> to memref<64x136xbf16, 3>
// CHECK-KERNEL: nvgpu.device_async_create_group
// CHECK-KERNEL: %[[TAIL:.*]] = arith.cmpi ugt
// CHECK-KERNEL: %[[NEEDS:.*]] = arith.ori %[[TAIL]], %{{.*}} : i1
// The key tail and partially hidden tiles test each score; the others do
// not. Nothing is added to a scaled score here, so the scores stay Q K^T
// (no multiply per score): the row's max of them, after the quad's
// shuffles, is scaled once, and each weight is 2^(s (c log2 e) - m log2 e).
// CHECK-KERNEL: %[[SCORES:.*]]:32 = scf.if %[[NEEDS]] -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK-KERNEL-NOT: arith.mulf
// CHECK-KERNEL: arith.select %{{.*}}, %cst{{.*}}, %{{.*}} : f32
// CHECK-KERNEL: } else {
// CHECK-KERNEL-NOT: arith.select
// CHECK-KERNEL-NOT: arith.mulf
// CHECK-KERNEL: }
// CHECK-KERNEL: arith.maxnumf %{{.*}}, %[[SCORES]]#0 : f32
// CHECK-KERNEL: gpu.shuffle xor %{{.*}}, %c1_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK-KERNEL: gpu.shuffle xor %{{.*}}, %c2_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK-KERNEL-NEXT: %[[TILE_MAX:.*]] = arith.maxnumf
// CHECK-KERNEL-NEXT: %[[SCALED_MAX:.*]] = arith.mulf %[[TILE_MAX]], %[[SCALE]] : f32
// The row keeps its max m unless the tile's exceeds it by more than 8 ln 2
// (weights up to 2^8; O rescaled only when a row takes a new max).
// CHECK-KERNEL-NEXT: %[[CANDIDATE:.*]] = arith.maxnumf %[[M:.*]], %[[SCALED_MAX]] : f32
// CHECK-KERNEL-NEXT: %[[GROWTH:.*]] = arith.constant 5.54517746 : f32
// CHECK-KERNEL-NEXT: %[[LIMIT:.*]] = arith.addf %[[M]], %[[GROWTH]] : f32
// CHECK-KERNEL-NEXT: %[[GROWN:.*]] = arith.cmpf ogt, %[[CANDIDATE]], %[[LIMIT]] : f32
// CHECK-KERNEL-NEXT: %[[ROW_MAX:.*]] = arith.select %[[GROWN]], %[[CANDIDATE]], %[[M]] : f32
// CHECK-KERNEL: math.fma %[[SCORES]]#0, %[[FACTOR]], %{{.*}} : f32
// CHECK-KERNEL: arith.select %[[GROWN]], %{{.*}}, %cst{{.*}} : f32
// CHECK-KERNEL: %[[EITHER:.*]] = arith.ori %[[GROWN]], %{{.*}} : i1
// CHECK-KERNEL: nvvm.vote.sync  any %{{.*}}, %[[EITHER]] -> i1
// CHECK-KERNEL-NOT: gpu.barrier
// CHECK-KERNEL: nvgpu.ldmatrix %{{.*}}[%[[STAGE]], %{{.*}}, %{{.*}}] {numTiles = 2 : i32, transpose = true} : memref<2x64x136xbf16, 3> -> vector<2x2xbf16>
// CHECK-KERNEL: nvvm.mma.sync
// CHECK-KERNEL: gpu.barrier
// CHECK-KERNEL: scf.yield {{.*}}, %true{{.*}} : f32
// The last prefetch lands before the block ends.
// CHECK-KERNEL: nvvm.cp.async.wait.group 0
// CHECK-KERNEL: gpu.shuffle xor
// CHECK-KERNEL: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<1x32x?x128xbf16>, vector<2xbf16>
// CHECK-KERNEL: gpu.terminator
//
// With warpgroup (sm_90a): the tiles as 8 x 8 core matrices ([D / 8][rows +
// 1][8]) of 64 keys (Q is read from shared memory, so D = 128 keeps them):
// Q, K and two V stages, 66560 bytes of dynamic shared memory that the
// launch asks for; Q and the rotated K stored by the lanes, V by cp.async,
// each fenced for the async proxy before the barrier; S = Q K^T as 8 wgmma
// m64n64k16 (K-major A and B: LBO = 65 rows of 16 bytes, SBO = 128 bytes:
// fields 0x800410000), O += P V as 4 wgmma m64n128k16 with P from registers
// (inline PTX: the accumulators tied, four 32-bit words of A, B = V
// MN-major: LBO = 128 bytes, SBO = 65 rows: 0x4100080000), each chain
// fenced, committed and waited; between the chains the barrier after
// which the next tile's K is copied, and no store of P, no fence and no
// other barrier.
// CHECK-WGMMA-LABEL: func.func @llama3
// CHECK-WGMMA: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c128, {{.*}}) dynamic_shared_memory_size %c66560_i32
// CHECK-WGMMA: memref.view %{{.*}}[%c0{{.*}}][] : memref<?xi8, 3> to memref<16x65x8xbf16, 3>
// CHECK-WGMMA: memref.view %{{.*}}[%c16640][] : memref<?xi8, 3> to memref<16x65x8xbf16, 3>
// CHECK-WGMMA: memref.view %{{.*}}[%c33280][] : memref<?xi8, 3> to memref<2x16x65x8xbf16, 3>
// CHECK-WGMMA-NOT: memref.view
// CHECK-WGMMA: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<16x65x8xbf16, 3>, vector<2xbf16>
// CHECK-WGMMA: nvgpu.device_async_copy {{.*}} : memref<1x8x?x128xbf16> to memref<16x65x8xbf16, 3>
// CHECK-WGMMA: nvgpu.device_async_copy {{.*}} : memref<1x8x?x128xbf16> to memref<2x16x65x8xbf16, 3>
// CHECK-WGMMA: nvvm.cp.async.wait.group 1
// CHECK-WGMMA-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-WGMMA-NEXT: gpu.barrier
// The first product of S does not accumulate (D = A B, from a poison
// struct): no accumulator register is written between the fence and the
// chain, which would make ptxas serialize it.
// CHECK-WGMMA: %[[NONE:.*]] = llvm.mlir.poison : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
// CHECK-WGMMA-NEXT: nvvm.wgmma.fence.aligned
// CHECK-WGMMA: arith.ori %{{.*}}, %c34363998208_i64{{.*}} : i64{{[[:space:]].*}}nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[NONE]], <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-WGMMA-COUNT-7: arith.ori %{{.*}}, %c34363998208_i64{{.*}} : i64{{[[:space:]].*}}nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %{{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-WGMMA-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-WGMMA-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// Every warp's S has read Ks: the next tile's K into it.
// CHECK-WGMMA: gpu.barrier
// CHECK-WGMMA: nvgpu.device_async_copy {{.*}} : memref<1x8x?x128xbf16> to memref<16x65x8xbf16, 3>
// CHECK-WGMMA: nvgpu.device_async_create_group
// CHECK-WGMMA-NOT: vector.store
// CHECK-WGMMA-NOT: nvvm.fence.proxy
// CHECK-WGMMA-NOT: gpu.barrier
// The tile's stage of Vs: 16 chunks x 65 rows x 16 bytes from the first.
// CHECK-WGMMA: %[[STAGE_BYTES:.*]] = arith.muli %{{.*}}, %c16640{{.*}} : index
// CHECK-WGMMA-NEXT: %[[STAGE_OFFSET:.*]] = arith.index_castui %[[STAGE_BYTES]] : index to i64
// CHECK-WGMMA-NEXT: arith.addi %{{.*}}, %[[STAGE_OFFSET]] : i64
// The weights rounded in pairs, as 32-bit words, before the chain's fence.
// CHECK-WGMMA-COUNT-16: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK-WGMMA: nvvm.wgmma.fence.aligned
// CHECK-WGMMA: arith.ori %{{.*}}, %c279173398528_i64
// CHECK-WGMMA-COUNT-4: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $133, 0;\0Awgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0, {{.*}}, $63}, {$128, $129, $130, $131}, $132, p, 1, 1, 1;\0A}\0A", "=f,{{(=f,)+}}0,{{([0-9]+,)+}}r,r,r,r,l,n"
// CHECK-WGMMA-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-WGMMA-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-WGMMA: gpu.barrier
// CHECK-WGMMA: nvvm.cp.async.wait.group 0
// CHECK-WGMMA-NOT: nvvm.mma.sync
// CHECK-WGMMA-NOT: nvgpu.ldmatrix
// CHECK-WGMMA: gpu.terminator

// Warp-specialized (warpgroup MMA's default for prefill with the default
// positions and K read as it is): three warpgroups, 128 rows a block; Qs of
// 128 rows, four stages of Ks and Vs, then the eight mbarriers (full ones
// first).
// CHECK-WS-LABEL: func.func @llama3
// CHECK-WS: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c384, {{.*}}) dynamic_shared_memory_size %c166208_i32
// CHECK-WS: memref.view %{{.*}}[%c0{{.*}}][] : memref<?xi8, 3> to memref<16x129x8xbf16, 3>
// CHECK-WS: memref.view %{{.*}}[%c33024][] : memref<?xi8, 3> to memref<4x16x65x8xbf16, 3>
// CHECK-WS: memref.view %{{.*}}[%c99584][] : memref<?xi8, 3> to memref<4x16x65x8xbf16, 3>
// CHECK-WS: %[[BARRIERS:.*]] = memref.view %{{.*}}[%c166144][] : memref<?xi8, 3> to memref<8xi64, 3>
// CHECK-WS: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[BARRIERS]]
// CHECK-WS: %[[BASE64:.*]] = arith.index_castui %[[BASE]] : index to i64
// Thread 0 initializes them (full: the producer's 128 threads arrive;
// empty: the consumers' 256), before the block's one barrier.
// CHECK-WS: nvvm.mbarrier.init %{{.*}}, %c128_i32
// CHECK-WS: nvvm.mbarrier.init %{{.*}}, %c256_i32
// CHECK-WS: nvvm.mbarrier.init %{{.*}}, %c128_i32
// CHECK-WS: nvvm.mbarrier.init %{{.*}}, %c256_i32
// CHECK-WS: nvvm.mbarrier.init %{{.*}}, %c128_i32
// CHECK-WS: nvvm.mbarrier.init %{{.*}}, %c256_i32
// CHECK-WS: nvvm.mbarrier.init %{{.*}}, %c128_i32
// CHECK-WS: nvvm.mbarrier.init %{{.*}}, %c256_i32
// CHECK-WS-NEXT: nvvm.fence.mbarrier.init
// CHECK-WS: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-WS-NEXT: gpu.barrier
// The producer (warpgroup 0): visited tile n waits for parity (n / 4) mod
// 2, xor 1, of stage n mod 4's empty barrier (slot 4 + n mod 4), copies K
// and V into that stage (8 copies of 16 bytes a thread each), then marks
// tile n - 1 full (stage (n + 3) mod 4) once its copies landed (at most the
// two groups just issued pending); the last tile after the loop.
// CHECK-WS: %[[PRODUCER:.*]] = arith.cmpi ult, %{{.*}}, %c128{{.*}} : index
// CHECK-WS-NEXT: scf.if %[[PRODUCER]] {
// CHECK-WS-NEXT: nvvm.setmaxregister  decrease 24
// CHECK-WS: scf.for {{.*}} iter_args(%[[N:.*]] = %{{.*}}) -> (index) {
// CHECK-WS: %[[N32:.*]] = arith.index_castui %[[N]] : index to i32
// CHECK-WS-NEXT: %c4_i32 = arith.constant 4 : i32
// CHECK-WS-NEXT: %[[S32:.*]] = arith.remui %[[N32]], %c4_i32 : i32
// CHECK-WS: %[[ROUND:.*]] = arith.divui %[[N32]], %c4_i32{{.*}} : i32
// CHECK-WS: %[[PARITY:.*]] = arith.andi %[[ROUND]], %c1_i32{{.*}} : i32
// CHECK-WS: %[[S:.*]] = arith.index_castui %[[S32]] : i32 to index
// CHECK-WS: %[[BEFORE:.*]] = arith.xori %[[PARITY]], %c1_i32{{.*}} : i32
// CHECK-WS: %[[SLOT:.*]] = arith.addi %[[S]], %c4{{.*}} : index
// CHECK-WS: %[[BYTES:.*]] = arith.muli %[[SLOT]], %c8{{.*}} : index
// CHECK-WS: %[[OFFSET:.*]] = arith.index_castui %[[BYTES]] : index to i64
// CHECK-WS: %[[ADDRESS:.*]] = arith.addi %[[BASE64]], %[[OFFSET]] : i64
// CHECK-WS: %[[EMPTY:.*]] = llvm.inttoptr %[[ADDRESS]] : i64 to !llvm.ptr<3>
// CHECK-WS: nvvm.mbarrier.try_wait.parity %[[EMPTY]], %[[BEFORE]], %c10000000_i32
// CHECK-WS-COUNT-8: nvgpu.device_async_copy %{{.*}}, %{{.*}}[%[[S]], {{.*}} : memref<1x8x?x128xbf16> to memref<4x16x65x8xbf16, 3>
// CHECK-WS-NEXT: nvgpu.device_async_create_group
// CHECK-WS-COUNT-8: nvgpu.device_async_copy %{{.*}}, %{{.*}}[%[[S]], {{.*}} : memref<1x8x?x128xbf16> to memref<4x16x65x8xbf16, 3>
// CHECK-WS-NEXT: nvgpu.device_async_create_group
// CHECK-WS: %[[AFTER_FIRST:.*]] = arith.cmpi ne, %[[N]], %c0{{.*}} : index
// CHECK-WS-NEXT: scf.if %[[AFTER_FIRST]] {
// CHECK-WS: %[[S3:.*]] = arith.addi %[[S]], %c3{{.*}} : index
// CHECK-WS: %[[PREV:.*]] = arith.remui %[[S3]], %c4{{.*}} : index
// CHECK-WS: nvvm.cp.async.wait.group 2
// CHECK-WS-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-WS: %[[PBYTES:.*]] = arith.muli %[[PREV]], %c8{{.*}} : index
// CHECK-WS-NEXT: %[[POFFSET:.*]] = arith.index_castui %[[PBYTES]] : index to i64
// CHECK-WS-NEXT: %[[PADDRESS:.*]] = arith.addi %[[BASE64]], %[[POFFSET]] : i64
// CHECK-WS-NEXT: %[[PFULL:.*]] = llvm.inttoptr %[[PADDRESS]] : i64 to !llvm.ptr<3>
// CHECK-WS-NEXT: nvvm.mbarrier.arrive %[[PFULL]]
// CHECK-WS: nvvm.cp.async.wait.group 0
// CHECK-WS-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-WS: nvvm.mbarrier.arrive
// The consumers (warpgroups 1 and 2) take turns to issue their products on
// named barriers 1 + c (wait) and 2 - c (hand over) of 256 threads;
// consumer 1 hands consumer 0 the first turn.
// CHECK-WS: } else {
// CHECK-WS: arith.subi %{{.*}}, %c128{{.*}} : index
// CHECK-WS-NEXT: nvvm.setmaxregister  increase 240
// CHECK-WS: %[[CONSUMER:.*]] = arith.divui %{{.*}}, %c128{{.*}} : index
// A consumer's rows of Qs start 64 rows (1024 bytes into each chunk) after
// the other's.
// CHECK-WS: %[[FIRST_ROW:.*]] = arith.muli %[[CONSUMER]], %c64{{.*}} : index
// CHECK-WS: %[[ROW_BYTES:.*]] = arith.muli %[[FIRST_ROW]], %c16{{.*}} : index
// CHECK-WS-NEXT: %[[ROW_OFFSET:.*]] = arith.index_castui %[[ROW_BYTES]] : index to i64
// CHECK-WS-NEXT: %[[QADDRESS:.*]] = arith.addi %{{.*}}, %[[ROW_OFFSET]] : i64
// CHECK-WS: %[[SECOND:.*]] = arith.cmpi eq, %[[CONSUMER]], %c1{{.*}} : index
// CHECK-WS-NEXT: scf.if %[[SECOND]] {
// CHECK-WS: %[[OTHER:.*]] = arith.subi %c2{{.*}}, %[[CONSUMER]] : index
// CHECK-WS-NEXT: %[[OTHER32:.*]] = arith.index_castui %[[OTHER]] : index to i32
// CHECK-WS-NEXT: nvvm.barrier.arrive id = %[[OTHER32]] number_of_threads = %c256_i32
// The loop carries (m, l), O, the 16 register A words of the last visited
// tile's weights and the visited count n. Tile n waits for parity (n / 4)
// mod 2 of stage n mod 4's full barrier.
// CHECK-WS: %[[LOOP:.*]]:37 = scf.for {{.*}} -> (f32, f32, f32, f32, {{(vector<4xf32>, )+}}{{(i32, )+}}index) {
// CHECK-WS: %[[CN32:.*]] = arith.index_castui %[[CN:.*]] : index to i32
// CHECK-WS: %[[CS32:.*]] = arith.remui %[[CN32]], %c4_i32{{.*}} : i32
// CHECK-WS: %[[CROUND:.*]] = arith.divui %[[CN32]], %c4_i32{{.*}} : i32
// CHECK-WS: %[[CPARITY:.*]] = arith.andi %[[CROUND]], %c1_i32{{.*}} : i32
// CHECK-WS: %[[CS:.*]] = arith.index_castui %[[CS32]] : i32 to index
// CHECK-WS: %[[CS3:.*]] = arith.addi %[[CS]], %c3{{.*}} : index
// CHECK-WS: %[[PS:.*]] = arith.remui %[[CS3]], %c4{{.*}} : index
// CHECK-WS: %[[STARTED:.*]] = arith.cmpi ne, %[[CN]], %c0{{.*}} : index
// CHECK-WS: %[[CBYTES:.*]] = arith.muli %[[CS]], %c8{{.*}} : index
// CHECK-WS: %[[COFFSET:.*]] = arith.index_castui %[[CBYTES]] : index to i64
// CHECK-WS: %[[CADDRESS:.*]] = arith.addi %[[BASE64]], %[[COFFSET]] : i64
// CHECK-WS: %[[FULL:.*]] = llvm.inttoptr %[[CADDRESS]] : i64 to !llvm.ptr<3>
// CHECK-WS: nvvm.mbarrier.try_wait.parity %[[FULL]], %[[CPARITY]], %c10000000_i32
// CHECK-WS: %[[OWN:.*]] = arith.addi %[[CONSUMER]], %c1{{.*}} : index
// CHECK-WS-NEXT: %[[OWN32:.*]] = arith.index_castui %[[OWN]] : index to i32
// CHECK-WS-NEXT: nvvm.barrier id = %[[OWN32]] number_of_threads = %c256_i32
// In the turn: S of this tile (Ks of stage n mod 4, 16640 bytes a stage;
// the consumer's Qs: LBO chunks of 129 rows, 2064 bytes, SBO 128 bytes; Ks
// chunks of 65 rows), issued and committed, not waited for.
// CHECK-WS: %[[KBYTES:.*]] = arith.muli %[[CS]], %c16640{{.*}} : index
// CHECK-WS-NEXT: %[[KOFFSET:.*]] = arith.index_castui %[[KBYTES]] : index to i64
// CHECK-WS-NEXT: %[[KADDRESS:.*]] = arith.addi %{{.*}}, %[[KOFFSET]] : i64
// CHECK-WS: nvvm.wgmma.fence.aligned
// CHECK-WS: arith.addi %[[QADDRESS]], %c0_i64
// CHECK-WS: arith.ori %{{.*}}, %c34368192512_i64 : i64
// CHECK-WS: arith.addi %[[KADDRESS]], %c0_i64
// CHECK-WS: arith.ori %{{.*}}, %c34363998208_i64 : i64
// CHECK-WS: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <zero>]
// CHECK-WS-COUNT-7: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>]
// CHECK-WS-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-WS-NOT: nvvm.wgmma.wait
// Then P V of tile n - 1: Vs of stage (n + 3) mod 4, A the carried words
// (loop arguments, not this tile's); an empty group for the first tile.
// CHECK-WS: %[[PV:.*]]:16 = scf.if %[[STARTED]] -> ({{(vector<4xf32>(, )?)+}}) {
// CHECK-WS: arith.muli %[[PS]], %c16640{{.*}} : index
// CHECK-WS: nvvm.wgmma.fence.aligned
// CHECK-WS: llvm.inline_asm {{.*}}wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16{{.*}}, %arg{{[0-9]+}}, %arg{{[0-9]+}}, %arg{{[0-9]+}}, %arg{{[0-9]+}}, %{{[0-9]+}}, %c1_i32
// CHECK-WS-COUNT-3: llvm.inline_asm {{.*}}wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16{{.*}}, %arg{{[0-9]+}}, %arg{{[0-9]+}}, %arg{{[0-9]+}}, %arg{{[0-9]+}}, %{{[0-9]+}}, %c1_i32
// CHECK-WS-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-WS-NOT: nvvm.wgmma.wait
// CHECK-WS: } else {
// CHECK-WS-NEXT: nvvm.wgmma.commit.group.sync.aligned
// The hand-over, then S waited for (one group, P V, left pending) while
// this tile's softmax runs; P V waited for before stage (n + 3) mod 4 is
// released (empty slot 4 + that stage) and O - the P V results - rescaled.
// CHECK-WS: %[[HANDOVER:.*]] = arith.subi %c2{{.*}}, %[[CONSUMER]] : index
// CHECK-WS-NEXT: %[[HANDOVER32:.*]] = arith.index_castui %[[HANDOVER]] : index to i32
// CHECK-WS-NEXT: nvvm.barrier.arrive id = %[[HANDOVER32]] number_of_threads = %c256_i32
// CHECK-WS-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-WS: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-WS-NOT: nvvm.vote.sync
// CHECK-WS: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-WS-NEXT: scf.if %[[STARTED]] {
// CHECK-WS: %[[RSLOT:.*]] = arith.addi %[[PS]], %c4{{.*}} : index
// CHECK-WS-NEXT: %c8{{.*}} = arith.constant 8 : index
// CHECK-WS-NEXT: %[[RBYTES:.*]] = arith.muli %[[RSLOT]], %c8{{.*}} : index
// CHECK-WS: nvvm.mbarrier.arrive
// CHECK-WS: nvvm.vote.sync  any
// CHECK-WS: arith.mulf %[[PV]]#0, %{{.*}} : vector<4xf32>
// CHECK-WS: arith.addi %[[CN]], %c1{{.*}} : index
// After the loop, in a last turn, P V of the last visited tile (stage (n +
// 3) mod 4 of the final count n); then consumer 0 takes consumer 1's last
// hand-over on barrier 1.
// CHECK-WS: scf.if %{{.*}} -> ({{(vector<4xf32>(, )?)+}}) {
// CHECK-WS: %[[LOWN:.*]] = arith.addi %[[CONSUMER]], %c1{{.*}} : index
// CHECK-WS-NEXT: %[[LOWN32:.*]] = arith.index_castui %[[LOWN]] : index to i32
// CHECK-WS-NEXT: nvvm.barrier id = %[[LOWN32]] number_of_threads = %c256_i32
// CHECK-WS: arith.index_castui %[[LOOP]]#36 : index to i32
// CHECK-WS-COUNT-4: llvm.inline_asm {{.*}}wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16{{.*}}, %[[LOOP]]#{{[0-9]+}}, %[[LOOP]]#{{[0-9]+}}, %[[LOOP]]#{{[0-9]+}}, %[[LOOP]]#{{[0-9]+}}, %{{[0-9]+}}, %c1_i32
// CHECK-WS-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-WS: %[[LOTHER:.*]] = arith.subi %c2{{.*}}, %[[CONSUMER]] : index
// CHECK-WS-NEXT: %[[LOTHER32:.*]] = arith.index_castui %[[LOTHER]] : index to i32
// CHECK-WS-NEXT: nvvm.barrier.arrive id = %[[LOTHER32]] number_of_threads = %c256_i32
// CHECK-WS-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-WS: %[[FIRST:.*]] = arith.cmpi eq, %[[CONSUMER]], %c0{{.*}} : index
// CHECK-WS-NEXT: scf.if %[[FIRST]] {
// CHECK-WS: %[[FOWN:.*]] = arith.addi %[[CONSUMER]], %c1{{.*}} : index
// CHECK-WS-NEXT: %[[FOWN32:.*]] = arith.index_castui %[[FOWN]] : index to i32
// CHECK-WS-NEXT: nvvm.barrier id = %[[FOWN32]] number_of_threads = %c256_i32
// CHECK-WS-NOT: gpu.barrier
// CHECK-WS-NOT: nvvm.cp.async
// CHECK-WS: gpu.terminator
// TMA (tma=true): the host encodes a tensor map of K and of V (boxes of 64
// keys x 64 channels, 128-byte swizzle, zero past the last key) and the
// launch takes them as pointers; Q 33024 bytes + four stages of K and V
// (131072) + 1024 bytes to align them + the barriers.
// CHECK-TMA-LABEL: func.func @llama3
// No keys: a null pointer instead of a map (whose dimensions cannot be 0).
// CHECK-TMA: %[[KCAST:.*]] = memref.cast %{{.*}} : memref<1x8x?x128xbf16> to memref<*xbf16>
// CHECK-TMA: %[[ANYKEY:.*]] = arith.cmpi ne, %{{.*}}, %c0{{.*}} : index
// CHECK-TMA-NEXT: %[[KMAP:.*]] = scf.if %[[ANYKEY]] -> (!llvm.ptr) {
// CHECK-TMA: %[[KDESC:.*]] = nvgpu.tma.create.descriptor %[[KCAST]] box[%c1{{.*}}, %c1{{.*}}, %c64{{.*}}, %c64{{.*}}] : memref<*xbf16> -> <tensor = memref<1x1x64x64xbf16, 3>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
// CHECK-TMA-NEXT: %[[KPTR:.*]] = builtin.unrealized_conversion_cast %[[KDESC]] {{.*}} to !llvm.ptr
// CHECK-TMA-NEXT: scf.yield %[[KPTR]] : !llvm.ptr
// CHECK-TMA-NEXT: } else {
// CHECK-TMA-NEXT: %[[NOMAP:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-TMA-NEXT: scf.yield %[[NOMAP]] : !llvm.ptr
// CHECK-TMA: %[[VMAP:.*]] = scf.if
// CHECK-TMA: nvgpu.tma.create.descriptor
// CHECK-TMA: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c384, {{.*}}) dynamic_shared_memory_size %c165184_i32
// The K stages start at the first 1024-byte boundary of their bytes.
// CHECK-TMA: %[[KVPTR:.*]] = memref.extract_aligned_pointer_as_index %{{.*}} : memref<132096xi8, 3> -> index
// CHECK-TMA-NEXT: %[[KVRAW:.*]] = arith.index_castui %[[KVPTR]] : index to i64
// CHECK-TMA-NEXT: %[[C1023:.*]] = arith.constant 1023 : i64
// CHECK-TMA-NEXT: %[[KVUP:.*]] = arith.addi %[[KVRAW]], %[[C1023]] : i64
// CHECK-TMA-NEXT: %[[MASK:.*]] = arith.constant -1024 : i64
// CHECK-TMA-NEXT: %[[KBASE:.*]] = arith.andi %[[KVUP]], %[[MASK]] : i64
// CHECK-TMA-NEXT: %[[VOFF:.*]] = arith.constant 65536 : i64
// CHECK-TMA-NEXT: %[[VBASE:.*]] = arith.addi %[[KBASE]], %[[VOFF]] : i64
// Full barriers wait for one arrival (and the bytes), empty ones for the
// 256 consumer threads.
// CHECK-TMA: nvvm.mbarrier.init %{{.*}}, %c1_i32 : !llvm.ptr<3>, i32
// CHECK-TMA: nvvm.mbarrier.init %{{.*}}, %c256_i32 : !llvm.ptr<3>, i32
// CHECK-TMA: nvvm.setmaxregister  decrease 24
// The producer's first warp walks the tiles, its first lane loads them.
// CHECK-TMA: arith.cmpi ult, %[[TID:.*]], %c32 : index
// CHECK-TMA: %[[LANE0:.*]] = arith.cmpi eq, %[[TID]], %c0{{.*}} : index
// CHECK-TMA: scf.for %[[T0:.*]] = %{{.*}} to %{{.*}} step %c64
// CHECK-TMA: scf.if %[[LANE0]] {
// CHECK-TMA: nvvm.mbarrier.try_wait.parity
// CHECK-TMA: nvvm.mbarrier.arrive.expect_tx %[[FULL:.*]], %c32768_i32 : !llvm.ptr<3>, i32
// CHECK-TMA: %[[ROW:.*]] = arith.index_castui %[[T0]] : index to i32
// CHECK-TMA: %[[KSTAGE:.*]] = arith.addi %[[KBASE]], %{{.*}} : i64
// CHECK-TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP]], %[[FULL]], box[%c0_i32{{.*}}, %[[ROW]], %{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK-TMA: arith.addi %[[KSTAGE]], %c8192_i64
// CHECK-TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP]], %[[FULL]], box[%c64_i32{{.*}}, %[[ROW]], %{{.*}}, %{{.*}}]
// CHECK-TMA: arith.addi %[[VBASE]], %{{.*}} : i64
// CHECK-TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VMAP]], %[[FULL]], box[%c0_i32{{.*}}, %[[ROW]]
// CHECK-TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VMAP]], %[[FULL]], box[%c64_i32{{.*}}, %[[ROW]]
// CHECK-TMA-NOT: nvgpu.device_async_copy
// CHECK-TMA: nvvm.setmaxregister  increase 240
// Consumers: K-major K descriptors with 128-byte swizzle (layout type 1 at
// bit 62), SBO 1024 bytes, LBO 16 (unused); step 1 32 bytes into the rows,
// step 4 in the second 64-channel slice (64 rows x 128 bytes on).
// CHECK-TMA: arith.constant 4611686293305360384 : i64
// CHECK-TMA: %[[K1:.*]] = arith.constant 32 : i64
// CHECK-TMA-NEXT: arith.addi %{{.*}}, %[[K1]] : i64
// CHECK-TMA: %[[K4:.*]] = arith.constant 8192 : i64
// CHECK-TMA-NEXT: arith.addi %{{.*}}, %[[K4]] : i64
// MN-major V: LBO 8192 (the next 64 channels), SBO 1024, a 16-key step
// 2048 bytes on.
// CHECK-TMA: %[[V1:.*]] = arith.constant 2048 : i64
// CHECK-TMA-NEXT: arith.addi %{{.*}}, %[[V1]] : i64
// CHECK-TMA: arith.constant 4611686293338849280 : i64
// CHECK-TMA: llvm.inline_asm {{.*}}wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK-TMA-NOT: nvgpu.device_async_copy
// CHECK-TMA: gpu.terminator
func.func @llama3(%q: tensor<1x32x?x128xbf16>, %k: tensor<1x8x?x128xbf16>,
                  %v: tensor<1x8x?x128xbf16>) -> tensor<1x32x?x128xbf16> {
  %o = pe.attention %q, %k, %v causal
       rope(#pe.rope<theta = 500000.0, rotary_dim = 128,
            scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>)
       : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16> -> tensor<1x32x?x128xbf16>
  return %o : tensor<1x32x?x128xbf16>
}

// -----

// One row tile per KV head (16 queries x 4 heads = 64 rows): K is read by
// one block only, so the kernel rotates it on its way into shared memory
// (no pe.rope before, no rotated_keys).
// CHECK-SELECT-LABEL: func.func @one_row_tile
// CHECK-SELECT-NOT: pe.rope
// CHECK-SELECT: pe_gpu.mma_attention
// CHECK-SELECT-NOT: rotated_keys
// CHECK-SELECT-SAME: -> memref<1x32x16x128xbf16>
// CHECK-KERNEL-LABEL: func.func @one_row_tile
// CHECK-KERNEL: gpu.launch
// CHECK-KERNEL-NOT: to memref<32x136xbf16, 3>
// CHECK-KERNEL: vector.store {{.*}} : memref<32x136xbf16, 3>, vector<8xbf16>
// CHECK-KERNEL: nvvm.cp.async.wait.group 1
func.func @one_row_tile(%q: tensor<1x32x16x128xbf16>, %k: tensor<1x8x?x128xbf16>,
                        %v: tensor<1x8x?x128xbf16>) -> tensor<1x32x16x128xbf16> {
  %o = pe.attention %q, %k, %v causal
       rope(#pe.rope<theta = 500000.0, rotary_dim = 128>)
       : tensor<1x32x16x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16> -> tensor<1x32x16x128xbf16>
  return %o : tensor<1x32x16x128xbf16>
}

// -----

// 96 rows a KV head (24 queries x 4 heads): one wide mma.sync block of 128
// rows (sm_86) reads K once, so the kernel rotates it; on sm_90a a 64-row
// warpgroup would rotate it twice, so pe.rope rotates it first and the
// warp-specialized kernel reads it as it is.
// CHECK-SELECT-LABEL: func.func @one_wide_row_tile
// CHECK-SELECT: pe.rope
// CHECK-SELECT: pe_gpu.mma_attention
// CHECK-SELECT-SAME: rotated_keys
// CHECK-SM86-LABEL: func.func @one_wide_row_tile
// CHECK-SM86-NOT: pe.rope
// CHECK-SM86: pe_gpu.mma_attention
// CHECK-SM86-NOT: rotated_keys
// CHECK-SM86-SAME: -> memref<1x32x24x128xbf16>
// sm_90a without warpgroup MMA takes mma.sync's wide block as well.
// CHECK-SYNC90-LABEL: func.func @one_wide_row_tile
// CHECK-SYNC90-NOT: pe.rope
// CHECK-SYNC90: pe_gpu.mma_attention
// CHECK-SYNC90-NOT: rotated_keys
// CHECK-SYNC90-SAME: -> memref<1x32x24x128xbf16>
func.func @one_wide_row_tile(%q: tensor<1x32x24x128xbf16>, %k: tensor<1x8x?x128xbf16>,
                             %v: tensor<1x8x?x128xbf16>) -> tensor<1x32x24x128xbf16> {
  %o = pe.attention %q, %k, %v causal
       rope(#pe.rope<theta = 500000.0, rotary_dim = 128>)
       : tensor<1x32x24x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16> -> tensor<1x32x24x128xbf16>
  return %o : tensor<1x32x24x128xbf16>
}

// -----

// f32 takes the SIMT kernel; decode (a static query count up to 8) the
// tensor-core kernel with the keys split across blocks (splits(n): about
// 528 blocks in all, the blocks of one split counted as at least 1, so an
// empty batch divides by no 0; the partial states in f32 buffers
// [B, Hq, Sq, n, Dv] and [B, Hq, Sq, n, 2]), then one loop per (row, value
// chunk) merging the splits; head dims that are not multiples of 16
// (D = 72) the SIMT kernel.
// CHECK-SELECT-LABEL: func.func @others
// CHECK-SELECT-NOT: pe_gpu.mma_attention
// CHECK-SELECT: scf.parallel
// CHECK-SELECT: %[[DIVISOR:.*]] = arith.maxui %{{.*}}, %c1{{.*}} : index
// CHECK-SELECT: arith.ceildivui %c528{{.*}}, %[[DIVISOR]] : index
// CHECK-SELECT: %[[PO:.*]] = memref.alloc(%[[SPLITS:.*]]) : memref<1x4x1x?x64xf32>
// CHECK-SELECT: %[[PS:.*]] = memref.alloc(%[[SPLITS]]) : memref<1x4x1x?x2xf32>
// CHECK-SELECT: pe_gpu.mma_attention {{.*}} splits(%[[SPLITS]]) partials(%[[PO]], %[[PS]] : memref<1x4x1x?x64xf32>, memref<1x4x1x?x2xf32>) scale
// CHECK-SELECT: scf.parallel
// CHECK-SELECT: scf.for %{{.*}} = %c0{{.*}} to %[[SPLITS]]
// CHECK-SELECT: memref.load %[[PS]]
// CHECK-SELECT: vector.load %[[PO]]
// CHECK-SELECT: scf.parallel
// CHECK-SELECT-NOT: pe_gpu.mma_attention
// CHECK-SELECT-NOT: pe.attention
func.func @others(%q: tensor<1x4x?x64xf32>, %k: tensor<1x4x?x64xf32>, %v: tensor<1x4x?x64xf32>,
                  %qd: tensor<1x4x1x64xbf16>, %kd: tensor<1x4x?x64xbf16>, %vd: tensor<1x4x?x64xbf16>,
                  %qw: tensor<1x4x?x72xbf16>, %kw: tensor<1x4x?x72xbf16>, %vw: tensor<1x4x?x72xbf16>)
    -> (tensor<1x4x?x64xf32>, tensor<1x4x1x64xbf16>, tensor<1x4x?x72xbf16>) {
  %o = pe.attention %q, %k, %v causal
       : tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32> -> tensor<1x4x?x64xf32>
  %d = pe.attention %qd, %kd, %vd causal
       : tensor<1x4x1x64xbf16>, tensor<1x4x?x64xbf16>, tensor<1x4x?x64xbf16> -> tensor<1x4x1x64xbf16>
  %w = pe.attention %qw, %kw, %vw causal
       : tensor<1x4x?x72xbf16>, tensor<1x4x?x72xbf16>, tensor<1x4x?x72xbf16> -> tensor<1x4x?x72xbf16>
  return %o, %d, %w : tensor<1x4x?x64xf32>, tensor<1x4x1x64xbf16>, tensor<1x4x?x72xbf16>
}

// -----

// D = 80 (Phi-2), a wide block: a V tile of 64 keys is 640 copies of 16
// bytes, not a multiple of the 256 threads: the copies past the last write
// zeros into the padding of row 0 (columns 80..87, never read), reading no
// bytes.
// CHECK-SELECT-LABEL: func.func @phi2
// CHECK-SELECT: pe_gpu.mma_attention
// CHECK-KERNEL-LABEL: func.func @phi2
// CHECK-KERNEL: gpu.launch
// CHECK-KERNEL: %[[IN:.*]] = arith.cmpi ult, %[[W:.*]], %c640{{.*}} : index
// CHECK-KERNEL: %[[ROW:.*]] = arith.select %[[IN]], %{{.*}}, %c0{{.*}} : index
// CHECK-KERNEL: %[[COL:.*]] = arith.select %[[IN]], %{{.*}}, %c80{{.*}} : index
// CHECK-KERNEL: nvgpu.device_async_copy %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}], %{{.*}}[%{{.*}}, %[[ROW]], %[[COL]]], 8, %{{.*}} {bypassL1} : memref<1x32x?x80xf16> to memref<2x64x88xf16, 3>
// With warpgroup, 128 threads: 640 copies, five a thread, none idle (the
// spare row of chunk 0 would take them).
// CHECK-WGMMA-LABEL: func.func @phi2
// CHECK-WGMMA-NOT: arith.cmpi ult, %{{.*}}, %c640
// CHECK-WGMMA: nvgpu.device_async_copy {{.*}} {bypassL1} : memref<1x32x?x80xf16> to memref<2x10x65x8xf16, 3>
// CHECK-WGMMA: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// CHECK-WGMMA: llvm.inline_asm {{.*}}wgmma.mma_async.sync.aligned.m64n80k16.f32.f16.f16
// TMA needs head dims of whole 128-byte rows: D = 80 keeps cp.async.
// CHECK-TMA-LABEL: func.func @phi2
// CHECK-TMA-NOT: nvgpu.tma.create.descriptor
// CHECK-TMA: nvgpu.device_async_copy {{.*}} : memref<1x32x?x80xf16> to memref<4x10x65x8xf16, 3>
func.func @phi2(%q: tensor<1x32x?x80xf16>, %k: tensor<1x32x?x80xf16>,
                %v: tensor<1x32x?x80xf16>) -> tensor<1x32x?x80xf16> {
  %o = pe.attention %q, %k, %v causal rope(#pe.rope<theta = 10000.0, rotary_dim = 32>)
       : tensor<1x32x?x80xf16>, tensor<1x32x?x80xf16>, tensor<1x32x?x80xf16> -> tensor<1x32x?x80xf16>
  return %o : tensor<1x32x?x80xf16>
}

// -----

// Attention sinks (gpt-oss: a learned logit per query head in the softmax's
// denominator) on the tensor-core kernel: each row's state starts at its
// head's sink, a key of value 0 (m = sink, l = exp(sink - sink)), l in the
// first lane of the row's quad only (the lanes' sums are added at the end).
// CHECK-SELECT-LABEL: func.func @sinks
// CHECK-SELECT: pe_gpu.mma_attention {{.*}} slopes(%{{.*}} : memref<16xf32>) sinks(%{{.*}} : memref<16xf32>) scale
// The key range cut to what the block's rows see (default positions,
// queries [qMin, qMax]): up to qMax + 1 (causal), from qMin - 127 (window
// 128) rounded down to the tile grid.
// The block's first query (row r0 / 8, GQA 16/2) and last (ceil(min(r0 +
// 64, rows) / 8) - 1), at positions Skv - Sq + i.
// CHECK-KERNEL-LABEL: func.func @sinks
// CHECK-KERNEL: gpu.launch
// CHECK-KERNEL: %[[LASTQ:.*]] = arith.ceildivui %{{.*}}, %c8{{.*}} : index
// CHECK-KERNEL: %[[QMINI:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK-KERNEL: %[[QMIN:.*]] = arith.index_cast %[[QMINI]] : index to i64
// CHECK-KERNEL: %[[LASTI:.*]] = arith.subi %[[LASTQ]], %c1{{.*}} : index
// CHECK-KERNEL: %[[QMAXI:.*]] = arith.addi %{{.*}}, %[[LASTI]] : index
// CHECK-KERNEL: %[[QMAX:.*]] = arith.index_cast %[[QMAXI]] : index to i64
// CHECK-KERNEL: %[[AFTER:.*]] = arith.addi %[[QMAX]], %c1_i64 : i64
// CHECK-KERNEL: %[[AFTER0:.*]] = arith.maxsi %[[AFTER]], %c0_i64 : i64
// CHECK-KERNEL: %[[AFTERI:.*]] = arith.index_cast %[[AFTER0]] : i64 to index
// CHECK-KERNEL: %[[END:.*]] = arith.minui %{{.*}}, %[[AFTERI]] : index
// CHECK-KERNEL: arith.subi %[[QMIN]], %c127_i64 : i64
// CHECK-KERNEL: %[[TILES:.*]] = arith.divui %{{.*}}, %c64{{.*}} : index
// CHECK-KERNEL: %[[SKIP:.*]] = arith.muli %[[TILES]], %c64{{.*}} : index
// CHECK-KERNEL: %[[BEGIN:.*]] = arith.addi %c0{{.*}}, %[[SKIP]] : index
// CHECK-KERNEL: %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %c0{{.*}} : index
// CHECK-KERNEL: %[[SINK:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<16xf32>
// CHECK-KERNEL: arith.select %{{.*}}, %[[SINK]], %{{.*}} : f32
// CHECK-KERNEL: %[[LEAD:.*]] = arith.andi %{{.*}}, %[[FIRST]] : i1
// CHECK-KERNEL: arith.select %[[LEAD]], %{{.*}}, %{{.*}} : f32
// CHECK-KERNEL: scf.for %{{.*}} = %[[BEGIN]] to %[[END]] step %c64
func.func @sinks(%q: tensor<1x16x?x64xbf16>, %k: tensor<1x2x?x64xbf16>,
                 %v: tensor<1x2x?x64xbf16>, %s: tensor<16xf32>) -> tensor<1x16x?x64xbf16> {
  %o = pe.attention %q, %k, %v sinks(%s : tensor<16xf32>) causal window(128) alibi(8.0)
       : tensor<1x16x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x16x?x64xbf16>
  return %o : tensor<1x16x?x64xbf16>
}

// -----

// A shared key block (latent attention's k_pe, here 32 channels after each
// key head's 96): the tensor-core kernel copies K tiles from one tensor, so
// the block is written into every key head first (a linalg.generic of
// 128-channel keys) and the kernel reads those; the SIMT kernel reads the
// block in place (its buffer passed to the kernel, no 128-channel keys).
// CHECK-SELECT-LABEL: func.func @shared_key
// CHECK-SELECT: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x?x128xbf16>)
// CHECK-SELECT: pe_gpu.mma_attention
// CHECK-SELECT-NOT: shared_key
// CHECK-SIMT-LABEL: func.func @shared_key
// CHECK-SIMT-NOT: x2x?x128xbf16
// CHECK-SIMT: bufferization.to_buffer %{{.*}} read_only : tensor<1x1x?x32xbf16> to memref<1x1x?x32xbf16>
// CHECK-SIMT: scf.parallel
// CHECK-SIMT: vector.load %{{.*}} : memref<1x1x?x32xbf16>, vector<{{[0-9]+}}xbf16>
func.func @shared_key(%q: tensor<1x16x?x128xbf16>, %k: tensor<1x2x?x96xbf16>,
                      %v: tensor<1x2x?x64xbf16>, %ks: tensor<1x1x?x32xbf16>) -> tensor<1x16x?x64xbf16> {
  %o = pe.attention %q, %k, %v shared_key(%ks : tensor<1x1x?x32xbf16>) causal
       rope(#pe.rope<rotary_dim = 32, rotary_offset = 96>)
       : tensor<1x16x?x128xbf16>, tensor<1x2x?x96xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x16x?x64xbf16>
  return %o : tensor<1x16x?x64xbf16>
}

// -----

// Latent attention's full-width heads (DeepSeek-V3: 192 query/key channels,
// the RoPE block last, 128 value channels): 32-key tiles take 53-54.5 KiB of
// shared memory, more than a block's static 48 KiB, so they are views of
// its dynamic shared memory (16-byte aligned offsets, in address space 3),
// and the launch asks for their bytes: Q, K, two V stages (mma.sync:
// 25600 + 12800 + 17408 bytes; warpgroup MMA, core-matrix layouts: 24960 +
// 12672 + 16896).
// CHECK-SELECT-LABEL: func.func @mla_heads
// CHECK-SELECT: pe_gpu.mma_attention {{.*}} rope(#pe.rope<rotary_dim = 64, style = interleaved, rotary_offset = 128>) rotated_keys
// CHECK-KERNEL-LABEL: func.func @mla_heads
// CHECK-KERNEL: gpu.launch {{.*}} dynamic_shared_memory_size %c55808_i32
// CHECK-KERNEL: %[[DYN:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK-KERNEL: %[[BASE:.*]] = memref.memory_space_cast %[[DYN]] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xi8, 3>
// CHECK-KERNEL: memref.view %[[BASE]][%c0{{.*}}][] : memref<?xi8, 3> to memref<64x200xbf16, 3>
// CHECK-KERNEL: memref.view %[[BASE]][%c25600{{.*}}][] : memref<?xi8, 3> to memref<32x200xbf16, 3>
// CHECK-KERNEL: memref.view %[[BASE]][%c38400{{.*}}][] : memref<?xi8, 3> to memref<2x32x136xbf16, 3>
// CHECK-KERNEL: scf.for %{{.*}} = %c0{{.*}} to %{{.*}} step %c32{{.*}} iter_args
// CHECK-WGMMA-LABEL: func.func @mla_heads
// CHECK-WGMMA: gpu.launch {{.*}} dynamic_shared_memory_size %c54528_i32
// CHECK-WGMMA: %[[BASE:.*]] = memref.memory_space_cast
// CHECK-WGMMA: memref.view %[[BASE]][%c0{{.*}}][] : memref<?xi8, 3> to memref<24x65x8xbf16, 3>
// CHECK-WGMMA: memref.view %[[BASE]][%c24960{{.*}}][] : memref<?xi8, 3> to memref<24x33x8xbf16, 3>
// CHECK-WGMMA: memref.view %[[BASE]][%c37632{{.*}}][] : memref<?xi8, 3> to memref<2x16x33x8xbf16, 3>
// CHECK-WGMMA-NOT: memref.view
// CHECK-WGMMA: scf.for %{{.*}} = %c0{{.*}} to %{{.*}} step %c32{{.*}} iter_args
func.func @mla_heads(%q: tensor<1x8x?x192xbf16>, %k: tensor<1x8x?x192xbf16>,
                     %v: tensor<1x8x?x128xbf16>) -> tensor<1x8x?x128xbf16> {
  %o = pe.attention %q, %k, %v causal
       rope(#pe.rope<rotary_dim = 64, style = interleaved, rotary_offset = 128>)
       : tensor<1x8x?x192xbf16>, tensor<1x8x?x192xbf16>, tensor<1x8x?x128xbf16> -> tensor<1x8x?x128xbf16>
  return %o : tensor<1x8x?x128xbf16>
}

// -----

// Head dims of 256 (Gemma): O takes 128 of a thread's registers, so 16-key
// tiles; Q alone is 33 KiB, the tiles (mma.sync: 33792 + 8448 + 16896
// bytes) 58 KiB of dynamic shared memory.
// CHECK-SELECT-LABEL: func.func @wide_heads
// CHECK-SELECT: pe_gpu.mma_attention
// CHECK-KERNEL-LABEL: func.func @wide_heads
// CHECK-KERNEL: gpu.launch {{.*}} dynamic_shared_memory_size %c59136_i32
// CHECK-KERNEL: scf.for %{{.*}} = %c0{{.*}} to %{{.*}} step %c16{{.*}} iter_args
func.func @wide_heads(%q: tensor<1x8x?x256xbf16>, %k: tensor<1x4x?x256xbf16>,
                      %v: tensor<1x4x?x256xbf16>) -> tensor<1x8x?x256xbf16> {
  %o = pe.attention %q, %k, %v causal
       : tensor<1x8x?x256xbf16>, tensor<1x4x?x256xbf16>, tensor<1x4x?x256xbf16> -> tensor<1x8x?x256xbf16>
  return %o : tensor<1x8x?x256xbf16>
}

// -----

// A window both ways (no causal), default positions: the key range runs
// from qMin - 99 (on the 64-key tile grid) to qMax + 100.
// CHECK-KERNEL-LABEL: func.func @window_both_ways
// CHECK-KERNEL: %[[AFTER:.*]] = arith.addi %{{.*}}, %c100_i64 : i64
// CHECK-KERNEL: %[[AFTER0:.*]] = arith.maxsi %[[AFTER]], %c0_i64 : i64
// CHECK-KERNEL: %[[AFTERI:.*]] = arith.index_cast %[[AFTER0]] : i64 to index
// CHECK-KERNEL: %[[END:.*]] = arith.minui %{{.*}}, %[[AFTERI]] : index
// CHECK-KERNEL: arith.subi %{{.*}}, %c99_i64 : i64
// CHECK-KERNEL: %[[BEGIN:.*]] = arith.addi %c0{{.*}}, %{{.*}} : index
// CHECK-KERNEL: scf.for %{{.*}} = %[[BEGIN]] to %[[END]] step %c64
func.func @window_both_ways(%q: tensor<1x4x?x64xbf16>, %k: tensor<1x4x?x64xbf16>,
                            %v: tensor<1x4x?x64xbf16>) -> tensor<1x4x?x64xbf16> {
  %o = pe.attention %q, %k, %v window(100)
       : tensor<1x4x?x64xbf16>, tensor<1x4x?x64xbf16>, tensor<1x4x?x64xbf16> -> tensor<1x4x?x64xbf16>
  return %o : tensor<1x4x?x64xbf16>
}

// -----

// Absorbed latent attention (576 query/key channels, 512 value channels):
// two channel groups of four warps, 256 threads. Tiles: Q 64 x 584, K 16 x
// 584, two V stages of 16 x 520 (bf16), then the f32 exchange of the
// groups' halves of S, [8 warps][2 key blocks][32 lanes][4]: 134912 bytes,
// more than sm_86 allows a block (99 KiB), where the SIMT kernel takes it.
// Group g = warp / 4 multiplies channels 288 g .. 288 g + 287 of Q and K,
// stores its accumulators, waits at a barrier, adds those of warp (warp +
// 4) mod 8, and accumulates O over value channels 256 g .. 256 g + 255;
// the first group stores the decode statistics.
// CHECK-SELECT-LABEL: func.func @absorbed
// CHECK-SELECT: pe_gpu.mma_attention
// CHECK-SM86-LABEL: func.func @absorbed
// CHECK-SM86-NOT: pe_gpu.mma_attention
// CHECK-SM86: scf.parallel
// CHECK-KERNEL-LABEL: func.func @absorbed
// CHECK-KERNEL: gpu.launch {{.*}} threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size %c134912_i32
// CHECK-KERNEL: memref.view %[[BASE:.*]][%c0{{.*}}][] : memref<?xi8, 3> to memref<64x584xbf16, 3>
// CHECK-KERNEL: memref.view %[[BASE]][%c74752{{.*}}][] : memref<?xi8, 3> to memref<16x584xbf16, 3>
// CHECK-KERNEL: memref.view %[[BASE]][%c93440{{.*}}][] : memref<?xi8, 3> to memref<2x16x520xbf16, 3>
// CHECK-KERNEL: %[[XS:.*]] = memref.view %[[BASE]][%c126720{{.*}}][] : memref<?xi8, 3> to memref<8x2x32x4xf32, 3>
// CHECK-KERNEL: %[[WARP:.*]] = arith.divui %[[TID:.*]], %c32
// CHECK-KERNEL: arith.remui %[[WARP]], %c4
// CHECK-KERNEL: %[[GROUP:.*]] = arith.divui %[[WARP]], %c4
// CHECK-KERNEL: %[[SUM:.*]] = arith.addi %[[WARP]], %c4
// CHECK-KERNEL: %[[OTHER:.*]] = arith.remui %[[SUM]], %c8
// CHECK-KERNEL: %[[QBASE:.*]] = arith.muli %[[GROUP]], %c288
// CHECK-KERNEL: %[[VBASE:.*]] = arith.muli %[[GROUP]], %c256
// CHECK-KERNEL: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16{{.*}} iter_args
// CHECK-KERNEL: %[[QCOL:.*]] = arith.addi %{{.*}}, %[[QBASE]] : index
// CHECK-KERNEL: %[[KCOL:.*]] = arith.addi %{{.*}}, %[[QBASE]] : index
// CHECK-KERNEL: %[[QSTEP:.*]] = arith.addi %[[QCOL]], %c0{{.*}} : index
// CHECK-KERNEL: nvgpu.ldmatrix %{{.*}}[%{{.*}}, %[[QSTEP]]] {numTiles = 4 : i32, transpose = false} : memref<64x584xbf16, 3>
// CHECK-KERNEL: %[[KSTEP:.*]] = arith.addi %[[KCOL]], %c0{{.*}} : index
// CHECK-KERNEL: nvgpu.ldmatrix %{{.*}}[%{{.*}}, %[[KSTEP]]] {numTiles = 2 : i32, transpose = false} : memref<16x584xbf16, 3>
// CHECK-KERNEL-COUNT-36: nvvm.mma.sync
// CHECK-KERNEL: vector.store %{{.*}}, %[[XS]][%[[WARP]], %c0{{.*}}, %{{.*}}, %c0{{.*}}] {alignment = 16 : i64} : memref<8x2x32x4xf32, 3>, vector<4xf32>
// CHECK-KERNEL: vector.store %{{.*}}, %[[XS]][%[[WARP]], %c1{{.*}}, %{{.*}}, %c0{{.*}}] {alignment = 16 : i64} : memref<8x2x32x4xf32, 3>, vector<4xf32>
// CHECK-KERNEL-NEXT: gpu.barrier
// CHECK-KERNEL-NOT: nvvm.mma.sync
// CHECK-KERNEL: %[[THEIRS:.*]] = vector.load %[[XS]][%[[OTHER]], %c0{{.*}}, %{{.*}}, %c0{{.*}}] {alignment = 16 : i64} : memref<8x2x32x4xf32, 3>, vector<4xf32>
// CHECK-KERNEL: %[[E0:.*]] = vector.extract %[[THEIRS]][0] : f32 from vector<4xf32>
// CHECK-KERNEL-NEXT: arith.addf %{{.*}}, %[[E0]] : f32
// CHECK-KERNEL: %[[VCOL:.*]] = arith.addi %c0{{.*}}, %[[VBASE]] : index
// CHECK-KERNEL-NEXT: nvgpu.ldmatrix %{{.*}}[%{{.*}}, %{{.*}}, %[[VCOL]]] {numTiles = 2 : i32, transpose = true} : memref<2x16x520xbf16, 3>
// CHECK-KERNEL-COUNT-32: nvvm.mma.sync
// CHECK-KERNEL-NOT: nvvm.mma.sync
// CHECK-KERNEL: %[[OCOL:.*]] = arith.addi %{{.*}}, %[[VBASE]] : index
// CHECK-KERNEL-NEXT: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[OCOL]]] {{.*}} : memref<1x16x1x?x512xf32>, vector<2xf32>
// CHECK-KERNEL: arith.cmpi eq, %[[GROUP]], %c0
// CHECK-KERNEL: memref.store {{.*}} : memref<1x16x1x?x2xf32>
// CHECK-WGMMA-LABEL: func.func @absorbed
// CHECK-WGMMA-NOT: nvvm.wgmma
// CHECK-WGMMA: nvvm.mma.sync
// CHECK-WGMMA-NOT: nvvm.wgmma
// CHECK-WGMMA: return
func.func @absorbed(%q: tensor<1x16x1x576xbf16>, %c: tensor<1x1x?x576xbf16>)
    -> tensor<1x16x1x512xbf16> {
  %c2 = arith.constant 2 : index
  %s = tensor.dim %c, %c2 : tensor<1x1x?x576xbf16>
  %v = tensor.extract_slice %c[0, 0, 0, 0] [1, 1, %s, 512] [1, 1, 1, 1] : tensor<1x1x?x576xbf16> to tensor<1x1x?x512xbf16>
  %o = pe.attention %q, %c, %v causal
       rope(#pe.rope<rotary_dim = 64, rotary_offset = 512, style = interleaved>)
       : tensor<1x16x1x576xbf16>, tensor<1x1x?x576xbf16>, tensor<1x1x?x512xbf16> -> tensor<1x16x1x512xbf16>
  return %o : tensor<1x16x1x512xbf16>
}

// -----

// ALiBi adds to the scaled score (slope x distance, one FMA), so each score
// is multiplied by the row's scale before its bias, and the tile's row max
// is not scaled again.
// CHECK-KERNEL-LABEL: func.func @alibi_scaled
// CHECK-KERNEL: nvvm.mma.sync
// CHECK-KERNEL: scf.if
// CHECK-KERNEL: %[[SCALED:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-KERNEL: math.fma %{{.*}}, %{{.*}}, %[[SCALED]] : f32
// CHECK-KERNEL: } else {
// CHECK-KERNEL: %[[SCALED2:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-KERNEL: math.fma %{{.*}}, %{{.*}}, %[[SCALED2]] : f32
// CHECK-KERNEL: }
// CHECK-KERNEL: gpu.shuffle xor
// CHECK-KERNEL: gpu.shuffle xor
// CHECK-KERNEL-NEXT: arith.maxnumf
// CHECK-KERNEL-NEXT: arith.maxnumf
func.func @alibi_scaled(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x8x?x64xbf16>,
                        %v: tensor<1x8x?x64xbf16>) -> tensor<1x8x?x64xbf16> {
  %o = pe.attention %q, %k, %v causal alibi(8.0)
       : tensor<1x8x?x64xbf16>, tensor<1x8x?x64xbf16>, tensor<1x8x?x64xbf16> -> tensor<1x8x?x64xbf16>
  return %o : tensor<1x8x?x64xbf16>
}

// -----

// Explicit positions, warp-specialized: both roles find the tiles that the
// causal mask hides from every row of the block from the tile's key
// positions. Lane l of each warp reads those of keys t0 + l and t0 + l + 32
// (clamped to the last key); butterfly shuffles over the warp (offsets 1
// to 16, an i64 as two i32 words) give every lane the tile's lowest and
// highest; a tile whose lowest key position is after the block's highest
// query position is skipped (the producer copies nothing for it, the
// consumers wait for nothing), so both walk the same tiles. The producer
// keeps 40 registers for it (24 spill), the consumers take 232.
// CHECK-WS-LABEL: func.func @explicit_positions
// CHECK-WS: gpu.launch {{.*}} threads(%[[TX:[a-z0-9_]+]], {{.*}}) in (%{{.*}} = %c384,
// CHECK-WS: %[[QRANGE:.*]]:2 = scf.for {{.*}} -> (i64, i64) {
// CHECK-WS: nvvm.setmaxregister  decrease 40
// CHECK-WS: scf.for %[[T0:[a-z0-9_]+]] = {{.*}} iter_args(%[[N:[a-z0-9_]+]] = %{{.*}}) -> (index) {
// CHECK-WS: %[[LANE:.*]] = arith.remui %[[TX]], %c32{{.*}} : index
// CHECK-WS: arith.addi %[[T0]], %[[LANE]] : index
// CHECK-WS: memref.load %[[KP:.*]][%{{.*}}] : memref<?xi64>
// CHECK-WS: arith.addi %{{.*}}, %c32{{.*}} : index
// CHECK-WS: memref.load %[[KP]][%{{.*}}] : memref<?xi64>
// CHECK-WS-COUNT-4: gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK-WS-COUNT-4: gpu.shuffle  xor %{{.*}}, %c2_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK-WS-COUNT-4: gpu.shuffle  xor %{{.*}}, %c4_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK-WS-COUNT-4: gpu.shuffle  xor %{{.*}}, %c8_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK-WS-COUNT-2: gpu.shuffle  xor %{{.*}}, %c16_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK-WS: %[[KMIN:.*]] = arith.minsi %{{.*}}, %{{.*}} : i64
// CHECK-WS-COUNT-2: gpu.shuffle  xor %{{.*}}, %c16_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK-WS: %[[HIDDEN:.*]] = arith.cmpi sgt, %[[KMIN]], %[[QRANGE]]#1 : i64
// CHECK-WS: scf.if %[[HIDDEN]] -> (index) {
// CHECK-WS-NEXT: scf.yield %[[N]] : index
// CHECK-WS-NEXT: } else {
// CHECK-WS: nvvm.mbarrier.try_wait.parity
// CHECK-WS: nvgpu.device_async_copy
// CHECK-WS: %[[CTID:.*]] = arith.subi %[[TX]], %c128{{.*}} : index
// CHECK-WS-NEXT: nvvm.setmaxregister  increase 232
// CHECK-WS: scf.for %[[CT0:[a-z0-9_]+]] = {{.*}} -> (f32, f32, f32, f32, {{(vector<4xf32>, )+}}{{(i32, )+}}index) {
// CHECK-WS: %[[CLANE:.*]] = arith.remui %[[CTID]], %c32{{.*}} : index
// CHECK-WS: arith.addi %[[CT0]], %[[CLANE]] : index
// CHECK-WS: memref.load %[[KP]][%{{.*}}] : memref<?xi64>
// CHECK-WS: memref.load %[[KP]][%{{.*}}] : memref<?xi64>
// CHECK-WS-COUNT-18: gpu.shuffle  xor
// CHECK-WS: %[[CKMIN:.*]] = arith.minsi %{{.*}}, %{{.*}} : i64
// CHECK-WS-COUNT-2: gpu.shuffle  xor %{{.*}}, %c16_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK-WS: %[[CHIDDEN:.*]] = arith.cmpi sgt, %[[CKMIN]], %[[QRANGE]]#1 : i64
// CHECK-WS: scf.if %[[CHIDDEN]] -> (f32, f32, f32, f32,
// CHECK-WS-NEXT: scf.yield
// CHECK-WS-NEXT: } else {
// CHECK-WS: nvvm.mbarrier.try_wait.parity
func.func @explicit_positions(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x2x?x64xbf16>,
                              %v: tensor<1x2x?x64xbf16>, %qp: tensor<?xi64>,
                              %kp: tensor<?xi64>) -> tensor<1x8x?x64xbf16> {
  %o = pe.attention %q, %k, %v q_positions(%qp : tensor<?xi64>) k_positions(%kp : tensor<?xi64>) causal
       : tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x8x?x64xbf16>
  return %o : tensor<1x8x?x64xbf16>
}
