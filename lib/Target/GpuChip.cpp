//===- GpuChip.cpp - what an NVIDIA GPU offers the kernels ----------------===//
#include "pe/Target/GpuChip.h"

#include "llvm/ADT/StringSwitch.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::pe;

int64_t GpuChip::residentThreads(int64_t registers) const {
  // Registers are allocated per warp in units of 256.
  int64_t perWarp = (std::max<int64_t>(registers, 1) * 32 + 255) / 256 * 256;
  int64_t warps = registersPerMultiprocessor / perWarp;
  return multiprocessors * std::min(threadsPerMultiprocessor, warps * 32);
}

std::optional<GpuChip> pe::describeGpuChip(llvm::StringRef chip) {
  // cc, reference part's SMs, threads/SM, shared bytes/SM, shared bytes/block.
  struct Row {
    int64_t cc, sms, threads, sharedPerSm, sharedPerBlock;
  };
  constexpr int64_t KiB = 1024;
  std::optional<Row> row = llvm::StringSwitch<std::optional<Row>>(chip)
                               .Case("sm_80", Row{80, 108, 2048, 164 * KiB, 163 * KiB}) // A100
                               .Case("sm_86", Row{86, 84, 1536, 100 * KiB, 99 * KiB})   // A40
                               .Case("sm_87", Row{87, 16, 1536, 164 * KiB, 163 * KiB})  // Orin
                               .Case("sm_89", Row{89, 142, 1536, 100 * KiB, 99 * KiB})  // L40S
                               .Cases({"sm_90", "sm_90a"},
                                      Row{90, 132, 2048, 228 * KiB, 227 * KiB})  // H100/H200
                               .Cases({"sm_100", "sm_100a"},
                                      Row{100, 148, 2048, 228 * KiB, 227 * KiB}) // B200
                               .Cases({"sm_120", "sm_120a"},
                                      Row{120, 170, 1536, 100 * KiB, 99 * KiB}) // RTX 5090
                               .Default(std::nullopt);
  if (!row)
    return std::nullopt;
  GpuChip description;
  description.name = chip.str();
  description.computeCapability = row->cc;
  description.multiprocessors = row->sms;
  description.threadsPerMultiprocessor = row->threads;
  description.sharedBytesPerMultiprocessor = row->sharedPerSm;
  description.sharedBytesPerBlock = row->sharedPerBlock;
  description.warpgroupMma = chip == "sm_90a";
  return description;
}
