// The flash-attention kernel scheduled for the module's target (llvm.target,
// pe-set-target): vectors of the target's f32 lanes and micro-tiles its
// vector registers hold (pe/Target/CpuSchedule.h).
//
// AVX2 (16 registers of 8 lanes): S^T = K Q^T in micro-tiles of 2 row
// vectors x 6 keys, 12 accumulators carried by the loop over D.
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=znver2" --pe-tile-attention | FileCheck %s --check-prefix=CHECK-AVX2
// CHECK-AVX2-LABEL: func.func private @pe_attention_kernel
// CHECK-AVX2-NOT: vector<16xf32>
// CHECK-AVX2: scf.for %{{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
//
// AVX-512 (32 registers of 16 lanes): 4 row vectors x 6 keys, 24 accumulators.
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=skylake-avx512" --pe-tile-attention | FileCheck %s --check-prefix=CHECK-AVX512
// CHECK-AVX512-LABEL: func.func private @pe_attention_kernel
// CHECK-AVX512: scf.for %{{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
//
// NEON (32 registers of 4 lanes): 4 row vectors x 6 keys of vector<4xf32>.
// RUN: pe-opt %s --pe-set-target="triple=aarch64-linux-gnu cpu=neoverse-n1" --pe-tile-attention | FileCheck %s --check-prefix=CHECK-NEON
// CHECK-NEON-LABEL: func.func private @pe_attention_kernel
// CHECK-NEON-NOT: vector<8xf32>
// CHECK-NEON: scf.for %{{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
//
// The module's own llvm.target is what the kernels follow when no pass
// option names one.
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=znver2" | pe-opt --pe-set-target --pe-tile-attention | FileCheck %s --check-prefix=CHECK-AVX2
//
// A target LLVM cannot build is an error.
// RUN: not pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=nosuchcpu" 2>&1 | FileCheck %s --check-prefix=CHECK-BAD
// CHECK-BAD: error: pe-set-target: unknown CPU 'nosuchcpu' for x86_64-unknown-linux-gnu

func.func @gqa(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>, %v: tensor<1x2x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %o = pe.attention %q, %k, %v causal : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}
