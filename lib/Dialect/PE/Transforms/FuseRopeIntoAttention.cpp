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
/// with q_positions(pq), k_positions(pk); for a multi-stream rope, with
/// rope_positions(pq, pk) and the attention's own positions kept for its
/// masks.
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
    RopeAttr rope = qRope.getRope();
    Value qPos = op.getQPositions(), kPos = op.getKPositions();
    Value qRopePos, kRopePos;
    if (rope.isMultiStream()) {
      qRopePos = qRope.getPositions();
      kRopePos = kRope.getPositions();
    } else {
      // The attention's positions also place its masks and ALiBi: they must
      // be the rotations' positions, or unused.
      bool positional = op.getCausal() || op.getWindow() || op.getChunk() || op.getAlibi();
      for (auto [own, rotated] : {std::pair{qPos, qRope.getPositions()},
                                  std::pair{kPos, kRope.getPositions()}})
        if (own ? own != rotated : positional)
          return rewriter.notifyMatchFailure(op, "positions differ");
      qPos = qRope.getPositions();
      kPos = kRope.getPositions();
    }

    auto fused = AttentionOp::create(
        rewriter, op.getLoc(), op.getType(), qRope.getInput(), kRope.getInput(),
        op.getValue(), op.getMask(), qPos, kPos, op.getSinks(), qRopePos, kRopePos,
        op.getScaleAttr(), op.getCausalAttr(), op.getWindowAttr(), op.getChunkAttr(), rope,
        op.getAlibiAttr(), op.getSoftcapAttr(), op.getTemperatureAttr());
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
