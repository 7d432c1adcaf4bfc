// pe-compile picks the bf16 dot-product kernel where the target has
// avx512bf16 (--bf16-dot=auto, the default), never with --bf16-dot=off, and
// with --bf16-dot=on adds the feature to any target: the kernel's products
// are vdpbf16ps, else f32 FMAs on converted values. (Cooper Lake, not a CPU
// such tests run on: for the host, auto also measures both rates.)
// RUN: pe-compile %s --emit=asm --mcpu=cooperlake -o - | FileCheck %s --check-prefix=CHECK-DOT
// RUN: pe-compile %s --emit=asm --mcpu=skylake-avx512 --bf16-dot=on -o - | FileCheck %s --check-prefix=CHECK-DOT
// RUN: pe-compile %s --emit=asm --mcpu=skylake-avx512 -o - | FileCheck %s --check-prefix=CHECK-FMA
// RUN: pe-compile %s --emit=asm --mcpu=znver4 --bf16-dot=off -o - | FileCheck %s --check-prefix=CHECK-FMA

// The kernels stay functions of their own (noinline: the entry that calls
// them would otherwise take them in, and its values would compete for the
// registers of their loops); the products are theirs.
// CHECK-DOT-LABEL: attn_shared:
// CHECK-DOT-NOT: vdpbf16ps
// CHECK-DOT: callq pe_attention_kernel
// CHECK-DOT-LABEL: pe_attention_kernel:
// CHECK-DOT: vdpbf16ps %zmm{{[0-9]+}}, %zmm{{[0-9]+}}, %zmm{{[0-9]+}}
// CHECK-FMA-LABEL: attn_shared:
// CHECK-FMA-NOT: vdpbf16ps
// CHECK-FMA: callq pe_attention_kernel
// CHECK-FMA-LABEL: pe_attention_kernel:
// CHECK-FMA-NOT: vdpbf16ps
// CHECK-FMA: vfmadd{{[0-9]+}}ps {{.*}}%zmm
// CHECK-FMA-NOT: vdpbf16ps
func.func @attn(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x2x?x64xbf16>, %v: tensor<1x2x?x64xbf16>) -> tensor<1x8x?x64xbf16> {
  %o = pe.attention %q, %k, %v causal rope(#pe.rope<rotary_dim = 64>) : tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x8x?x64xbf16>
  return %o : tensor<1x8x?x64xbf16>
}
