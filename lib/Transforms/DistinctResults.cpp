//===- DistinctResults.cpp - pe-distinct-results --------------------------===//
#include "pe/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEDISTINCTRESULTS
#include "pe/Transforms/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

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
        if (!type || returned.insert(value).second)
          continue;
        // A second return of `value`: a copy in a buffer of its own.
        operand.set(bufferization::AllocTensorOp::create(
            builder, ret.getLoc(), type, ValueRange{}, /*copy=*/value));
      }
    });
  }
};
} // namespace
