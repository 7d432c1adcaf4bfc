//===- FoldLoopCarriedDims.cpp - pe-fold-loop-carried-dims ----------------===//
//
// A loop nest that fills a tensor carries it through its iterations; when
// each iteration yields a tensor of the same shape as its iteration
// argument, the sizes of the loop's result (and of the argument inside the
// loop) are the sizes of the initial value:
//
//   %r = scf.for ... iter_args(%t = %init) {
//     %w = vector.transfer_write %v, %t[...]      // the shape of %t
//     scf.yield %w
//   }
//   tensor.dim %r, %c3   ->   tensor.dim %init, %c3
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/Common/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEFOLDLOOPCARRIEDDIMS
#include "pe/Codegen/Common/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {
bool keepsShape(scf::ForOp loop, OpOperand &init);

/// The tensor whose shape `result` has, or null: the destination of a
/// destination-style op (`tensor.insert_slice`, linalg), the tensor a
/// `vector.transfer_write` writes into, the initial value of a loop that
/// keeps its shape.
Value shapeSource(OpResult result) {
  Operation *op = result.getOwner();
  if (auto write = dyn_cast<vector::TransferWriteOp>(op))
    return write.getBase();
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    OpOperand *init = loop.getTiedLoopInit(result);
    return keepsShape(loop, *init) ? init->get() : Value();
  }
  if (auto destination = dyn_cast<DestinationStyleOpInterface>(op))
    return destination.getTiedOpOperand(result)->get();
  return {};
}

/// Whether every iteration of `loop` yields, for the value carried from
/// `init`, a tensor of the shape of its iteration argument.
bool keepsShape(scf::ForOp loop, OpOperand &init) {
  BlockArgument argument = loop.getTiedLoopRegionIterArg(&init);
  Value value = loop.getTiedLoopYieldedValue(argument)->get();
  while (value != argument) {
    auto result = dyn_cast<OpResult>(value);
    if (!result || !(value = shapeSource(result)))
      return false;
  }
  return true;
}

/// tensor.dim of a loop's result or iteration argument whose shape the loop
/// keeps, as tensor.dim of its initial value.
struct DimOfLoopCarriedTensor : OpRewritePattern<tensor::DimOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::DimOp dim, PatternRewriter &rewriter) const override {
    OpOperand *init = loopInit(dim.getSource());
    if (!init || !keepsShape(cast<scf::ForOp>(init->getOwner()), *init))
      return failure();
    rewriter.modifyOpInPlace(dim, [&] { dim.getSourceMutable().assign(init->get()); });
    return success();
  }

  /// The initial value of the loop-carried tensor `value`, if it is one.
  static OpOperand *loopInit(Value value) {
    if (auto result = dyn_cast<OpResult>(value))
      if (auto loop = dyn_cast<scf::ForOp>(result.getOwner()))
        return loop.getTiedLoopInit(result);
    if (auto argument = dyn_cast<BlockArgument>(value))
      if (auto loop = dyn_cast<scf::ForOp>(argument.getOwner()->getParentOp()))
        return loop.getTiedLoopInit(argument);
    return nullptr;
  }
};

struct FoldLoopCarriedDimsPass : pe::impl::PEFoldLoopCarriedDimsBase<FoldLoopCarriedDimsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<DimOfLoopCarriedTensor>(context);
    scf::populateSCFForLoopCanonicalizationPatterns(patterns);
    tensor::DimOp::getCanonicalizationPatterns(patterns, context);
    // As the canonicalizer: a rewrite that has not converged is still valid.
    (void)applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};
} // namespace
