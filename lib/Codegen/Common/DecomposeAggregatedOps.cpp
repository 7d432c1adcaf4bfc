//===- DecomposeAggregatedOps.cpp - pe-decompose-aggregated-ops -----------===//
#include "pe/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEDECOMPOSEAGGREGATEDOPS
#include "pe/Codegen/Common/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {

struct DecomposeAggregatedOpsPass
    : pe::impl::PEDecomposeAggregatedOpsBase<DecomposeAggregatedOpsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::AggregatedOpInterface> ops;
    getOperation()->walk([&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::AggregatedOpInterface op : ops) {
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> parts = op.decomposeOperation(rewriter);
      if (failed(parts) || parts->size() != op->getNumResults()) {
        op->emitOpError("cannot be decomposed into linalg ops (its own decomposition failed)");
        return signalPassFailure();
      }
      rewriter.replaceOp(op, *parts);
    }
  }
};

} // namespace
