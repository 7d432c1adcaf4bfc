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
/// masks. With a shared key block (multi-head latent attention), the
/// rotated keys are the block's: attention(rope(q), k, v,
/// shared_key(rope'(ks))) fuses when q's rotated channels all lie in the
/// block (offset o >= the key's own Dk channels) and rope' is q's rope at
/// offset o - Dk, the same rotation of the same channels of a key head.
struct FuseRope : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getRopeAttr())
      return rewriter.notifyMatchFailure(op, "already rotates");
    auto qRope = op.getQuery().getDefiningOp<RopeOp>();
    Value shared = op.getSharedKey();
    auto kRope = (shared ? shared : op.getKey()).getDefiningOp<RopeOp>();
    if (!qRope || !kRope)
      return rewriter.notifyMatchFailure(op, "Q and K are not both rotated");
    RopeAttr rope = qRope.getRope();
    if (kRope.getRope() != keyRotation(op, rope) || qRope.getLayout() != Layout::bhsd ||
        kRope.getLayout() != Layout::bhsd)
      return rewriter.notifyMatchFailure(op, "different or non-BHSD rotations");
    if (qRope.getCos() || kRope.getCos())
      return rewriter.notifyMatchFailure(op, "rotations by given tables");
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
        rewriter, op.getLoc(), op.getType(), qRope.getInput(),
        shared ? op.getKey() : kRope.getInput(), op.getValue(), op.getMask(), qPos, kPos,
        op.getSinks(), qRopePos, kRopePos, shared ? kRope.getInput() : Value(),
        op.getScaleAttr(), op.getCausalAttr(), op.getWindowAttr(), op.getChunkAttr(), rope,
        op.getAlibiAttr(), op.getSoftcapAttr(), op.getTemperatureAttr());
    rewriter.replaceOp(op, fused.getResult());
    return success();
  }

private:
  /// The rotation the rotated keys must have for `rope` of the queries: the
  /// same, or with a shared key block, the same on the block's channels
  /// (null when the rotated channels are not all the block's).
  static RopeAttr keyRotation(AttentionOp op, RopeAttr rope) {
    if (!op.getSharedKey())
      return rope;
    const int64_t own = op.getKey().getType().getDimSize(3);
    if (rope.getRotaryOffset() < own)
      return RopeAttr();
    return rope.withRotaryOffset(rope.getRotaryOffset() - own);
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
