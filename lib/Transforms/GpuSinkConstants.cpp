//===- GpuSinkConstants.cpp - pe-gpu-sink-constants -----------------------===//
//
// Vector constants used in a gpu.launch copied into it before outlining:
// immediates in the kernel instead of kernel parameters, which a manifest
// could not describe as values.
//
//===----------------------------------------------------------------------===//
#include "pe/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEGPUSINKCONSTANTS
#include "pe/Transforms/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {
struct GpuSinkConstantsPass : pe::impl::PEGpuSinkConstantsBase<GpuSinkConstantsPass> {
  void runOnOperation() override {
    // Only vector constants: making scalar sizes and strides immediates as
    // well (upstream's gpu-launch-sink-index-computations) lets LLVM unroll
    // the reduction loops of the reference attention kernels until their
    // registers spill.
    auto isConstant = [](Operation *op) {
      return isa<arith::ConstantOp>(op) && isa<VectorType>(op->getResult(0).getType());
    };
    WalkResult result = getOperation().walk([&](gpu::LaunchOp launch) {
      return failed(sinkOperationsIntoLaunchOp(launch, isConstant)) ? WalkResult::interrupt()
                                                                     : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
