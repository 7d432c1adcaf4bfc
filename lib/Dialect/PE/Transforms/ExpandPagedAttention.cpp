//===- ExpandPagedAttention.cpp - pe-expand-paged-attention ---------------===//
//
// pe.paged_attention as a loop over the sequences of the batch, each one a
// pe.attention over its keys and values as pe.gather_pages of their pages
// (which the CPU kernels read in place).
//
//===----------------------------------------------------------------------===//
#include "pe/Dialect/PE/Transforms/Passes.h"
#include "pe/Dialect/PE/Utils/OperandChecks.h"
#include "pe/Dialect/PE/Utils/ValueUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEEXPANDPAGEDATTENTION
#include "pe/Dialect/PE/Transforms/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

namespace {

Value indexConstant(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

/// Element `indices` of an integer tensor as an index.
Value toI64(ImplicitLocOpBuilder &b, Value index) {
  return arith::IndexCastOp::create(b, b.getI64Type(), index);
}

struct ExpandPagedAttention : OpRewritePattern<PagedAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PagedAttentionOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    buildPagedAttentionChecks(b, op);
    Value q = op.getQuery();
    RankedTensorType type = op.getType();
    const int64_t hq = type.getDimSize(1), dv = type.getDimSize(2);
    Value tokens = dimValue(b, q, 0);
    buildResultSizeChecks(b, op, PE_CHECK_PAGED_RESULT, type,
                          {tokens, b.getIndexAttr(hq), b.getIndexAttr(dv)});
    Value init = tensor::EmptyOp::create(
        b, ArrayRef<OpFoldResult>{tokens, b.getIndexAttr(hq), b.getIndexAttr(dv)},
        type.getElementType());
    auto loop = scf::ForOp::create(
        b, indexConstant(b, 0), dimValue(b, op.getBlockTable(), 0), indexConstant(b, 1),
        ValueRange{init}, [&](OpBuilder &nb, Location nloc, Value seq, ValueRange out) {
          ImplicitLocOpBuilder n(nloc, nb);
          scf::YieldOp::create(n, attendSequence(n, op, seq, out[0]));
        });
    Value result = loop.getResult(0);
    if (result.getType() != type)
      result = tensor::CastOp::create(b, type, result);
    rewriter.replaceOp(op, result);
    return success();
  }

