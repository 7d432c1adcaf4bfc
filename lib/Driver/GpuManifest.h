//===- GpuManifest.h - JSON description of compiled GPU kernels -----------===//
#ifndef PE_LIB_DRIVER_GPUMANIFEST_H
#define PE_LIB_DRIVER_GPUMANIFEST_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::pe {

/// What the manifest says of the binary beside it.
struct GpuManifestTarget {
  std::string chip;
  std::string features;
  std::string format; // isa | bin | fatbin
  std::string binary; // the binary's file name
};

/// Writes the manifest of `module` after `buildGpuKernelPipeline` (host
/// functions in the func/gpu dialects, kernels in `gpu.module @pe_kernels`):
/// every kernel with its parameters as the NVVM calling convention passes
/// them, and for every public function its arguments, results and the
/// sequence of steps (allocations, copies, launches, frees) a host without
/// LLVM replays to run it. A function whose steps depend on run-time values
/// (dynamic shapes) is marked `"replayable": false`. See docs/gpu.md.
LogicalResult writeGpuManifest(ModuleOp module, const GpuManifestTarget &target,
                               llvm::raw_ostream &os);

} // namespace mlir::pe

#endif // PE_LIB_DRIVER_GPUMANIFEST_H
