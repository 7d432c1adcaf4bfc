// pe-gpu-pipeline with tensor-cores (on by default): bf16/f16 attention
// becomes the tensor-core kernel, on warpgroup MMA for sm_90a (warpgroup-mma,
// on by default) and on mma.sync for sm_90a with warpgroup-mma=false and for
// the other chips (wgmma exists on sm_90a only); f32 attention stays on the
// SIMT kernel, as does every attention with tensor-cores=false.
// RUN: pe-opt %s --pe-gpu-pipeline | FileCheck %s --check-prefixes=CHECK-WGMMA,CHECK-F32
// RUN: pe-opt %s --pe-gpu-pipeline="tensor-cores" | FileCheck %s --check-prefixes=CHECK-WGMMA,CHECK-F32
// RUN: pe-opt %s --pe-gpu-pipeline="warpgroup-mma=false" | FileCheck %s --check-prefixes=CHECK-SYNC,CHECK-F32
// RUN: pe-opt %s --pe-gpu-pipeline="chip=sm_90" | FileCheck %s --check-prefixes=CHECK-SYNC,CHECK-F32
// RUN: pe-opt %s --pe-gpu-pipeline="chip=sm_100a" | FileCheck %s --check-prefixes=CHECK-SYNC,CHECK-F32
// RUN: pe-opt %s --pe-gpu-pipeline="tensor-cores=false" | FileCheck %s --check-prefixes=CHECK-SIMT,CHECK-F32

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
// CHECK-F32-SAME: .visible .entry attention_f32_kernel_0(
// CHECK-F32-NOT: attention_f32_attention_
// CHECK-F32-NOT: mma.sync
// CHECK-F32-NOT: wgmma
func.func @attention(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x2x?x64xbf16>,
                     %v: tensor<1x2x?x64xbf16>) -> tensor<1x8x?x64xbf16> {
  %o = pe.attention %q, %k, %v causal rope(#pe.rope<rotary_dim = 64>)
       : tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x8x?x64xbf16>
  return %o : tensor<1x8x?x64xbf16>
}

func.func @attention_f32(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>,
                         %v: tensor<1x2x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %o = pe.attention %q, %k, %v causal rope(#pe.rope<rotary_dim = 64>)
       : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}