  /// `out` with the rows of sequence `seq` computed.
  static Value attendSequence(ImplicitLocOpBuilder &b, PagedAttentionOp op,
                              Value seq, Value out) {
    Value cu = op.getCuSeqlens();
    Value first = extractIndex(b, cu, seq);
    Value queries = arith::SubIOp::create(
        b, extractIndex(b, cu, ValueRange{arith::AddIOp::create(b, seq, indexConstant(b, 1))}),
        first);
    Value keys = extractIndex(b, op.getKvLens(), seq);
    RankedTensorType qType = op.getQuery().getType();
    const int64_t hq = qType.getDimSize(1), d = qType.getDimSize(2);
    const int64_t dv = op.getType().getDimSize(2);

    // [Sq, Hq, D] rows -> [1, Hq, Sq, D].
    Value rows = tensor::ExtractSliceOp::create(
        b, op.getQuery(), ArrayRef<OpFoldResult>{first, b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{queries, b.getIndexAttr(hq), b.getIndexAttr(d)},
        ArrayRef<OpFoldResult>(SmallVector<OpFoldResult>(3, b.getIndexAttr(1))));
    Value query = toHeadMajor(b, rows);
    if (RopeAttr rope = op.getRopeAttr()) {
      // A multi-stream rope: the rows' streams [A, Sq] of rope_positions.
      Value positions = rope.isMultiStream()
                            ? streamColumns(b, op.getRopePositions(), first, queries)
                            : queryPositions(b, queries, keys);
      query = RopeOp::create(b, query, positions, rope, Layout::bhsd);
    }
    Value key = gather(b, op, op.getKeyCache(), seq, keys);
    Value value = gather(b, op, op.getValueCache(), seq, keys);
    auto resultType = RankedTensorType::get({1, hq, ShapedType::kDynamic, dv},
                                            op.getType().getElementType());
    Value mask = op.getMask() ? maskRows(b, op.getMask(), first, queries, keys) : Value();
    Value attended = AttentionOp::create(
        b, resultType, query, key, value, mask, /*q_positions=*/Value(),
        /*k_positions=*/Value(), op.getSinks(), /*q_rope_positions=*/Value(),
        /*k_rope_positions=*/Value(), /*shared_key=*/Value(), op.getScaleAttr(), op.getCausalAttr(),
        op.getWindowAttr(), op.getChunkAttr(), /*rope=*/RopeAttr(), op.getAlibiAttr(),
        op.getSoftcapAttr(), op.getTemperatureAttr());
    // [1, Hq, Sq, Dv] -> [Sq, Hq, Dv] rows of the packed result.
    Value collapsed = tensor::CollapseShapeOp::create(
        b, attended, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
    Value packed = transpose(b, collapsed, {1, 0, 2});
    return tensor::InsertSliceOp::create(
        b, packed, out, ArrayRef<OpFoldResult>{first, b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{queries, b.getIndexAttr(hq), b.getIndexAttr(dv)},
        ArrayRef<OpFoldResult>(SmallVector<OpFoldResult>(3, b.getIndexAttr(1))));
  }

  /// `x` with its dimensions permuted.
  static Value transpose(ImplicitLocOpBuilder &b, Value x,
                         ArrayRef<int64_t> permutation) {
    SmallVector<OpFoldResult> sizes;
    for (int64_t d : permutation)
      sizes.push_back(tensor::getMixedSize(b, b.getLoc(), x, d));
    Value init = tensor::EmptyOp::create(
        b, sizes, cast<RankedTensorType>(x.getType()).getElementType());
    return linalg::TransposeOp::create(b, x, init, permutation).getResult()[0];
  }

  /// [S, H, D] -> [1, H, S, D].
  static Value toHeadMajor(ImplicitLocOpBuilder &b, Value rows) {
    Value heads = transpose(b, rows, {1, 0, 2});
    auto type = cast<RankedTensorType>(heads.getType());
    auto expanded = RankedTensorType::get(
        {1, type.getDimSize(0), type.getDimSize(1), type.getDimSize(2)},
        type.getElementType());
    return tensor::ExpandShapeOp::create(
        b, expanded, heads, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
  }

  /// The sequence's rows [first, first + queries) and key columns [0, keys)
  /// of the packed [T, H, K] mask, as pe.attention's [1, H, Sq, L].
  static Value maskRows(ImplicitLocOpBuilder &b, Value mask, Value first, Value queries,
                        Value keys) {
    const int64_t heads = cast<RankedTensorType>(mask.getType()).getDimSize(1);
    Value rows = tensor::ExtractSliceOp::create(
        b, mask, ArrayRef<OpFoldResult>{first, b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{queries, b.getIndexAttr(heads), keys},
        ArrayRef<OpFoldResult>(SmallVector<OpFoldResult>(3, b.getIndexAttr(1))));
    return toHeadMajor(b, rows);
  }

  /// Columns [first, first + count) of the streams `positions` [A, T].
  static Value streamColumns(ImplicitLocOpBuilder &b, Value positions, Value first,
                             Value count) {
    const int64_t streams = cast<RankedTensorType>(positions.getType()).getDimSize(0);
    return tensor::ExtractSliceOp::create(
        b, positions, ArrayRef<OpFoldResult>{b.getIndexAttr(0), first},
        ArrayRef<OpFoldResult>{b.getIndexAttr(streams), count},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  }

  /// The i64 positions L - Sq + i of the sequence's queries.
  static Value queryPositions(ImplicitLocOpBuilder &b, Value queries, Value keys) {
    Value start = arith::SubIOp::create(b, keys, queries);
    auto type = RankedTensorType::get({ShapedType::kDynamic}, b.getI64Type());
    return tensor::GenerateOp::create(
        b, type, ValueRange{queries},
        [&](OpBuilder &nb, Location nloc, ValueRange index) {
          ImplicitLocOpBuilder n(nloc, nb);
          Value p = arith::AddIOp::create(n, start, index[0]);
          tensor::YieldOp::create(n, toI64(n, p));
        });
  }

  /// The keys (or values) 0 .. L-1 of sequence `seq` as [1, Hkv, L, D].
  static Value gather(ImplicitLocOpBuilder &b, PagedAttentionOp op, Value cache,
                      Value seq, Value keys) {
    auto type = cast<RankedTensorType>(cache.getType());
    auto outType = RankedTensorType::get(
        {1, type.getDimSize(op.getHeadsDim()), ShapedType::kDynamic, type.getDimSize(3)},
        type.getElementType());
    return GatherPagesOp::create(b, outType, cache, op.getBlockTable(), seq, keys,
                                 op.getLayout());
  }
};

struct ExpandPagedAttentionPass
    : pe::impl::PEExpandPagedAttentionBase<ExpandPagedAttentionPass> {
  using PEExpandPagedAttentionBase::PEExpandPagedAttentionBase;
  void runOnOperation() override {
    if (failed(checkLoweringRoot(getOperation(), "pe-expand-paged-attention")))
      return signalPassFailure();
    if (gpu) {
      WalkResult refused = getOperation()->walk([](PagedAttentionOp op) {
        op.emitOpError() << "is not supported by pe-gpu-pipeline without "
                            "pe-gpu-tile-attention (tile-attention=false), whose "
                            "kernel computes it; compile it for the CPU";
        return WalkResult::interrupt();
      });
      if (refused.wasInterrupted())
        return signalPassFailure();
      return;
    }
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandPagedAttention>(&getContext());
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
