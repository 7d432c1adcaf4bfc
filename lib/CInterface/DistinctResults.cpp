//===- DistinctResults.cpp - pe-distinct-results --------------------------===//
#include "pe/CInterface/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEDISTINCTRESULTS
#include "pe/CInterface/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

/// The tensor whose buffer `value` would share after bufferization: through
/// casts, reshapes and slices, which bufferize to views.
static Value bufferRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto cast = dyn_cast<tensor::CastOp>(def))
      value = cast.getSource();
    else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def))
      value = expand.getSrc();
    else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def))
      value = collapse.getSrc();
    else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def))
      value = slice.getSource();
    else if (auto reshape = dyn_cast<tensor::ReshapeOp>(def))
      value = reshape.getSource();
    else
      break;
  }
  return value;
}

namespace {
struct DistinctResultsPass
    : pe::impl::PEDistinctResultsBase<DistinctResultsPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isPrivate() || fn.isExternal())
      return;
    fn.walk([](func::ReturnOp ret) {
      llvm::SmallPtrSet<Value, 4> returned;
      OpBuilder builder(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value value = operand.get();
        auto type = dyn_cast<RankedTensorType>(value.getType());
        if (!type || returned.insert(bufferRoot(value)).second)
          continue;
        // A second return of one buffer: a copy in a buffer of its own.
        operand.set(bufferization::AllocTensorOp::create(
            builder, ret.getLoc(), type, ValueRange{}, /*copy=*/value));
      }
    });
  }
};
} // namespace
