//===- GpuTensorCoreOccupancy.cpp - pe-gpu-tensor-core-occupancy ----------===//
//
// Kernels with warp-level matrix products keep their fragments (operands,
// accumulators, softmax state) in registers: one block per SM lets ptxas
// give a thread the whole budget of 255 registers rather than cap it for
// occupancy and spill.
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEGPUTENSORCOREOCCUPANCY
#include "pe/Codegen/GPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {
struct GpuTensorCoreOccupancyPass
    : pe::impl::PEGpuTensorCoreOccupancyBase<GpuTensorCoreOccupancyPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>()) {
      bool products = kernel
                          .walk([](Operation *op) {
                            return isa<NVVM::MmaOp, NVVM::WgmmaMmaAsyncOp>(op)
                                       ? WalkResult::interrupt()
                                       : WalkResult::advance();
                          })
                          .wasInterrupted();
      if (kernel.isKernel() && products)
        kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(), b.getI32IntegerAttr(1));
    }
  }
};
} // namespace
