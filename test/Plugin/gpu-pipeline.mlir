// The stock mlir-opt runs pe-gpu-pipeline from the plugin and ends in a
// gpu.binary with PTX for the chip.
// REQUIRES: plugin
// RUN: mlir-opt %s --load-dialect-plugin=%pe_libs/libPEPlugin%shlibext \
// RUN:   --load-pass-plugin=%pe_libs/libPEPlugin%shlibext \
// RUN:   --pass-pipeline="builtin.module(pe-gpu-pipeline{chip=sm_80})" | FileCheck %s
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @pe_kernels::@alibi_kernel_0
// CHECK: gpu.binary @pe_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">
// CHECK-SAME: .visible .entry alibi_kernel_0(
func.func @alibi(%qp: tensor<?xi32>, %kp: tensor<?xi32>) -> tensor<8x?x?xf32> {
  %s = pe.alibi_slopes : tensor<8xf32>
  %b = pe.alibi_bias causal %s, %qp, %kp : tensor<8xf32>, tensor<?xi32>, tensor<?xi32> -> tensor<8x?x?xf32>
  return %b : tensor<8x?x?xf32>
}
