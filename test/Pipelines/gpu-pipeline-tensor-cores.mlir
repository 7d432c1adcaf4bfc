// pe-gpu-pipeline with tensor-cores: bf16 attention becomes the tensor-core
// kernel, on warpgroup MMA for sm_90a (warpgroup-mma, on by default) and on
// mma.sync for sm_90a with warpgroup-mma=false and for the other chips
// (wgmma exists on sm_90a only).
// RUN: pe-opt %s --pe-gpu-pipeline="tensor-cores" | FileCheck %s --check-prefix=CHECK-WGMMA
// RUN: pe-opt %s --pe-gpu-pipeline="tensor-cores warpgroup-mma=false" | FileCheck %s --check-prefix=CHECK-SYNC
// RUN: pe-opt %s --pe-gpu-pipeline="tensor-cores chip=sm_90" | FileCheck %s --check-prefix=CHECK-SYNC
// RUN: pe-opt %s --pe-gpu-pipeline="tensor-cores chip=sm_100a" | FileCheck %s --check-prefix=CHECK-SYNC
// RUN: pe-opt %s --pe-gpu-pipeline | FileCheck %s --check-prefix=CHECK-SIMT

// CHECK-WGMMA: gpu.launch_func <%{{.*}} : !llvm.ptr> @pe_kernels::@attention_attention_0
// CHECK-WGMMA: gpu.binary @pe_kernels
// CHECK-WGMMA-SAME: .visible .entry attention_attention_0(
// CHECK-WGMMA-SAME: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK-WGMMA-NOT: mma.sync.aligned
// CHECK-SYNC: gpu.launch_func <%{{.*}} : !llvm.ptr> @pe_kernels::@attention_attention_0
// CHECK-SYNC: gpu.binary @pe_kernels
// CHECK-SYNC-SAME: .visible .entry attention_attention_0(
// CHECK-SYNC-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-SYNC-NOT: wgmma
// CHECK-SIMT: gpu.binary @pe_kernels
// CHECK-SIMT-SAME: .visible .entry attention_kernel_0(
// CHECK-SIMT-NOT: attention_attention_0
// CHECK-SIMT-NOT: mma.sync
// CHECK-SIMT-NOT: wgmma
func.func @attention(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x2x?x64xbf16>,
                     %v: tensor<1x2x?x64xbf16>) -> tensor<1x8x?x64xbf16> {
  %o = pe.attention %q, %k, %v causal rope(#pe.rope<rotary_dim = 64>)
       : tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x8x?x64xbf16>
  return %o : tensor<1x8x?x64xbf16>
}
