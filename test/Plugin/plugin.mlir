// The stock mlir-opt of the LLVM installation (not pe-opt) loads libPEPlugin,
// parses pe IR, folds it and runs a pe pass given as a pipeline string (pass
// flags of a plugin are not command-line options).
// REQUIRES: plugin
// RUN: mlir-opt %s --load-dialect-plugin=%pe_libs/libPEPlugin%shlibext \
// RUN:   --load-pass-plugin=%pe_libs/libPEPlugin%shlibext \
// RUN:   --pass-pipeline="builtin.module(pe-specialize-rope-scaling{max-seq-len=16384},canonicalize)" \
// RUN:   | FileCheck %s
// RUN: mlir-opt --version | FileCheck %s --check-prefix=STOCK
// RUN: not mlir-opt %s 2>&1 | FileCheck %s --check-prefix=NOPLUGIN

// STOCK: LLVM version 22
// NOPLUGIN: Dialect `pe' not found for custom op 'pe.alibi_slopes'

// CHECK-LABEL: func.func @plugin
func.func @plugin(%x: tensor<1x4x8x64xf32>, %p: tensor<8xi32>) -> (tensor<4xf32>, tensor<1x4x8x64xf32>) {
  // Slopes fold to 2^-2, 2^-4, 2^-6, 2^-8 (the paper's formula for 4 heads).
  // CHECK: arith.constant dense<[2.500000e-01, 6.250000e-02, 1.562500e-02, 3.906250e-03]> : tensor<4xf32>
  %s = pe.alibi_slopes : tensor<4xf32>
  // theta' = 10000 * (2 * 16384 / 4096 - 1)^(64/62) = 10000 * 7^(32/31):
  // python3 -c "print(repr(10000 * 7 ** (64/62)))" gives 74534.83031811893.
  // CHECK: pe.rope #pe.rope<theta = 74534.830318118{{[0-9]*}}, rotary_dim = 64> %{{.*}}, %{{.*}}
  %y = pe.rope #pe.rope<rotary_dim = 64, scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 4096>> %x, %p : tensor<1x4x8x64xf32>, tensor<8xi32>
  return %s, %y : tensor<4xf32>, tensor<1x4x8x64xf32>
}
