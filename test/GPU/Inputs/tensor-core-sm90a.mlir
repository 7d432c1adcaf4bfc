// The sm_90a tensor-core sequence of a flash-attention tile, one warpgroup
// (128 threads): the host makes TMA descriptors of Q and K (64 x 64 bf16
// boxes, 128-byte swizzle: nvgpu.tma.create.descriptor, which calls the
// runtime's mgpuTensorMapEncodeTiledMemref); one thread starts both bulk tensor copies into
// shared memory on an mbarrier that expects their 16384 bytes; the
// warpgroup waits on the barrier's phase and computes S = Q K^T (64 x 64,
// f32 accumulators) as four wgmma m64n64k16 from shared-memory descriptors.
//
// The kernel as outlining leaves it: a descriptor enters the kernel as the
// pointer that the nvgpu lowering makes of it. (nvgpu ops declare no
// memory effects, which buffer deallocation rejects: tensor-core kernels
// are made on buffers, after bufferization.)
!barrier = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
!tileMap = !nvgpu.tensormap.descriptor<tensor = memref<64x64xbf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!wgTile = !nvgpu.warpgroup.descriptor<tensor = memref<64x64xbf16, 3>>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>
module attributes {gpu.container_module} {
  gpu.module @pe_kernels {
    memref.global "private" @smem : memref<0xbf16, 3> {alignment = 1024 : i64}
    gpu.func @scores_kernel(%qp: !llvm.ptr, %kp: !llvm.ptr, %s: memref<64x64xf32>) kernel {
      %qd = builtin.unrealized_conversion_cast %qp : !llvm.ptr to !tileMap
      %kd = builtin.unrealized_conversion_cast %kp : !llvm.ptr to !tileMap
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bytes = arith.constant 16384 : index
      %ticks = arith.constant 10000000 : index
      %phase = arith.constant false
      %tx = gpu.thread_id x
      %base = memref.get_global @smem : memref<0xbf16, 3>
      %qs = memref.reinterpret_cast %base to offset: [0], sizes: [64, 64], strides: [64, 1] : memref<0xbf16, 3> to memref<64x64xbf16, 3>
      %ks = memref.reinterpret_cast %base to offset: [4096], sizes: [64, 64], strides: [64, 1] : memref<0xbf16, 3> to memref<64x64xbf16, strided<[64, 1], offset: 4096>, 3>
      %bar = nvgpu.mbarrier.create -> !barrier
      %first = arith.cmpi eq, %tx, %c0 : index
      // One thread initializes the barrier; every thread sees it initialized
      // before anyone arrives or waits on it.
      scf.if %first {
        nvgpu.mbarrier.init %bar[%c0], %c1 : !barrier
      }
      gpu.barrier
      scf.if %first {
        nvgpu.mbarrier.arrive.expect_tx %bar[%c0], %bytes : !barrier
        nvgpu.tma.async.load %qd[%c0, %c0], %bar[%c0] to %qs : !tileMap, !barrier -> memref<64x64xbf16, 3>
        nvgpu.tma.async.load %kd[%c0, %c0], %bar[%c0] to %ks : !tileMap, !barrier -> memref<64x64xbf16, strided<[64, 1], offset: 4096>, 3>
      }
      nvgpu.mbarrier.try_wait.parity %bar[%c0], %phase, %ticks : !barrier
      %da = nvgpu.warpgroup.generate.descriptor %qs, %qd : memref<64x64xbf16, 3>, !tileMap -> !wgTile
      %db = nvgpu.warpgroup.generate.descriptor %ks, %kd : memref<64x64xbf16, strided<[64, 1], offset: 4096>, 3>, !tileMap -> !wgTile
      %acc = nvgpu.warpgroup.mma.init.accumulator -> !acc
      %d = nvgpu.warpgroup.mma %da, %db, %acc {transposeB} : !wgTile, !wgTile, !acc -> !acc
      nvvm.wgmma.wait.group.sync.aligned 0
      nvgpu.warpgroup.mma.store %d, %s : !acc to memref<64x64xf32>
      gpu.return
    }
  }
}
