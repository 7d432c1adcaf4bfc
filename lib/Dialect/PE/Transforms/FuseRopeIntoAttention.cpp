//===- FuseRopeIntoAttention.cpp - pe-fuse-rope-into-attention ------------===//
#include "pe/Dialect/PE/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEFUSEROPEINTOATTENTION
#include "pe/Dialect/PE/Transforms/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

namespace {
/// attention(rope(q, pq), rope(k, pk), v) -> attention(q, k, v) rope(...)
/// with q_positions(pq), k_positions(pk).
struct FuseRope : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getRopeAttr())
      return rewriter.notifyMatchFailure(op, "already rotates");
    auto qRope = op.getQuery().getDefiningOp<RopeOp>();
    auto kRope = op.getKey().getDefiningOp<RopeOp>();
    if (!qRope || !kRope)
      return rewriter.notifyMatchFailure(op, "Q and K are not both rotated");
    if (qRope.getRope() != kRope.getRope() ||
        qRope.getLayout() != Layout::bhsd || kRope.getLayout() != Layout::bhsd)
      return rewriter.notifyMatchFailure(op, "different or non-BHSD rotations");
    if (qRope.getCos() || kRope.getCos())
      return rewriter.notifyMatchFailure(op, "rotations by given tables");
    // The attention's positions also place its masks and ALiBi: they must be
    // the rotations' positions, or unused.
    bool positional = op.getCausal() || op.getWindow() || op.getAlibi();
    for (auto [own, rotated] : {std::pair{op.getQPositions(), qRope.getPositions()},
                                std::pair{op.getKPositions(), kRope.getPositions()}})
      if (own ? own != rotated : positional)
        return rewriter.notifyMatchFailure(op, "positions differ");

    auto fused = AttentionOp::create(
        rewriter, op.getLoc(), op.getType(), qRope.getInput(), kRope.getInput(),
        op.getValue(), op.getMask(), qRope.getPositions(), kRope.getPositions(),
        op.getSinks(), op.getScaleAttr(), op.getCausalAttr(), op.getWindowAttr(),
        qRope.getRope(), op.getAlibiAttr(), op.getSoftcapAttr());
    rewriter.replaceOp(op, fused.getResult());
    return success();
  }
};

struct FuseRopeIntoAttentionPass
    : pe::impl::PEFuseRopeIntoAttentionBase<FuseRopeIntoAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseRopeIntoAttentionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::pe::populateFuseRopeIntoAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseRope>(patterns.getContext());
}
