//===- FuseAlibiIntoAttention.cpp - pe-fuse-alibi-into-attention ----------===//
#include "pe/Dialect/PE/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEFUSEALIBIINTOATTENTION
#include "pe/Dialect/PE/Transforms/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

/// The ALiBi bias a mask is made of: the op itself (rank 4), or its rank-3
/// form expanded to [1, H, Sq, Skv].
static AlibiBiasOp biasOf(Value mask) {
  if (auto bias = mask.getDefiningOp<AlibiBiasOp>())
    return bias.getType().getRank() == 4 ? bias : AlibiBiasOp();
  auto expand = mask.getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand)
    return {};
  auto bias = expand.getSrc().getDefiningOp<AlibiBiasOp>();
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  if (!bias || bias.getType().getRank() != 3 || groups.size() != 3 ||
      groups[0] != ReassociationIndices{0, 1} ||
      expand.getResultType().getDimSize(0) != 1)
    return {};
  return bias;
}

/// The max_bias of `slopes` when they are the ALiBi slopes of `heads` heads:
/// a pe.alibi_slopes, or the constant it folds to.
static std::optional<double> alibiMaxBias(Value slopes, int64_t heads) {
  if (cast<RankedTensorType>(slopes.getType()).getDimSize(0) != heads)
    return std::nullopt;
  if (auto op = slopes.getDefiningOp<AlibiSlopesOp>())
    return op.getMaxBias().convertToDouble();
  DenseFPElementsAttr values;
  if (!matchPattern(slopes, m_Constant(&values)))
    return std::nullopt;
  std::vector<double> got;
  for (const APFloat &v : values.getValues<APFloat>())
    got.push_back(v.convertToDouble());
  return formula::alibiMaxBias(got);
}

namespace {
struct FuseAlibi : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getMask() || op.getAlibi())
      return rewriter.notifyMatchFailure(op, "no mask, or ALiBi already fused");
    AlibiBiasOp bias = biasOf(op.getMask());
    if (!bias)
      return rewriter.notifyMatchFailure(op, "the mask is not an ALiBi bias");
    std::optional<double> maxBias =
        alibiMaxBias(bias.getSlopes(), op.getQuery().getType().getDimSize(1));
    if (!maxBias)
      return rewriter.notifyMatchFailure(op, "slopes are not those of the query heads");
    // -m |q - k| equals -m (q - k) only where k <= q, i.e. under a causal mask.
    bool causal = bias.getMode() == AlibiMode::causal;
    if (!causal && !op.getCausal())
      return rewriter.notifyMatchFailure(op, "symmetric bias without causal mask");
    for (auto [own, biased] : {std::pair{op.getQPositions(), bias.getQPositions()},
                               std::pair{op.getKPositions(), bias.getKPositions()}})
      if (own && own != biased)
        return rewriter.notifyMatchFailure(op, "positions differ");
    // Without positions of its own, a causal/window attention masks at its
    // default positions, which the bias's positions need not be.
    if ((op.getCausal() || op.getWindow() || op.getChunk() || op.getRopeAttr()) &&
        (!op.getQPositions() || !op.getKPositions()))
      return rewriter.notifyMatchFailure(op, "default positions");

    auto fused = AttentionOp::create(
        rewriter, op.getLoc(), op.getType(), op.getQuery(), op.getKey(),
        op.getValue(), /*mask=*/Value(), bias.getQPositions(),
        bias.getKPositions(), op.getSinks(), op.getQRopePositions(),
        op.getKRopePositions(), op.getSharedKey(), op.getScaleAttr(),
        causal ? rewriter.getUnitAttr() : op.getCausalAttr(), op.getWindowAttr(),
        op.getChunkAttr(),
        op.getRopeAttr(), rewriter.getF64FloatAttr(*maxBias), op.getSoftcapAttr(),
        op.getTemperatureAttr());
    rewriter.replaceOp(op, fused.getResult());
    return success();
  }
};

struct FuseAlibiIntoAttentionPass
    : pe::impl::PEFuseAlibiIntoAttentionBase<FuseAlibiIntoAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseAlibiIntoAttentionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::pe::populateFuseAlibiIntoAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseAlibi>(patterns.getContext());
}
