//===- GpuSinkConstants.cpp - pe-gpu-sink-constants -----------------------===//
//
// Vector constants (every constant of a tensor-core kernel: a launch marked
// pe.tensor_core_kernel or with nvgpu ops) used in a gpu.launch copied into
// it before outlining:
// immediates in the kernel instead of kernel parameters, which a manifest
// could not describe as values; the constant indices of memref.dim ops. And
// the memref.get_global ops a launch uses
// (folded tables, ALiBi slopes): outlining then copies the global into the
// GPU module, where a host global would pass a host address to the kernel.
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEGPUSINKCONSTANTS
#include "pe/Codegen/GPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

/// Clones the memref.get_global ops that `region` uses from outside into
/// its entry block.
static void rematerializeGlobals(Region &region) {
  SetVector<Value> above;
  getUsedValuesDefinedAbove(region, above);
  OpBuilder b = OpBuilder::atBlockBegin(&region.front());
  for (Value value : above) {
    auto global = value.getDefiningOp<memref::GetGlobalOp>();
    if (!global)
      continue;
    Value inside = b.clone(*global)->getResult(0);
    replaceAllUsesInRegionWith(value, inside, region);
  }
}

/// Clones the constant index of every memref.dim in `region` defined
/// outside it next to the dim: as a kernel parameter, the dim would become
/// a dynamic lookup in a local-memory copy of the sizes.
static void rematerializeDimIndices(Region &region) {
  region.walk([&](memref::DimOp dim) {
    Operation *index = dim.getIndex().getDefiningOp();
    if (!index || !isa<arith::ConstantOp>(index) || region.isAncestor(index->getParentRegion()))
      return;
    OpBuilder b(dim);
    dim.getIndexMutable().assign(b.clone(*index)->getResult(0));
  });
}

namespace {
struct GpuSinkConstantsPass : pe::impl::PEGpuSinkConstantsBase<GpuSinkConstantsPass> {
  void runOnOperation() override {
    // Only vector constants: making scalar sizes and strides immediates as
    // well (upstream's gpu-launch-sink-index-computations) lets LLVM unroll
    // the reduction loops of the reference attention kernels until their
    // registers spill. Every constant of a launch with nvgpu ops (the
    // tensor-core kernels, unrolled already): converting nvgpu to NVVM before
    // outlining casts index values where they are defined, and a cast on the
    // host would enter the kernel as a parameter. (LLVM's poison and zero
    // values seed the accumulator structs of warpgroup MMA.)
    auto isVectorConstant = [](Operation *op) {
      return isa<arith::ConstantOp>(op) && isa<VectorType>(op->getResult(0).getType());
    };
    auto isConstant = [](Operation *op) {
      return isa<arith::ConstantOp, LLVM::PoisonOp, LLVM::ZeroOp, LLVM::UndefOp>(op);
    };
    auto isTensorCoreKernel = [](gpu::LaunchOp launch) {
      if (launch->hasAttr(pe::kGpuTensorCoreLaunchAttr))
        return true;
      return launch
          .walk([](Operation *op) {
            return isa<nvgpu::NVGPUDialect>(op->getDialect()) ? WalkResult::interrupt()
                                                              : WalkResult::advance();
          })
          .wasInterrupted();
    };
    WalkResult result = getOperation().walk([&](gpu::LaunchOp launch) {
      rematerializeGlobals(launch.getBody());
      rematerializeDimIndices(launch.getBody());
      auto sinks = isTensorCoreKernel(launch) ? function_ref<bool(Operation *)>(isConstant)
                                       : function_ref<bool(Operation *)>(isVectorConstant);
      return failed(sinkOperationsIntoLaunchOp(launch, sinks)) ? WalkResult::interrupt()
                                                                : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
