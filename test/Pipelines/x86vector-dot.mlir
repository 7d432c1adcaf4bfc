// The CPU pipeline lowers x86vector.avx512.dot (bf16 pairs into f32) to the
// AVX512-BF16 intrinsic, and the back end to vdpbf16ps.
// RUN: pe-opt %s --pe-cpu-pipeline="target-triple=x86_64-linux-gnu target-cpu=znver4" | FileCheck %s --check-prefix=CHECK-LLVM
// RUN: pe-compile %s --emit=asm --mcpu=znver4 -o - | FileCheck %s --check-prefix=CHECK-ASM

// CHECK-LLVM: llvm.func @dot
// CHECK-LLVM: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// CHECK-ASM: vdpbf16ps %zmm
func.func @dot(%n: index) -> vector<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = arith.constant dense<1.0> : vector<32xbf16>
  %b = arith.constant dense<0.5> : vector<32xbf16>
  %z = arith.constant dense<0.0> : vector<16xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %z) -> (vector<16xf32>) {
    %y = x86vector.avx512.dot %x, %a, %b : vector<32xbf16> -> vector<16xf32>
    scf.yield %y : vector<16xf32>
  }
  return %r : vector<16xf32>
}
