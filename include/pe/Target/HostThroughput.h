//===- HostThroughput.h - measured instruction rates of the host -*- C++ -*-===//
//
// What the target description cannot say: how fast the host runs the
// instructions it has. bf16 dot products (vdpbf16ps) run at twice the rate
// of f32 FMAs on AMD Zen 4 and Zen 5 and at half of it on Intel Sapphire
// Rapids, and LLVM's scheduling models have both wrong (llvm-mca gives
// vdpbf16ps a third of the FMA rate on znver4), so the choice between
// them is measured: once per machine, a few milliseconds, then read from a
// cache file.
//
//===----------------------------------------------------------------------===//
#ifndef PE_TARGET_HOSTTHROUGHPUT_H
#define PE_TARGET_HOSTTHROUGHPUT_H

#include <optional>
#include <string>

namespace mlir::pe {

/// Rates of one core in GFLOP/s (a multiply-add counts 2 flops; a bf16
/// pair dot product 4 per lane).
struct HostThroughput {
  double fmaGflops = 0;
  double bf16DotGflops = 0;
};

/// The host's f32 FMA and vdpbf16ps rates on 512-bit vectors: read from
/// the cache file (`hostThroughputCacheFile()`) when it holds this host's,
/// else measured (about 5 ms) and written there. std::nullopt where the
/// host is not x86 with AVX512-BF16. Thread-safe; measured at most once per
/// process.
std::optional<HostThroughput> hostThroughput();

/// The cache file of this host's rates: in `$PE_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/pe-mlir`, else `~/.cache/pe-mlir`, named after a hash
/// of the host CPU's name and features (a new CPU or kernel that exposes
/// other features measures again). Empty when no folder can be named.
std::string hostThroughputCacheFile();

} // namespace mlir::pe

#endif // PE_TARGET_HOSTTHROUGHPUT_H
