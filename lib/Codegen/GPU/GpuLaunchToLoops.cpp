//===- GpuLaunchToLoops.cpp - pe-gpu-launch-to-loops ----------------------===//
//
// The GPU schedule on the CPU: every gpu.launch becomes loops over its
// blocks and threads that run the kernel body in sequence, and GPU memory
// operations become memref ones. The index arithmetic, guards and deferred
// error reports of the kernels are then executed - and checked against a
// reference - on a machine without a GPU.
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEGPULAUNCHTOLOOPS
#include "pe/Codegen/GPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {
struct GpuLaunchToLoopsPass : pe::impl::PEGpuLaunchToLoopsBase<GpuLaunchToLoopsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp, gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp>(op))
        ops.push_back(op);
      return isa<gpu::LaunchOp>(op) ? WalkResult::skip() : WalkResult::advance();
    });
    for (Operation *op : ops) {
      if (failed(rewrite(op)))
        return signalPassFailure();
    }
  }

  static LogicalResult rewrite(Operation *op) {
    if (op->getNumResults() > 0 && isa<gpu::AsyncTokenType>(op->getResults().back().getType()))
      return op->emitOpError("is asynchronous: pe-gpu-launch-to-loops runs before "
                             "gpu-async-region");
    ImplicitLocOpBuilder b(op->getLoc(), op);
    if (auto launch = dyn_cast<gpu::LaunchOp>(op))
      return runInLoops(b, launch);
    if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
      Value host = memref::AllocOp::create(b, alloc.getMemref().getType(),
                                           alloc.getDynamicSizes(), alloc.getSymbolOperands());
      alloc.getMemref().replaceAllUsesWith(host);
    } else if (auto dealloc = dyn_cast<gpu::DeallocOp>(op)) {
      memref::DeallocOp::create(b, dealloc.getMemref());
    } else {
      auto copy = cast<gpu::MemcpyOp>(op);
      memref::CopyOp::create(b, copy.getSrc(), copy.getDst());
    }
    op->erase();
    return success();
  }

  /// for bz, by, bx, tz, ty, tx: the body with the ids and sizes bound.
  /// Without barriers (which pe kernels do not use) each thread may run to
  /// its end before the next starts.
  static LogicalResult runInLoops(ImplicitLocOpBuilder &b, gpu::LaunchOp launch) {
    WalkResult barrier = launch.getBody().walk([](gpu::BarrierOp) { return WalkResult::interrupt(); });
    if (barrier.wasInterrupted())
      return launch.emitOpError("with barriers cannot run its threads in sequence");
    if (launch.getDynamicSharedMemorySize())
      return launch.emitOpError("with dynamic shared memory cannot run on the CPU");
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    Value zero = arith::ConstantIndexOp::create(b, 0);
    Value one = arith::ConstantIndexOp::create(b, 1);
    SmallVector<Value> ubs = {grid.z, grid.y, grid.x, block.z, block.y, block.x};
    SmallVector<Value> ivs;
    for (Value ub : ubs) {
      auto loop = scf::ForOp::create(b, zero, ub, one);
      ivs.push_back(loop.getInductionVar());
      b.setInsertionPoint(loop.getBody()->getTerminator());
    }
    IRMapping mapping;
    gpu::KernelDim3 blockIds = launch.getBlockIds(), threadIds = launch.getThreadIds();
    gpu::KernelDim3 gridSize = launch.getGridSize(), blockSize = launch.getBlockSize();
    mapping.map(ValueRange{blockIds.z, blockIds.y, blockIds.x, threadIds.z, threadIds.y,
                           threadIds.x},
                ivs);
    mapping.map(ValueRange{gridSize.x, gridSize.y, gridSize.z, blockSize.x, blockSize.y,
                           blockSize.z},
                ValueRange{grid.x, grid.y, grid.z, block.x, block.y, block.z});
    Block &body = launch.getBody().front();
    if (!llvm::hasSingleElement(launch.getBody()))
      return launch.emitOpError("with a multi-block body cannot run on the CPU");
    for (Operation &op : body.without_terminator())
      b.clone(op, mapping);
    launch.erase();
    return success();
  }
};
} // namespace
