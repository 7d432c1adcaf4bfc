//===- GpuHostBuffers.cpp - pe-gpu-host-buffers ---------------------------===//
//
// Public host functions of a GPU module take and return host memory, as
// their CPU builds do: arguments are copied to the device on entry, results
// back to fresh host buffers on return, and the arguments the function
// updates in place (`pe.in_place_arguments`: KV caches) back into the
// caller's buffers.
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/GPU/Passes.h"
#include "pe/CInterface/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEGPUHOSTBUFFERS
#include "pe/Codegen/GPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

/// The dynamic sizes of `buffer`, for an allocation of the same shape.
static SmallVector<Value> dynamicSizes(ImplicitLocOpBuilder &b, Value buffer) {
  SmallVector<Value> sizes;
  auto type = cast<MemRefType>(buffer.getType());
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    if (type.isDynamicDim(dim))
      sizes.push_back(memref::DimOp::create(b, buffer, dim));
  return sizes;
}

/// gpu.alloc of a buffer shaped like `like` (identity layout).
static Value deviceAlloc(ImplicitLocOpBuilder &b, Value like) {
  return gpu::AllocOp::create(b, like.getType(), Type(), ValueRange(), dynamicSizes(b, like),
                              ValueRange())
      .getMemref();
}

namespace {
struct GpuHostBuffersPass : pe::impl::PEGpuHostBuffersBase<GpuHostBuffersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || func.isPrivate())
      return;
    if (failed(checkLayouts(func)))
      return signalPassFailure();
    SmallVector<Value> deviceArguments = copyArgumentsIn(func);
    func.walk([&](func::ReturnOp ret) {
      copyInPlaceArgumentsBack(ret, func, deviceArguments);
      copyResultsOut(ret, deviceArguments);
    });
  }

  /// Host <-> device copies are flat: every buffer at the boundary must be
  /// contiguous (the identity layout).
  static LogicalResult checkLayouts(func::FuncOp func) {
    auto contiguous = [](Type type) {
      auto memref = dyn_cast<MemRefType>(type);
      return !memref || memref.getLayout().isIdentity();
    };
    if (llvm::all_of(func.getArgumentTypes(), contiguous) &&
        llvm::all_of(func.getResultTypes(), contiguous))
      return success();
    return func.emitOpError("has a strided buffer at its boundary: host buffers are "
                            "copied to and from the GPU whole, so they must be contiguous");
  }

  /// On entry: a device copy of every memref argument, used in its place
  /// (one entry per argument, null for the others).
  static SmallVector<Value> copyArgumentsIn(func::FuncOp func) {
    SmallVector<Value> copies;
    auto b = ImplicitLocOpBuilder::atBlockBegin(func.getLoc(), &func.front());
    for (BlockArgument argument : func.getArguments()) {
      if (!isa<MemRefType>(argument.getType())) {
        copies.push_back(nullptr);
        continue;
      }
      Value device = deviceAlloc(b, argument);
      auto copy = gpu::MemcpyOp::create(b, Type(), ValueRange(), device, argument);
      // Every use but the copy and the sizes of the allocation.
      llvm::SmallPtrSet<Operation *, 8> keep = {copy, device.getDefiningOp()};
      for (Value size : device.getDefiningOp<gpu::AllocOp>().getDynamicSizes())
        keep.insert(size.getDefiningOp());
      argument.replaceAllUsesExcept(device, keep);
      copies.push_back(device);
    }
    return copies;
  }

  /// Before `ret`: the device copy of each argument the function updates
  /// in place copied back into the caller's buffer.
  static void copyInPlaceArgumentsBack(func::ReturnOp ret, func::FuncOp func,
                                       ArrayRef<Value> deviceArguments) {
    auto inPlace = func->getAttrOfType<DenseI64ArrayAttr>(pe::kInPlaceArgumentsAttr);
    if (!inPlace)
      return;
    ImplicitLocOpBuilder b(ret.getLoc(), ret);
    for (int64_t index : inPlace.asArrayRef())
      if (Value device = deviceArguments[index])
        gpu::MemcpyOp::create(b, Type(), ValueRange(), func.getArgument(index), device);
  }

  /// Before `ret`: every memref result copied to a new host buffer (what
  /// the caller owns and frees), then the device buffers freed: the
  /// results' (once each) and the argument copies.
  static void copyResultsOut(func::ReturnOp ret, ArrayRef<Value> deviceArguments) {
    ImplicitLocOpBuilder b(ret.getLoc(), ret);
    SmallVector<Value> results;
    llvm::SetVector<Value> toFree;
    for (Value device : deviceArguments)
      if (device)
        toFree.insert(device);
    for (Value result : ret.getOperands()) {
      if (!isa<MemRefType>(result.getType())) {
        results.push_back(result);
        continue;
      }
      auto type = cast<MemRefType>(result.getType());
      Value host = memref::AllocOp::create(b, type, dynamicSizes(b, result));
      gpu::MemcpyOp::create(b, Type(), ValueRange(), host, result);
      results.push_back(host);
      if (result.getDefiningOp<gpu::AllocOp>())
        toFree.insert(result);
    }
    for (Value device : toFree)
      gpu::DeallocOp::create(b, Type(), ValueRange(), device);
    ret->setOperands(results);
  }
};
} // namespace
