//===- FuseRopeIntoAppend.cpp - pe-fuse-rope-into-append ------------------===//
#include "pe/Dialect/PE/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEFUSEROPEINTOAPPEND
#include "pe/Dialect/PE/Transforms/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

namespace {

/// The rotation that produces the new keys of `op` when pe.append_kv can do
/// it itself: dense, a bhsd rotation of the keys; paged, a bshd rotation of
/// [1, T, H, D] collapsed to [T, H, D], with positions [T] or [1, T].
RopeOp fusableRotation(AppendKvOp op) {
  if (!op.isPaged()) {
    auto rope = op.getKey().getDefiningOp<RopeOp>();
    return rope && rope.getLayout() == Layout::bhsd && !rope.getCos() ? rope
                                                                      : RopeOp();
  }
  auto collapse = op.getKey().getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || collapse.getReassociationIndices() !=
                       SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}})
    return RopeOp();
  auto rope = collapse.getSrc().getDefiningOp<RopeOp>();
  if (!rope || rope.getLayout() != Layout::bshd || rope.getCos() ||
      rope.getInput().getType().getDimSize(0) != 1)
    return RopeOp();
  auto positions = cast<RankedTensorType>(rope.getPositions().getType());
  if (positions.getRank() == 2 && positions.getDimSize(0) != 1)
    return RopeOp();
  return rope;
}

/// append_kv(rope(k, p), v) -> append_kv(k, v) positions(p) rope(...).
struct FuseRopeIntoAppend : OpRewritePattern<AppendKvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AppendKvOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getRopeAttr())
      return rewriter.notifyMatchFailure(op, "already rotates");
    RopeOp rope = fusableRotation(op);
    if (!rope)
      return rewriter.notifyMatchFailure(op, "no rotation it can take over");
    if (rope.getRope().isMultiStream())
      return rewriter.notifyMatchFailure(op, "pe.append_kv rotates by one stream");
    Value keys = rope.getInput(), positions = rope.getPositions();
    if (op.isPaged()) {
      Location loc = op.getLoc();
      keys = tensor::CollapseShapeOp::create(
          rewriter, loc, keys, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
      if (cast<RankedTensorType>(positions.getType()).getRank() == 2)
        positions = tensor::CollapseShapeOp::create(
            rewriter, loc, positions, SmallVector<ReassociationIndices>{{0, 1}});
    }
    auto fused = AppendKvOp::create(
        rewriter, op.getLoc(), op->getResultTypes(), keys, op.getValue(),
        op.getKeyCache(), op.getValueCache(), op.getSlots(), positions,
        op.getLayoutAttr(), rope.getRope());
    rewriter.replaceOp(op, fused.getResults());
    return success();
  }
};

struct FuseRopeIntoAppendPass
    : pe::impl::PEFuseRopeIntoAppendBase<FuseRopeIntoAppendPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseRopeIntoAppendPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::pe::populateFuseRopeIntoAppendPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseRopeIntoAppend>(patterns.getContext());
}
