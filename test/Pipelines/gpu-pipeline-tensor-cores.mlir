// pe-gpu-pipeline with tensor-cores: bf16 attention becomes the tensor-core
// kernel, on warpgroup MMA for sm_90a (warpgroup-mma, on by default) and on
// mma.sync for sm_90a with warpgroup-mma=false and for the other chips
// (wgmma exists on sm_90a only).
// RUN: pe-opt %s --pe-gpu-pipeline="tensor-cores" | FileCheck %s --check-prefix=WGMMA
// RUN: pe-opt %s --pe-gpu-pipeline="tensor-cores warpgroup-mma=false" | FileCheck %s --check-prefix=SYNC
// RUN: pe-opt %s --pe-gpu-pipeline="tensor-cores chip=sm_90" | FileCheck %s --check-prefix=SYNC
// RUN: pe-opt %s --pe-gpu-pipeline="tensor-cores chip=sm_100a" | FileCheck %s --check-prefix=SYNC
// RUN: pe-opt %s --pe-gpu-pipeline | FileCheck %s --check-prefix=SIMT

// WGMMA: gpu.launch_func <%{{.*}} : !llvm.ptr> @pe_kernels::@attention_attention_0
// WGMMA: gpu.binary @pe_kernels
// WGMMA-SAME: .visible .entry attention_attention_0(
// WGMMA-SAME: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// WGMMA-NOT: mma.sync.aligned
// SYNC: gpu.launch_func <%{{.*}} : !llvm.ptr> @pe_kernels::@attention_attention_0
// SYNC: gpu.binary @pe_kernels
// SYNC-SAME: .visible .entry attention_attention_0(
// SYNC-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// SYNC-NOT: wgmma
// SIMT-NOT: attention_attention_0
// SIMT-NOT: mma.sync
// SIMT-NOT: wgmma
func.func @attention(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x2x?x64xbf16>,
                     %v: tensor<1x2x?x64xbf16>) -> tensor<1x8x?x64xbf16> {
  %o = pe.attention %q, %k, %v causal rope(#pe.rope<rotary_dim = 64>)
       : tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x8x?x64xbf16>
  return %o : tensor<1x8x?x64xbf16>
}
