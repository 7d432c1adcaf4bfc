//===- GpuChip.h - what an NVIDIA GPU offers the kernels --------*- C++ -*-===//
//
// The facts of an NVIDIA chip (`sm_90a`, ...) that launch sizing and the
// GPU kernels' schedules depend on. LLVM's NVPTX back end knows a chip's
// instructions and PTX version but not its resources, which are those of
// the CUDA programming guide's compute-capability tables; the number of
// multiprocessors belongs to a product, not to a chip, so the description
// carries the count of the chip's data-center part (A100, H100/H200, B200,
// ...) and pe-gpu-pipeline's `multiprocessors` option names another.
//
//===----------------------------------------------------------------------===//
#ifndef PE_TARGET_GPUCHIP_H
#define PE_TARGET_GPUCHIP_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::pe {

struct GpuChip {
  std::string name;
  /// Compute capability x 10 (80, 86, 87, 89, 90, 100, 120).
  int64_t computeCapability = 0;
  /// Multiprocessors of the chip's reference part.
  int64_t multiprocessors = 0;
  /// Resident threads, 32-bit registers and shared memory of one
  /// multiprocessor; shared memory one block may ask for (opt-in above
  /// 48 KiB) and registers of one thread.
  int64_t threadsPerMultiprocessor = 0;
  int64_t registersPerMultiprocessor = 65536;
  int64_t sharedBytesPerMultiprocessor = 0;
  int64_t sharedBytesPerBlock = 0;
  int64_t registersPerThread = 255;
  /// Warpgroup MMA (wgmma) and TMA: sm_90a only.
  bool warpgroupMma = false;

  /// Threads resident at once when each uses `registers` registers.
  int64_t residentThreads(int64_t registers) const;
};

/// The description of `chip` (sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a,
/// sm_100, sm_100a, sm_120, sm_120a), or std::nullopt for another name.
std::optional<GpuChip> describeGpuChip(llvm::StringRef chip);

} // namespace mlir::pe

#endif // PE_TARGET_GPUCHIP_H
