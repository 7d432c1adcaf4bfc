// The CPU pipeline makes the dot products of bf16 pairs (a vector.contract
// over [N x 2] bf16 into N f32 lanes) the target's instruction: vdpbf16ps with AVX512-BF16, BFDOT on AArch64 with
// BF16, f32 FMAs elsewhere.
// RUN: pe-opt %s --pe-cpu-pipeline="target-triple=x86_64-linux-gnu target-cpu=znver4" | FileCheck %s --check-prefix=CHECK-LLVM
// RUN: pe-compile %s --emit=asm --mcpu=znver4 -o - | FileCheck %s --check-prefix=CHECK-AVX512
// RUN: pe-compile %s --emit=asm --mcpu=x86-64-v3 -o - | FileCheck %s --check-prefix=CHECK-AVX2
// RUN: pe-compile %s --emit=asm --mtriple=aarch64-linux-gnu --mcpu=neoverse-v2 -o - | FileCheck %s --check-prefix=CHECK-BFDOT
// RUN: pe-compile %s --emit=asm --mtriple=aarch64-linux-gnu --mcpu=neoverse-n1 -o - | FileCheck %s --check-prefix=CHECK-NEON

// CHECK-LLVM: llvm.func @dot
// CHECK-LLVM: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// CHECK-AVX512: vdpbf16ps %zmm
// CHECK-AVX2-NOT: vdpbf16ps
// CHECK-AVX2: vfmadd{{...}}ps %ymm
// CHECK-BFDOT-LABEL: {{^}}__pe_body_pe_dot4:
// CHECK-BFDOT: bfdot v{{[0-9]+}}.4s, v{{[0-9]+}}.8h, v{{[0-9]+}}.8h
// CHECK-NEON-LABEL: {{^}}__pe_body_pe_dot4:
// CHECK-NEON-NOT: bfdot
// CHECK-NEON: fmla v{{[0-9]+}}.4s
#pairs = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>]
#pair_dot = {indexing_maps = #pairs, iterator_types = ["parallel", "reduction"], kind = #vector.kind<add>}

func.func @dot(%n: index, %a: vector<16x2xbf16>, %b: vector<16x2xbf16>) -> vector<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : vector<16xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %z) -> (vector<16xf32>) {
    %y = vector.contract #pair_dot %a, %b, %x : vector<16x2xbf16>, vector<16x2xbf16> into vector<16xf32>
    scf.yield %y : vector<16xf32>
  }
  return %r : vector<16xf32>
}

func.func @dot4(%acc: vector<4xf32>, %a: vector<4x2xbf16>, %b: vector<4x2xbf16>) -> vector<4xf32> {
  %y = vector.contract #pair_dot %a, %b, %acc : vector<4x2xbf16>, vector<4x2xbf16> into vector<4xf32>
  return %y : vector<4xf32>
}
