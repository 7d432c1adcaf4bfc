// pe-gpu-pipeline: every loop nest a kernel in one GPU module, serialized to
// PTX for the chip (no CUDA needed for PTX); host code in the LLVM dialect
// launches the kernels.
// RUN: pe-opt %s --pe-gpu-pipeline | FileCheck %s
// RUN: pe-opt %s --pe-gpu-pipeline="chip=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: pe-opt %s --pe-gpu-pipeline="chip=sm_89 features=+ptx85 block-size=128" | FileCheck %s --check-prefix=SM89
// RUN: not pe-opt %s --pe-gpu-pipeline="chip=sm_90 features=+ptx60" 2>&1 | FileCheck %s --check-prefix=OLD-PTX
// RUN: not pe-opt %s --pe-gpu-pipeline="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not pe-opt %s --pe-gpu-pipeline="features=+avx512f" 2>&1 | FileCheck %s --check-prefix=FEATURE
// RUN: not pe-opt %s --pe-gpu-pipeline="format=elf" 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not pe-opt %s --pe-gpu-pipeline="block-size=2048" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not pe-opt %s --pe-gpu-on-cpu-pipeline="tensor-cores" 2>&1 | FileCheck %s --check-prefix=ON-CPU

// CHECK-LABEL: llvm.func @rope(
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @pe_kernels::@rope_kernel_0 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) : i64
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @pe_kernels::@rope_kernel_1
// CHECK: gpu.binary @pe_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">
// CHECK-SAME: .version 8.0
// CHECK-SAME: .target sm_90a
// CHECK-SAME: .visible .entry rope_kernel_0(
// CHECK-SAME: .maxntid 256, 1, 1
// SM80: chip = "sm_80", features = "+ptx70"
// SM80-SAME: .version 7.0
// SM89: chip = "sm_89", features = "+ptx85"
// SM89-SAME: .maxntid 128, 1, 1
// OLD-PTX: error: pe-gpu-pipeline: PTX 6.0 is too old for sm_90, which needs PTX 7.8 or newer
// CHIP: error: pe-gpu-pipeline: unsupported GPU chip 'sm_75'
// FEATURE: error: pe-gpu-pipeline: unsupported GPU target feature '+avx512f'
// FORMAT: error: pe-gpu-pipeline: unknown GPU binary format 'elf' (expected isa, bin or fatbin)
// BLOCK: error: pe-gpu-pipeline: block-size must be in [1, 1024], but got 2048
// ON-CPU: error: pe-gpu-pipeline: tensor-cores: the tensor-core kernel does not run on the on-CPU schedule
func.func @rope(%x: tensor<1x32x?x128xf32>, %pos: tensor<?xi32>) -> tensor<1x32x?x128xf32> {
  %r = pe.rope #pe.rope<rotary_dim = 128> %x, %pos : tensor<1x32x?x128xf32>, tensor<?xi32>
  return %r : tensor<1x32x?x128xf32>
}
