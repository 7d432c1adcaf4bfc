// RUN: pe-opt %s --pe-gpu-mma-attention -split-input-file -verify-diagnostics

// Head dims the verifier accepts (multiples of 16 up to 256) whose Q, K and
// V tiles do not fit a block's static shared memory even at 16 keys: the
// kernel refuses them (pe-gpu-tile-attention gives such heads to the SIMT
// kernel).
module {
  func.func @too_wide(%q: memref<1x4x?x256xbf16>, %k: memref<1x4x?x256xbf16>,
                      %v: memref<1x4x?x256xbf16>, %p: memref<?xi64>,
                      %o: memref<1x4x?x256xbf16>) {
    // expected-error @+1 {{has head dims 256 and 256 whose tiles do not fit a block's 48 KiB of static shared memory}}
    pe_gpu.mma_attention %q, %k, %v into %o positions(%p, %p) scale(0.0625)
      : memref<1x4x?x256xbf16>, memref<1x4x?x256xbf16>, memref<1x4x?x256xbf16>, memref<?xi64>, memref<?xi64> -> memref<1x4x?x256xbf16>
    return
  }
}
