// The sm_80 tensor-core sequence of a flash-attention tile, one warp:
// Q (16 x 16) and K (8 x 16) staged into shared memory with cp.async
// (16-byte chunks past L1, one commit group), read back as mma fragments with
// ldmatrix (x4 for A, x2 for B), S = Q K^T on mma.sync m16n8k16 with f32
// accumulators. f16 goes through nvgpu.mma.sync; MLIR 22's nvgpu.mma.sync
// cannot type bf16 operands, so bf16 uses nvvm.mma.sync on the fragments'
// 32-bit pairs.
//
// The kernels as outlining leaves them. (nvgpu ops declare no memory
// effects, which buffer deallocation rejects: tensor-core kernels are made
// on buffers, after bufferization.)
#smem = #gpu.address_space<workgroup>
module attributes {gpu.container_module} {
  gpu.module @pe_kernels {
  gpu.func @scores_f16(%q: memref<16x16xf16>, %k: memref<8x16xf16>, %s: memref<16x8xf32>)
      workgroup(%qs : memref<16x16xf16, #smem>, %ks : memref<8x16xf16, #smem>) kernel {
    %tx = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    // Lane l copies row l / 2, channels 8 (l % 2) .. +8 of Q (and of K for rows < 8).
    %row = arith.divui %tx, %c2 : index
    %col = arith.muli %c8, %tx : index
    %chunk = arith.remui %col, %c16 : index
    %t0 = nvgpu.device_async_copy %q[%row, %chunk], %qs[%row, %chunk], 8 {bypassL1} : memref<16x16xf16> to memref<16x16xf16, #smem>
    %krow = arith.remui %row, %c8 : index
    %t1 = nvgpu.device_async_copy %k[%krow, %chunk], %ks[%krow, %chunk], 8 {bypassL1} : memref<8x16xf16> to memref<8x16xf16, #smem>
    %g = nvgpu.device_async_create_group %t0, %t1
    nvgpu.device_async_wait %g {numGroups = 0 : i32}
    gpu.barrier
    // ldmatrix: lane l points at row l % 16, column 8 (l / 16) of Q (the
    // four 8x8 tiles of A) and at row l % 8, column 8 ((l / 8) % 2) of K
    // (the two tiles of B).
    %arow = arith.remui %tx, %c16 : index
    %ahalf = arith.divui %tx, %c16 : index
    %acol = arith.muli %ahalf, %c8 : index
    %a = nvgpu.ldmatrix %qs[%arow, %acol] {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, #smem> -> vector<4x2xf16>
    %brow = arith.remui %tx, %c8 : index
    %bhalf = arith.divui %tx, %c8 : index
    %bsel = arith.remui %bhalf, %c2 : index
    %bcol = arith.muli %bsel, %c8 : index
    %b = nvgpu.ldmatrix %ks[%brow, %bcol] {numTiles = 2 : i32, transpose = false} : memref<8x16xf16, #smem> -> vector<2x2xf16>
    %zero = arith.constant dense<0.0> : vector<2x2xf32>
    %d = nvgpu.mma.sync (%a, %b, %zero) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
    // Accumulator fragment: lane l holds rows l / 4 and l / 4 + 8, columns 2 (l % 4) .. +2.
    %r0 = arith.divui %tx, %c4 : index
    %r1 = arith.addi %r0, %c8 : index
    %pair = arith.remui %tx, %c4 : index
    %c0l = arith.muli %pair, %c2 : index
    %d0 = vector.extract %d[0] : vector<2xf32> from vector<2x2xf32>
    %d1 = vector.extract %d[1] : vector<2xf32> from vector<2x2xf32>
    vector.store %d0, %s[%r0, %c0l] : memref<16x8xf32>, vector<2xf32>
    vector.store %d1, %s[%r1, %c0l] : memref<16x8xf32>, vector<2xf32>
    gpu.return
  }
  gpu.func @scores_bf16(%q: memref<16x16xbf16>, %k: memref<8x16xbf16>, %s: memref<16x8xf32>)
      workgroup(%qs : memref<16x16xbf16, #smem>, %ks : memref<8x16xbf16, #smem>) kernel {
    %tx = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    // Lane l copies row l / 2, channels 8 (l % 2) .. +8 of Q (and of K for rows < 8).
    %row = arith.divui %tx, %c2 : index
    %col = arith.muli %c8, %tx : index
    %chunk = arith.remui %col, %c16 : index
    %t0 = nvgpu.device_async_copy %q[%row, %chunk], %qs[%row, %chunk], 8 {bypassL1} : memref<16x16xbf16> to memref<16x16xbf16, #smem>
    %krow = arith.remui %row, %c8 : index
    %t1 = nvgpu.device_async_copy %k[%krow, %chunk], %ks[%krow, %chunk], 8 {bypassL1} : memref<8x16xbf16> to memref<8x16xbf16, #smem>
    %g = nvgpu.device_async_create_group %t0, %t1
    nvgpu.device_async_wait %g {numGroups = 0 : i32}
    gpu.barrier
    // ldmatrix: lane l points at row l % 16, column 8 (l / 16) of Q (the
    // four 8x8 tiles of A) and at row l % 8, column 8 ((l / 8) % 2) of K
    // (the two tiles of B).
    %arow = arith.remui %tx, %c16 : index
    %ahalf = arith.divui %tx, %c16 : index
    %acol = arith.muli %ahalf, %c8 : index
    %a = nvgpu.ldmatrix %qs[%arow, %acol] {numTiles = 4 : i32, transpose = false} : memref<16x16xbf16, #smem> -> vector<4x2xbf16>
    %brow = arith.remui %tx, %c8 : index
    %bhalf = arith.divui %tx, %c8 : index
    %bsel = arith.remui %bhalf, %c2 : index
    %bcol = arith.muli %bsel, %c8 : index
    %b = nvgpu.ldmatrix %ks[%brow, %bcol] {numTiles = 2 : i32, transpose = false} : memref<8x16xbf16, #smem> -> vector<2x2xbf16>
    %f0 = arith.constant 0.0 : f32
    %a0 = vector.extract %a[0] : vector<2xbf16> from vector<4x2xbf16>
    %a1 = vector.extract %a[1] : vector<2xbf16> from vector<4x2xbf16>
    %a2 = vector.extract %a[2] : vector<2xbf16> from vector<4x2xbf16>
    %a3 = vector.extract %a[3] : vector<2xbf16> from vector<4x2xbf16>
    %b0 = vector.extract %b[0] : vector<2xbf16> from vector<2x2xbf16>
    %b1 = vector.extract %b[1] : vector<2xbf16> from vector<2x2xbf16>
    %ia0 = vector.bitcast %a0 : vector<2xbf16> to vector<1xi32>
    %ia1 = vector.bitcast %a1 : vector<2xbf16> to vector<1xi32>
    %ia2 = vector.bitcast %a2 : vector<2xbf16> to vector<1xi32>
    %ia3 = vector.bitcast %a3 : vector<2xbf16> to vector<1xi32>
    %ib0 = vector.bitcast %b0 : vector<2xbf16> to vector<1xi32>
    %ib1 = vector.bitcast %b1 : vector<2xbf16> to vector<1xi32>
    %xa0 = vector.extract %ia0[0] : i32 from vector<1xi32>
    %xa1 = vector.extract %ia1[0] : i32 from vector<1xi32>
    %xa2 = vector.extract %ia2[0] : i32 from vector<1xi32>
    %xa3 = vector.extract %ia3[0] : i32 from vector<1xi32>
    %xb0 = vector.extract %ib0[0] : i32 from vector<1xi32>
    %xb1 = vector.extract %ib1[0] : i32 from vector<1xi32>
    %m = nvvm.mma.sync A[%xa0, %xa1, %xa2, %xa3] B[%xb0, %xb1] C[%f0, %f0, %f0, %f0]
      {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
       multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>,
       shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    %e0 = llvm.extractvalue %m[0] : !llvm.struct<(f32, f32, f32, f32)>
    %e1 = llvm.extractvalue %m[1] : !llvm.struct<(f32, f32, f32, f32)>
    %e2 = llvm.extractvalue %m[2] : !llvm.struct<(f32, f32, f32, f32)>
    %e3 = llvm.extractvalue %m[3] : !llvm.struct<(f32, f32, f32, f32)>
    %d = vector.from_elements %e0, %e1, %e2, %e3 : vector<2x2xf32>
    // Accumulator fragment: lane l holds rows l / 4 and l / 4 + 8, columns 2 (l % 4) .. +2.
    %r0 = arith.divui %tx, %c4 : index
    %r1 = arith.addi %r0, %c8 : index
    %pair = arith.remui %tx, %c4 : index
    %c0l = arith.muli %pair, %c2 : index
    %d0 = vector.extract %d[0] : vector<2xf32> from vector<2x2xf32>
    %d1 = vector.extract %d[1] : vector<2xf32> from vector<2x2xf32>
    vector.store %d0, %s[%r0, %c0l] : memref<16x8xf32>, vector<2xf32>
    vector.store %d1, %s[%r1, %c0l] : memref<16x8xf32>, vector<2xf32>
    gpu.return
  }
}
}
