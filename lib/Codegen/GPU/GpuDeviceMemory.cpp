//===- GpuDeviceMemory.cpp - pe-gpu-device-memory -------------------------===//
//
// Host functions of a GPU module: buffers in device memory.
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEGPUDEVICEMEMORY
#include "pe/Codegen/GPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

/// True for ops that run on the host (not inside a kernel).
static bool onHost(Operation *op) { return !op->getParentOfType<gpu::LaunchOp>(); }

namespace {
struct GpuDeviceMemoryPass : pe::impl::PEGpuDeviceMemoryBase<GpuDeviceMemoryPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (onHost(op) && isa<memref::AllocOp, memref::DeallocOp, memref::CopyOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      if (failed(rewrite(rewriter, op)))
        return signalPassFailure();
    }
  }

  LogicalResult rewrite(RewriterBase &rewriter, Operation *op) {
    Location loc = op->getLoc();
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      auto device = gpu::AllocOp::create(rewriter, loc, alloc.getType(), /*asyncToken=*/Type(),
                                         /*asyncDependencies=*/ValueRange(),
                                         alloc.getDynamicSizes(), alloc.getSymbolOperands());
      rewriter.replaceOp(alloc, device.getMemref());
      return success();
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      gpu::DeallocOp::create(rewriter, loc, Type(), ValueRange(), dealloc.getMemref());
      rewriter.eraseOp(dealloc);
      return success();
    }
    auto copy = cast<memref::CopyOp>(op);
    auto source = cast<MemRefType>(copy.getSource().getType());
    auto target = cast<MemRefType>(copy.getTarget().getType());
    if (!source.getLayout().isIdentity() || !target.getLayout().isIdentity())
      return copy.emitOpError("between strided buffers must be lowered to a loop "
                              "before pe-gpu-device-memory");
    gpu::MemcpyOp::create(rewriter, loc, Type(), ValueRange(), copy.getTarget(),
                          copy.getSource());
    rewriter.eraseOp(copy);
    return success();
  }
};
} // namespace
