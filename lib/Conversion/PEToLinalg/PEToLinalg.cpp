//===- PEToLinalg.cpp - pe-lower-to-linalg --------------------------------===//
//
// The reference lowering of every pe op to linalg on tensors. The positional
// math comes from the shared builders (pe/Dialect/PE/Utils) and pe/Math;
// this file only places it into linalg ops.
//
//===----------------------------------------------------------------------===//
#include "pe/Conversion/Passes.h"
#include "pe/Dialect/PE/IR/PE.h"
#include "pe/Dialect/PE/Utils/AttentionBuilders.h"
#include "pe/Dialect/PE/Utils/OperandChecks.h"
#include "pe/Dialect/PE/Utils/RopeBuilders.h"
#include "pe/Dialect/PE/Utils/ValueUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

namespace mlir::pe {
#define GEN_PASS_DEF_PELOWERTOLINALG
#include "pe/Conversion/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

using utils::IteratorType;

//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

namespace {

/// Loops 0 .. n-1.
SmallVector<int64_t> leadingLoops(int64_t n) {
  SmallVector<int64_t> loops;
  for (int64_t i = 0; i < n; ++i)
    loops.push_back(i);
  return loops;
}

SmallVector<OpFoldResult> sizesOf(ImplicitLocOpBuilder &b, Value tensor) {
  return tensor::getMixedSizes(b, b.getLoc(), tensor);
}

Value emptyTensor(ImplicitLocOpBuilder &b, ArrayRef<OpFoldResult> sizes,
                  Type element) {
  return tensor::EmptyOp::create(b, sizes, element);
}

Value filledTensor(ImplicitLocOpBuilder &b, ArrayRef<OpFoldResult> sizes,
                   Type element, double value) {
  Value init = emptyTensor(b, sizes, element);
  Value fill = arith::ConstantOp::create(b, b.getFloatAttr(element, value));
  return linalg::FillOp::create(b, ValueRange{fill}, ValueRange{init}).getResult(0);
}

/// A linalg.generic whose body is `body(builder, block arguments)` yielding
/// the returned values.
SmallVector<Value>
buildGeneric(ImplicitLocOpBuilder &b, TypeRange results, ValueRange inputs,
             ValueRange outputs, ArrayRef<AffineMap> maps,
             ArrayRef<IteratorType> iterators,
             function_ref<SmallVector<Value>(ImplicitLocOpBuilder &, ValueRange)> body) {
  auto generic = linalg::GenericOp::create(
      b, results, inputs, outputs, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        ImplicitLocOpBuilder n(nloc, nb);
        linalg::YieldOp::create(n, body(n, args));
      });
  return SmallVector<Value>(generic.getResults());
}

/// `value` with the (static or dynamic) type the replaced op declares.
Value castTo(ImplicitLocOpBuilder &b, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return tensor::CastOp::create(b, type, value);
}

/// Whether the lowering of `op` may declare runtime functions (it needs an
/// enclosing symbol table) and its constant tables are within bounds.
LogicalResult checkLowerable(Operation *op, PatternRewriter &rewriter) {
  if (!SymbolTable::getNearestSymbolTable(op))
    return rewriter.notifyMatchFailure(op, "not inside a symbol table");
  return checkConstantTables(op);
}

} // namespace

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

/// Rotates `x` ([B,H,S,D] or [B,S,H,D]) with f32 tables of shape [S, r/2] or
/// [B, S, r/2]. The rotated channels are computed as two slices (the first
/// and second members of each pair), the rest of `x` passes through.
static Value buildRotation(ImplicitLocOpBuilder &b, Value x, Value cos, Value sin,
                           RopeAttr rope, Layout layout) {
  MLIRContext *ctx = b.getContext();
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  const int64_t half = rope.getRotaryDim() / 2;
  const RotatedChannels rotation = RotatedChannels::of(rope);

  // Member m of pair i is channel first_m + stride i.
  auto [first0, first1] = getPairChannels(rotation, 0);
  const int64_t stride = getPairChannels(rotation, 1).first - first0;
  SmallVector<OpFoldResult> sizes = sizesOf(b, x);
  sizes[3] = b.getIndexAttr(half);
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  strides[3] = b.getIndexAttr(stride);
  SmallVector<OpFoldResult> offsets0(4, b.getIndexAttr(0)), offsets1 = offsets0;
  offsets0[3] = b.getIndexAttr(first0);
  offsets1[3] = b.getIndexAttr(first1);
  Value x0 = tensor::ExtractSliceOp::create(b, x, offsets0, sizes, strides);
  Value x1 = tensor::ExtractSliceOp::create(b, x, offsets1, sizes, strides);

  // Loops (d0, d1, d2, d3) follow x; the tables index (s, i) or (b, s, i).
  const int64_t seqLoop = layout == Layout::bhsd ? 2 : 1;
  AffineMap tableMap = cast<RankedTensorType>(cos.getType()).getRank() == 2
                           ? loopsMap(ctx, 4, {seqLoop, 3})
                           : loopsMap(ctx, 4, {0, seqLoop, 3});
  AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
  Value init = emptyTensor(b, sizes, element);
  SmallVector<Value> rotated = buildGeneric(
      b, {init.getType(), init.getType()}, {x0, x1, cos, sin}, {init, init},
      {id, id, tableMap, tableMap, id, id},
      SmallVector<IteratorType>(4, IteratorType::parallel),
      [&](ImplicitLocOpBuilder &n, ValueRange args) -> SmallVector<Value> {
        auto [y0, y1] = buildPairRotation(n, extendToF32(n, args[0]),
                                          extendToF32(n, args[1]), args[2], args[3]);
        return {convertFloat(n, y0, element), convertFloat(n, y1, element)};
      });
  Value result =
      tensor::InsertSliceOp::create(b, rotated[0], x, offsets0, sizes, strides);
  return tensor::InsertSliceOp::create(b, rotated[1], result, offsets1, sizes,
                                       strides);
}

namespace {

struct LowerRopeFrequencies : OpConversionPattern<RopeFrequenciesOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RopeFrequenciesOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkLowerable(op, rewriter)))
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Value seqLen;
    if (Value n = adaptor.getSeqLen())
      seqLen = arith::IndexCastOp::create(b, b.getI64Type(), n);
    Value freqs = buildInverseFrequencies(b, op.getRope(), seqLen);
    Type element = op.getType().getElementType();
    if (element.isF64()) {
      rewriter.replaceOp(op, freqs);
      return success();
    }
    // Rounded once from f64 to the result type.
    AffineMap id = AffineMap::getMultiDimIdentityMap(1, b.getContext());
    Value init = emptyTensor(b, sizesOf(b, freqs), element);
    SmallVector<Value> rounded = buildGeneric(
        b, op.getType(), freqs, init, {id, id}, {IteratorType::parallel},
        [&](ImplicitLocOpBuilder &n, ValueRange args) -> SmallVector<Value> {
          return {convertFloat(n, args[0], element)};
        });
    rewriter.replaceOp(op, rounded[0]);
    return success();
  }
};

struct LowerRopeTables : OpConversionPattern<RopeTablesOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RopeTablesOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkLowerable(op, rewriter)))
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    RankedTensorType type = op.getCos().getType();
    auto [cos, sin] = buildRopeTables(b, op.getRope(), adaptor.getPositions(),
                                      type.getElementType());
    buildResultSizeChecks(b, op, PE_CHECK_TABLE_SHAPE, type, sizesOf(b, cos));
    rewriter.replaceOp(op, {castTo(b, cos, type), castTo(b, sin, type)});
    return success();
  }
};

struct LowerRope : OpConversionPattern<RopeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RopeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkLowerable(op, rewriter)))
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Value x = adaptor.getInput();
    auto [cos, sin] = prepareRopeOperands(b, op, x, adaptor.getPositions(),
                                          adaptor.getCos(), adaptor.getSin());
    rewriter.replaceOp(op, buildRotation(b, x, cos, sin, op.getRope(), op.getLayout()));
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Absolute encodings
//===----------------------------------------------------------------------===//

namespace {

/// Channels channel(k), k < count, as runs of a constant positive stride:
/// {first k, run length, first channel, stride}.
static SmallVector<std::array<int64_t, 4>>
stridedRuns(int64_t count, function_ref<int64_t(int64_t)> channel) {
  SmallVector<std::array<int64_t, 4>> runs;
  for (int64_t k = 0; k < count;) {
    int64_t length = 1, stride = 1;
    if (k + 1 < count) {
      stride = channel(k + 1) - channel(k);
      while (k + length < count &&
             channel(k + length) - channel(k + length - 1) == stride)
        ++length;
    }
    runs.push_back({k, length, channel(k), stride});
    k += length;
  }
  return runs;
}

struct LowerSinusoidal : OpConversionPattern<SinusoidalOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SinusoidalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkLowerable(op, rewriter)))
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    MLIRContext *ctx = b.getContext();
    Value positions = adaptor.getPositions();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    const int64_t rank = type.getRank();
    formula::SinusoidalTable table = op.getTable();
    const int64_t dim = table.dim, sinCount = table.sinCount();
    if (llvm::is_contained(type.getShape(), 0)) {
      // No element to compute (and upstream rejects slices at offset 0 of
      // an empty dimension).
      SmallVector<OpFoldResult> sizes = sizesOf(b, positions);
      sizes.push_back(b.getIndexAttr(dim));
      rewriter.replaceOp(op, emptyTensor(b, sizes, element));
      return success();
    }
    std::vector<double> frequencies = table.frequencies();
    auto freqType = RankedTensorType::get({sinCount}, b.getF64Type());
    Value freqs = arith::ConstantOp::create(
        b, DenseElementsAttr::get(freqType, ArrayRef<double>(frequencies)));

    // sin and cos [..., S, sinCount] of the reduced angles (zero on the
    // rows of padding_idx).
    SmallVector<OpFoldResult> blockSizes = sizesOf(b, positions);
    blockSizes.push_back(b.getIndexAttr(sinCount));
    Value init = emptyTensor(b, blockSizes, element);
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    std::optional<int64_t> padding = op.getPaddingIdx();
    SmallVector<Value> blocks = buildGeneric(
        b, {init.getType(), init.getType()}, {positions, freqs}, {init, init},
        {loopsMap(ctx, rank, leadingLoops(rank - 1)), loopsMap(ctx, rank, {rank - 1}),
         id, id},
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](ImplicitLocOpBuilder &n, ValueRange args) -> SmallVector<Value> {
          Value angle = buildReducedAngle(n, args[0], args[1]);
          Value sin = convertFloat(n, math::SinOp::create(n, angle), element);
          Value cos = convertFloat(n, math::CosOp::create(n, angle), element);
          if (padding) {
            Value pad = arith::CmpIOp::create(
                n, arith::CmpIPredicate::eq, args[0],
                arith::ConstantOp::create(n, IntegerAttr::get(args[0].getType(), *padding)));
            Value zero = floatConstantLike(n, sin, 0.0);
            sin = arith::SelectOp::create(n, pad, zero, sin);
            cos = arith::SelectOp::create(n, pad, zero, cos);
          }
          return {sin, cos};
        });

    // Each series' channels (table.sinChannel / cosChannel) as strided runs;
    // an odd table's zero channel keeps the fill.
    SmallVector<OpFoldResult> sizes = sizesOf(b, positions);
    sizes.push_back(b.getIndexAttr(dim));
    Value result = emptyTensor(b, sizes, element);
    if (sinCount + table.half() < dim)
      result = linalg::FillOp::create(
                   b, Value(arith::ConstantOp::create(b, b.getFloatAttr(element, 0.0))), result)
                   .getResult(0);
    auto place = [&](Value block, int64_t count, function_ref<int64_t(int64_t)> channel) {
      for (auto [k, length, first, stride] : stridedRuns(count, channel)) {
        SmallVector<OpFoldResult> from(rank, b.getIndexAttr(0)), to = from;
        SmallVector<OpFoldResult> unit(rank, b.getIndexAttr(1)), step = unit;
        SmallVector<OpFoldResult> runSizes = blockSizes;
        runSizes.back() = b.getIndexAttr(length);
        from.back() = b.getIndexAttr(k);
        to.back() = b.getIndexAttr(first);
        step.back() = b.getIndexAttr(stride);
        Value run = length == sinCount
                        ? block
                        : tensor::ExtractSliceOp::create(b, block, from, runSizes, unit);
        result = tensor::InsertSliceOp::create(b, run, result, to, runSizes, step);
      }
    };
    place(blocks[0], sinCount, [&](int64_t k) { return table.sinChannel(k); });
    place(blocks[1], table.half(), [&](int64_t k) { return table.cosChannel(k); });
    buildResultSizeChecks(b, op, PE_CHECK_SINUSOIDAL_SHAPE, type, sizes);
    rewriter.replaceOp(op, castTo(b, result, type));
    return success();
  }
};

struct LowerLearned : OpConversionPattern<LearnedOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LearnedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkLowerable(op, rewriter)))
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    MLIRContext *ctx = b.getContext();
    Value table = adaptor.getTable(), positions = adaptor.getPositions();
    Value rows = arith::IndexCastOp::create(b, b.getI64Type(),
                                            tensor::DimOp::create(b, table, 0));
    // Every position in [0, rows).
    buildIndexRangeCheck(b, op, kLearnedOutOfRangeFn, positions, 0, rows);

    // out[..., s, d] = table[clamp(p[..., s]), d]; the clamp only keeps the
    // read in bounds should the error function return.
    RankedTensorType type = op.getType();
    const int64_t rank = type.getRank();
    SmallVector<OpFoldResult> sizes = sizesOf(b, positions);
    sizes.push_back(tensor::getMixedSize(b, b.getLoc(), table, 1));
    Value out = emptyTensor(b, sizes, type.getElementType());
    Value lastRow = arith::SubIOp::create(b, rows, intConstantLike(b, rows, 1));
    buildResultSizeChecks(b, op, PE_CHECK_LEARNED_SHAPE, type, sizes);
    SmallVector<Value> gathered = buildGeneric(
        b, out.getType(), positions, out,
        {loopsMap(ctx, rank, leadingLoops(rank - 1)),
         AffineMap::getMultiDimIdentityMap(rank, ctx)},
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](ImplicitLocOpBuilder &n, ValueRange args) -> SmallVector<Value> {
          Value p = extendToI64(n, args[0]);
          p = arith::MaxSIOp::create(n, p, intConstantLike(n, p, 0));
          p = arith::MinSIOp::create(n, p, lastRow);
          Value row = arith::IndexCastOp::create(n, n.getIndexType(), p);
          Value col = linalg::IndexOp::create(n, rank - 1);
          return {tensor::ExtractOp::create(n, table, ValueRange{row, col})};
        });
    rewriter.replaceOp(op, castTo(b, gathered[0], type));
    return success();
  }

};

} // namespace

//===----------------------------------------------------------------------===//
// ALiBi
//===----------------------------------------------------------------------===//

namespace {

struct LowerAlibiSlopes : OpConversionPattern<AlibiSlopesOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AlibiSlopesOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkLowerable(op, rewriter)))
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    RankedTensorType type = op.getType();
    rewriter.replaceOp(op, buildAlibiSlopes(b, type.getDimSize(0),
                                            op.getMaxBias().convertToDouble(),
                                            type.getElementType()));
    return success();
  }
};

struct LowerAlibiBias : OpConversionPattern<AlibiBiasOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AlibiBiasOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkLowerable(op, rewriter)))
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    MLIRContext *ctx = b.getContext();
    RankedTensorType type = op.getType();
    const int64_t rank = type.getRank();
    // Loops ([b,] h, i, j).
    const int64_t headLoop = rank == 4 ? 1 : 0, queryLoop = headLoop + 1,
                  keyLoop = headLoop + 2;
    Value qPos = adaptor.getQPositions(), kPos = adaptor.getKPositions();
    auto rankOf = [](Value v) { return cast<RankedTensorType>(v.getType()).getRank(); };
    auto positionMap = [&](Value pos, int64_t seqLoop) {
      return rankOf(pos) == 2 ? loopsMap(ctx, rank, {0, seqLoop})
                              : loopsMap(ctx, rank, {seqLoop});
    };
    SmallVector<OpFoldResult> sizes;
    if (rank == 4)
      sizes.push_back(tensor::getMixedSize(b, b.getLoc(),
                                           rankOf(qPos) == 2 ? qPos : kPos, 0));
    sizes.push_back(tensor::getMixedSize(b, b.getLoc(), adaptor.getSlopes(), 0));
    sizes.push_back(tensor::getMixedSize(b, b.getLoc(), qPos, rankOf(qPos) - 1));
    sizes.push_back(tensor::getMixedSize(b, b.getLoc(), kPos, rankOf(kPos) - 1));
    if (rankOf(qPos) == 2 && rankOf(kPos) == 2)
      buildSameSizeCheck(b, op, PE_CHECK_ALIBI_BATCH, kPos, 0, qPos, 0);
    buildResultSizeChecks(b, op, PE_CHECK_ALIBI_SHAPE, type, sizes);

    const bool causal = op.getMode() == AlibiMode::causal;
    Type element = type.getElementType();
    Value init = emptyTensor(b, sizes, element);
    SmallVector<Value> bias = buildGeneric(
        b, init.getType(), {adaptor.getSlopes(), qPos, kPos}, init,
        {loopsMap(ctx, rank, {headLoop}), positionMap(qPos, queryLoop),
         positionMap(kPos, keyLoop), AffineMap::getMultiDimIdentityMap(rank, ctx)},
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](ImplicitLocOpBuilder &n, ValueRange args) -> SmallVector<Value> {
          Value q = extendToI64(n, args[1]), k = extendToI64(n, args[2]);
          // causal: slope (k - q), -inf for k > q; symmetric: -slope |k - q|.
          Value distance = buildPositionDistance(n, k, q);
          if (!causal)
            distance = arith::NegFOp::create(n, math::AbsFOp::create(n, distance));
          Value value = buildAlibiScore(n, floatConstantLike(n, distance, 0.0),
                                        extendToF32(n, args[0]), distance);
          if (causal)
            value = arith::SelectOp::create(
                n, buildIsMasked(n, PositionMask{true, std::nullopt, std::nullopt}, q, k),
                floatConstantLike(n, value, -std::numeric_limits<double>::infinity()),
                value);
          return {convertFloat(n, value, element)};
        });
    rewriter.replaceOp(op, castTo(b, bias[0], type));
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

namespace {

/// The reference lowering of one pe.attention, a step per method. Query
/// heads are viewed as (Hkv, group) so that GQA reads each K/V head once;
/// score loops are (b, kh, g, i, j).
class AttentionLowering {
public:
  AttentionLowering(ImplicitLocOpBuilder &b, AttentionOp op, Value q, Value k,
                    Value v, Value mask, Value qPos, Value kPos, Value sinks)
      : b(b), ctx(b.getContext()), op(op), k(k), v(v), mask(mask), qPos(qPos),
        kPos(kPos), sinks(sinks) {
    auto qType = cast<RankedTensorType>(q.getType());
    hkv = cast<RankedTensorType>(k.getType()).getDimSize(1);
    group = qType.getDimSize(1) / hkv;
    dv = cast<RankedTensorType>(v.getType()).getDimSize(3);
    SmallVector<OpFoldResult> qSizes = sizesOf(b, q);
    batch = qSizes[0];
    sq = qSizes[2];
    skv = tensor::getMixedSize(b, b.getLoc(), k, 2);
    auto q5Type = RankedTensorType::get({qType.getDimSize(0), hkv, group,
                                         qType.getDimSize(2), qType.getDimSize(3)},
                                        qType.getElementType());
    q5 = tensor::ExpandShapeOp::create(
        b, q5Type, q, SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}},
        SmallVector<OpFoldResult>{batch, b.getIndexAttr(hkv), b.getIndexAttr(group),
                                  sq, qSizes[3]});
  }

  /// The result: the steps below in order, heads collapsed back.
  Value build() {
    Value scores = buildScores();
    scores = buildModifiedScores(scores);
    auto [weights, rowSum] = buildWeights(scores);
    Value out = buildNormalized(buildWeightedValues(weights), rowSum);
    return tensor::CollapseShapeOp::create(
        b, out, SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
  }

private:
  ImplicitLocOpBuilder &b;
  MLIRContext *ctx;
  AttentionOp op;
  Value q5, k, v, mask, qPos, kPos, sinks;
  int64_t hkv, group, dv;
  OpFoldResult batch, sq, skv;

  static constexpr IteratorType par = IteratorType::parallel;
  static constexpr IteratorType red = IteratorType::reduction;

  SmallVector<OpFoldResult> scoreSizes() {
    return {batch, b.getIndexAttr(hkv), b.getIndexAttr(group), sq, skv};
  }
  SmallVector<OpFoldResult> rowSizes() {
    return {batch, b.getIndexAttr(hkv), b.getIndexAttr(group), sq};
  }
  AffineMap scoreMap() { return AffineMap::getMultiDimIdentityMap(5, ctx); }
  AffineMap rowMap() { return loopsMap(ctx, 5, {0, 1, 2, 3}); }
  /// Positions [S] or [B, S] indexed by score loop `seqLoop`.
  AffineMap positionMap(Value pos, int64_t seqLoop) {
    if (cast<RankedTensorType>(pos.getType()).getRank() == 2)
      return loopsMap(ctx, 5, {0, seqLoop});
    return loopsMap(ctx, 5, {seqLoop});
  }

  /// S = Q K^T, accumulated in f32 (loops b, kh, g, i, j, d).
  Value buildScores() {
    Value init = filledTensor(b, scoreSizes(), b.getF32Type(), 0.0);
    return buildGeneric(
        b, init.getType(), {q5, k}, init,
        {loopsMap(ctx, 6, {0, 1, 2, 3, 5}), loopsMap(ctx, 6, {0, 1, 4, 5}),
         loopsMap(ctx, 6, {0, 1, 2, 3, 4})},
        {par, par, par, par, par, red},
        [&](ImplicitLocOpBuilder &n, ValueRange args) -> SmallVector<Value> {
          // A multiply and an add: the vectorizer's reduction combiner.
          Value product = arith::MulFOp::create(n, extendToF32(n, args[0]),
                                                extendToF32(n, args[1]));
          return {arith::AddFOp::create(n, args[2], product)};
        })[0];
  }

  /// The mask operand [B|1, Hq|1, Sq, Skv] indexed by the score loops (mask
  /// head h = kh * group + g).
  AffineMap maskMap() {
    auto maskType = cast<RankedTensorType>(mask.getType());
    AffineExpr zero = getAffineConstantExpr(0, ctx);
    SmallVector<AffineExpr> exprs = {
        maskType.getDimSize(0) == 1 ? zero : getAffineDimExpr(0, ctx),
        maskType.getDimSize(1) == 1
            ? zero
            : getAffineDimExpr(1, ctx) * group + getAffineDimExpr(2, ctx),
        getAffineDimExpr(3, ctx), getAffineDimExpr(4, ctx)};
    return AffineMap::get(5, 0, exprs, ctx);
  }

  /// S = softcap(scale S) + ALiBi + mask, -inf where the key is hidden by
  /// position.
  Value buildModifiedScores(Value scores) {
    SmallVector<Value> inputs = {qPos, kPos};
    SmallVector<AffineMap> maps = {positionMap(qPos, 3), positionMap(kPos, 4)};
    std::optional<APFloat> alibi = op.getAlibi();
    if (alibi) {
      const int64_t hq = hkv * group;
      Value slopes = tensor::ExpandShapeOp::create(
          b, RankedTensorType::get({hkv, group}, b.getF32Type()),
          buildAlibiSlopes(b, hq, alibi->convertToDouble()),
          SmallVector<ReassociationIndices>{{0, 1}});
      inputs.push_back(slopes);
      maps.push_back(loopsMap(ctx, 5, {1, 2}));
    }
    if (mask) {
      inputs.push_back(mask);
      maps.push_back(maskMap());
    }
    maps.push_back(scoreMap());
    const double scale = op.getEffectiveScale();
    const PositionMask positionMask = PositionMask::of(op);
    return buildGeneric(
        b, scores.getType(), inputs, scores, maps, SmallVector<IteratorType>(5, par),
        [&](ImplicitLocOpBuilder &n, ValueRange args) -> SmallVector<Value> {
          Value q = extendToI64(n, args[0]), k = extendToI64(n, args[1]);
          Value factor = floatConstantLike(n, args.back(), scale);
          if (TemperatureAttr temperature = op.getTemperatureAttr())
            factor = arith::MulFOp::create(n, factor,
                                           buildQueryTemperature(n, temperature, q));
          Value s = arith::MulFOp::create(n, args.back(), factor);
          if (std::optional<APFloat> softcap = op.getSoftcap())
            s = buildSoftcapScore(n, s, softcap->convertToDouble());
          unsigned next = 2;
          if (alibi)
            s = buildAlibiScore(n, s, args[next++], buildPositionDistance(n, k, q));
          if (mask)
            s = buildAddMask(n, s, extendToF32(n, args[next++]));
          Value negInf = floatConstantLike(n, s, -std::numeric_limits<double>::infinity());
          return {arith::SelectOp::create(n, buildIsMasked(n, positionMask, q, k),
                                          negInf, s)};
        })[0];
  }

  /// P = exp(S - base) with base = max_j S (0 for a row without a visible
  /// key), and l = sum_j P.
  std::pair<Value, Value> buildWeights(Value scores) {
    SmallVector<IteratorType> rowReduction = {par, par, par, par, red};
    Type f32 = b.getF32Type();
    // m = max_j S, and the sink's logit where there is one.
    Value rowMax = filledTensor(b, rowSizes(), f32,
                                -std::numeric_limits<double>::infinity());
    if (sinks)
      rowMax = broadcastSinks(rowMax);
    rowMax = buildGeneric(b, rowMax.getType(), scores, rowMax,
                          {scoreMap(), rowMap()}, rowReduction,
                          [&](ImplicitLocOpBuilder &n, ValueRange args) -> SmallVector<Value> {
                            return {buildRowMax(n, args[1], args[0])};
                          })[0];
    // P = exp(S - base)
    Value weights = emptyTensor(b, scoreSizes(), f32);
    weights = buildGeneric(
        b, weights.getType(), {scores, rowMax}, weights,
        {scoreMap(), rowMap(), scoreMap()}, SmallVector<IteratorType>(5, par),
        [&](ImplicitLocOpBuilder &n, ValueRange args) -> SmallVector<Value> {
          Value base = buildExponentBase(n, args[1]);
          return {buildExpOfDifference(n, args[0], base, buildMathExp)};
        })[0];
    // l = sum_j P, plus exp(sink - base) with sinks.
    Value rowSum = filledTensor(b, rowSizes(), f32, 0.0);
    if (sinks) {
      Value sinkLogits = broadcastSinks(emptyTensor(b, rowSizes(), f32));
      AffineMap row = AffineMap::getMultiDimIdentityMap(4, ctx);
      rowSum = buildGeneric(
          b, rowSum.getType(), {sinkLogits, rowMax}, rowSum, {row, row, row},
          SmallVector<IteratorType>(4, par),
          [&](ImplicitLocOpBuilder &n, ValueRange args) -> SmallVector<Value> {
            Value base = buildExponentBase(n, args[1]);
            return {buildExpOfDifference(n, args[0], base, buildMathExp)};
          })[0];
    }
    rowSum = buildGeneric(b, rowSum.getType(), weights, rowSum,
                          {scoreMap(), rowMap()}, rowReduction,
                          [&](ImplicitLocOpBuilder &n, ValueRange args) -> SmallVector<Value> {
                            return {arith::AddFOp::create(n, args[1], args[0])};
                          })[0];
    return {weights, rowSum};
  }

  /// `rows` [B, Hkv, G, Sq] filled with the f32 sink logit of each row's
  /// head (h = kh * G + g).
  Value broadcastSinks(Value rows) {
    Value grouped = tensor::ExpandShapeOp::create(
        b,
        RankedTensorType::get({hkv, group},
                              cast<RankedTensorType>(sinks.getType()).getElementType()),
        sinks, SmallVector<ReassociationIndices>{{0, 1}});
    return buildGeneric(b, rows.getType(), grouped, rows,
                        {loopsMap(ctx, 4, {1, 2}), AffineMap::getMultiDimIdentityMap(4, ctx)},
                        SmallVector<IteratorType>(4, par),
                        [&](ImplicitLocOpBuilder &n, ValueRange args) -> SmallVector<Value> {
                          return {extendToF32(n, args[0])};
                        })[0];
  }

  /// O = sum_j P V (loops b, kh, g, i, j, e: the key reduction outside the
  /// value channels, which stay innermost and vectorize in full vectors).
  Value buildWeightedValues(Value weights) {
    SmallVector<OpFoldResult> sizes = rowSizes();
    sizes.push_back(b.getIndexAttr(dv));
    Value init = filledTensor(b, sizes, b.getF32Type(), 0.0);
    return buildGeneric(
        b, init.getType(), {weights, v}, init,
        {loopsMap(ctx, 6, {0, 1, 2, 3, 4}), loopsMap(ctx, 6, {0, 1, 4, 5}),
         loopsMap(ctx, 6, {0, 1, 2, 3, 5})},
        {par, par, par, par, red, par},
        [&](ImplicitLocOpBuilder &n, ValueRange args) -> SmallVector<Value> {
          Value term = buildWeightedTerm(n, args[0], extendToF32(n, args[1]));
          return {arith::AddFOp::create(n, args[2], term)};
        })[0];
  }

  /// out = O / l (0 where l = 0), rounded once to the element type.
  Value buildNormalized(Value acc, Value rowSum) {
    Type element = op.getType().getElementType();
    Value init = emptyTensor(b, sizesOf(b, acc), element);
    AffineMap id = scoreMap();
    return buildGeneric(b, init.getType(), {acc, rowSum}, init, {id, rowMap(), id},
                        SmallVector<IteratorType>(5, par),
                        [&](ImplicitLocOpBuilder &n, ValueRange args) -> SmallVector<Value> {
                          return {convertFloat(n, buildNormalize(n, args[0], args[1]),
                                               element)};
                        })[0];
  }
};

struct LowerAttention : OpConversionPattern<AttentionOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkLowerable(op, rewriter)))
      return failure();
    // Keys are read from one tensor per head: pe-lower-to-linalg writes a
    // shared block into every head first (expandSharedKeys).
    if (op.getSharedKey())
      return rewriter.notifyMatchFailure(op, "a shared key block to expand first");
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Value q = adaptor.getQuery(), k = adaptor.getKey();
    auto [qPos, kPos] =
        prepareAttentionOperands(b, op, q, k, adaptor.getValue(), adaptor.getMask(),
                                 adaptor.getQPositions(), adaptor.getKPositions());
    if (RopeAttr rope = op.getRopeAttr()) {
      AttentionRopeTables tables =
          buildAttentionRopeTables(b, op, q, k, qPos, kPos, adaptor.getQRopePositions(),
                                   adaptor.getKRopePositions());
      q = buildRotation(b, q, tables.qCos, tables.qSin, rope, Layout::bhsd);
      k = buildRotation(b, k, tables.kCos, tables.kSin, rope, Layout::bhsd);
    }
    Value out = AttentionLowering(b, op, q, k, adaptor.getValue(), adaptor.getMask(),
                                  qPos, kPos, adaptor.getSinks())
                    .build();
    checkAttentionResult(b, op, sizesOf(b, out));
    rewriter.replaceOp(op, castTo(b, out, op.getType()));
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// KV cache
//===----------------------------------------------------------------------===//

namespace {

/// pe.append_kv as a loop over the new tokens that inserts each token's rows
/// (all heads) at its slot. The keys are rotated once, before the loop, as
/// one pe.rope of the new rows; the cache itself is only written.
struct LowerAppendKv : OpConversionPattern<AppendKvOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AppendKvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkLowerable(op, rewriter)))
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Value keyCache = adaptor.getKeyCache(), valueCache = adaptor.getValueCache();
    Value slots = adaptor.getSlots();
    Value capacity =
        buildAppendKvChecks(b, op, adaptor.getKey(), adaptor.getValue(), keyCache, valueCache,
                            slots, adaptor.getPositions());

    Value keys = tokenRows(b, op, adaptor.getKey());
    Value values = tokenRows(b, op, adaptor.getValue());
    if (RopeAttr rope = op.getRopeAttr()) {
      Value positions = adaptor.getPositions();
      if (op.isPaged())
        positions = buildAppendTokenPositions(b, positions, rope.isMultiStream());
      auto [cos, sin] = buildRopeTables(b, rope, positions, b.getF32Type());
      keys = buildRotation(b, keys, cos, sin, rope, rowLayout(op));
    }
    auto [newKeys, newValues] =
        buildScatter(b, op, keys, values, slots, keyCache, valueCache, capacity);
    rewriter.replaceOp(op, {castTo(b, newKeys, op.getNewKeyCache().getType()),
                            castTo(b, newValues, op.getNewValueCache().getType())});
    return success();
  }

  /// The layout of the 4-D token rows (tokenRows) as pe.rope sees them.
  static Layout rowLayout(AppendKvOp op) {
    return op.getLayout() == CacheLayout::nhd ? Layout::bshd : Layout::bhsd;
  }

  /// The new rows as a 4-D tensor whose slice of one token has the shape of
  /// the cache slice it is written to: dense [B, H, S, D] as given, paged
  /// [T, H, D] as [T, 1, H, D] (nhd) or [T, H, 1, D] (hnd).
  static Value tokenRows(ImplicitLocOpBuilder &b, AppendKvOp op, Value rows) {
    if (!op.isPaged())
      return rows;
    auto type = cast<RankedTensorType>(rows.getType());
    ArrayRef<int64_t> s = type.getShape();
    bool nhd = op.getLayout() == CacheLayout::nhd;
    SmallVector<int64_t> shape =
        nhd ? SmallVector<int64_t>{s[0], 1, s[1], s[2]}
            : SmallVector<int64_t>{s[0], s[1], 1, s[2]};
    SmallVector<ReassociationIndices> groups =
        nhd ? SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}}
            : SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}};
    return tensor::ExpandShapeOp::create(
        b, RankedTensorType::get(shape, type.getElementType()), rows, groups);
  }

  /// Writes the rows of every token whose slot is in [0, capacity) (the
  /// checks reported any other slot but -1), in token order.
  static std::pair<Value, Value>
  buildScatter(ImplicitLocOpBuilder &b, AppendKvOp op, Value keys, Value values,
               Value slots, Value keyCache, Value valueCache, Value capacity) {
    const bool paged = op.isPaged();
    const bool sharedSlots =
        cast<RankedTensorType>(slots.getType()).getRank() == 1;
    Value zero = arith::ConstantIndexOp::create(b, 0);
    Value one = arith::ConstantIndexOp::create(b, 1);
    Value batches = paged ? one : dimValue(b, keys, 0);
    Value tokens = dimValue(b, keys, paged ? 0 : 2);
    Value pageSize;
    if (paged)
      pageSize = dimValue(b, keyCache, op.getLayout() == CacheLayout::nhd ? 1 : 2);

    auto outer = scf::ForOp::create(
        b, zero, batches, one, ValueRange{keyCache, valueCache},
        [&](OpBuilder &ob, Location oloc, Value batch, ValueRange outerCaches) {
          auto inner = scf::ForOp::create(
              ob, oloc, zero, tokens, one, outerCaches,
              [&](OpBuilder &nb, Location nloc, Value token, ValueRange caches) {
                ImplicitLocOpBuilder n(nloc, nb);
                Value slot = tensor::ExtractOp::create(
                    n, slots, paged || sharedSlots ? ValueRange{token}
                                                   : ValueRange{batch, token});
                slot = extendToI64(n, slot);
                Value valid = arith::AndIOp::create(
                    n,
                    arith::CmpIOp::create(n, arith::CmpIPredicate::sge, slot,
                                          intConstantLike(n, slot, 0)),
                    arith::CmpIOp::create(n, arith::CmpIPredicate::slt, slot,
                                          capacity));
                auto write = scf::IfOp::create(
                    n, valid,
                    [&](OpBuilder &tb, Location tloc) {
                      ImplicitLocOpBuilder t(tloc, tb);
                      Value at = arith::IndexCastOp::create(t, t.getIndexType(), slot);
                      SmallVector<OpFoldResult> rowAt, cacheAt;
                      tokenOffsets(t, op, batch, token, at, pageSize, rowAt, cacheAt);
                      scf::YieldOp::create(
                          t, ValueRange{copyRow(t, op, keys, caches[0], rowAt, cacheAt),
                                        copyRow(t, op, values, caches[1], rowAt, cacheAt)});
                    },
                    [&](OpBuilder &eb, Location eloc) {
                      scf::YieldOp::create(eb, eloc, caches);
                    });
                scf::YieldOp::create(n, write.getResults());
              });
          scf::YieldOp::create(ob, oloc, inner.getResults());
        });
    return {outer.getResult(0), outer.getResult(1)};
  }

  /// The offsets of one token's slice in the token rows and in the cache.
  static void tokenOffsets(ImplicitLocOpBuilder &b, AppendKvOp op, Value batch,
                           Value token, Value slot, Value pageSize,
                           SmallVector<OpFoldResult> &rowAt,
                           SmallVector<OpFoldResult> &cacheAt) {
    OpFoldResult zero = b.getIndexAttr(0);
    switch (op.getLayout()) {
    case CacheLayout::dense:
      rowAt = {batch, zero, token, zero};
      cacheAt = {batch, zero, slot, zero};
      return;
    case CacheLayout::nhd:
    case CacheLayout::hnd: {
      rowAt = {token, zero, zero, zero};
      Value page = arith::DivUIOp::create(b, slot, pageSize);
      Value row = arith::RemUIOp::create(b, slot, pageSize);
      cacheAt = op.getLayout() == CacheLayout::nhd
                    ? SmallVector<OpFoldResult>{page, row, zero, zero}
                    : SmallVector<OpFoldResult>{page, zero, row, zero};
      return;
    }
    }
  }

  /// `cache` with the slice of one token of `rows` (the token rows) at
  /// `rowAt` written at `cacheAt`: sizes [1, H, 1, D] (dense, hnd) or
  /// [1, 1, H, D] (nhd).
  static Value copyRow(ImplicitLocOpBuilder &b, AppendKvOp op, Value rows,
                       Value cache, ArrayRef<OpFoldResult> rowAt,
                       ArrayRef<OpFoldResult> cacheAt) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(rows.getType()).getShape();
    const bool dense = !op.isPaged();
    SmallVector<OpFoldResult> sizes = {
        b.getIndexAttr(1), b.getIndexAttr(shape[1]),
        b.getIndexAttr(dense ? 1 : shape[2]), b.getIndexAttr(shape[3])};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    Value row = tensor::ExtractSliceOp::create(b, rows, rowAt, sizes, strides);
    return tensor::InsertSliceOp::create(b, row, cache, cacheAt, sizes, strides);
  }
};

} // namespace

namespace {

/// pe.gather_pages as a copy, one page at a time: keys j0 .. j0 + n - 1 are
/// the first n rows of page block_table[seq, j0 / page_size] ([n, Hkv, D]
/// transposed for nhd, [Hkv, n, D] as they are for hnd). Page and column are
/// clamped into their tensors (the checks before reported anything outside).
struct LowerGatherPages : OpConversionPattern<GatherPagesOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(GatherPagesOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkLowerable(op, rewriter)))
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    checkGatherPages(b, op);
    Value cache = adaptor.getCache(), table = adaptor.getBlockTable();
    Value seq = adaptor.getSequence(), keys = adaptor.getLength();
    auto type = cast<RankedTensorType>(cache.getType());
    const bool nhd = op.getLayout() == CacheLayout::nhd;
    const int64_t heads = type.getDimSize(op.getHeadsDim()), d = type.getDimSize(3);
    Value one = arith::ConstantIndexOp::create(b, 1);
    Value pageSize = dimValue(b, cache, op.getPageSizeDim());
    Value lastPage = arith::SubIOp::create(b, dimValue(b, cache, 0), one);
    Value lastRow = arith::SubIOp::create(b, dimValue(b, table, 0), one);
    Value lastColumn = arith::SubIOp::create(b, dimValue(b, table, 1), one);
    Value row = clampIndex(b, seq, lastRow);
    Value init = tensor::EmptyOp::create(b, op.getType(), ValueRange{keys});
    Value blocks = arith::CeilDivSIOp::create(b, keys, pageSize);
    auto loop = scf::ForOp::create(
        b, arith::ConstantIndexOp::create(b, 0), blocks, one, ValueRange{init},
        [&](OpBuilder &nb, Location nloc, Value block, ValueRange out) {
          ImplicitLocOpBuilder n(nloc, nb);
          Value column = clampIndex(n, block, lastColumn);
          Value page = arith::IndexCastOp::create(
              n, n.getIndexType(), tensor::ExtractOp::create(n, table, ValueRange{row, column}));
          page = clampIndex(n, page, lastPage);
          Value first = arith::MulIOp::create(n, block, pageSize);
          Value count = arith::MinSIOp::create(n, pageSize,
                                               arith::SubIOp::create(n, keys, first));
          OpFoldResult zero = n.getIndexAttr(0), unit = n.getIndexAttr(1);
          SmallVector<OpFoldResult> offsets = {page, zero, zero, zero};
          SmallVector<OpFoldResult> sizes =
              nhd ? SmallVector<OpFoldResult>{unit, count, n.getIndexAttr(heads),
                                              n.getIndexAttr(d)}
                  : SmallVector<OpFoldResult>{unit, n.getIndexAttr(heads), count,
                                              n.getIndexAttr(d)};
          SmallVector<OpFoldResult> strides(4, unit);
          Value rows = tensor::ExtractSliceOp::create(n, cache, offsets, sizes, strides);
          if (nhd) {
            Value perm = tensor::EmptyOp::create(
                n, ArrayRef<OpFoldResult>{unit, n.getIndexAttr(heads), count, n.getIndexAttr(d)},
                type.getElementType());
            rows = linalg::TransposeOp::create(n, rows, perm, ArrayRef<int64_t>{0, 2, 1, 3})
                       .getResult()[0];
          }
          Value written = tensor::InsertSliceOp::create(
              n, rows, out[0], ArrayRef<OpFoldResult>{zero, zero, first, zero},
              ArrayRef<OpFoldResult>{unit, n.getIndexAttr(heads), count, n.getIndexAttr(d)},
              strides);
          scf::YieldOp::create(n, written);
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }

  /// x clamped into [0, last].
  static Value clampIndex(ImplicitLocOpBuilder &b, Value x, Value last) {
    Value low = arith::MaxSIOp::create(b, x, arith::ConstantIndexOp::create(b, 0));
    return arith::MinSIOp::create(b, low, last);
  }
};

} // namespace

void mlir::pe::populatePEToLinalgConversionPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerRopeFrequencies, LowerRopeTables, LowerRope, LowerSinusoidal,
               LowerLearned, LowerAlibiSlopes, LowerAlibiBias, LowerAttention,
               LowerAppendKv, LowerGatherPages>(
      patterns.getContext());
}

namespace {
struct LowerToLinalgPass
    : mlir::pe::impl::PELowerToLinalgBase<LowerToLinalgPass> {
  void runOnOperation() override {
    if (failed(checkLoweringRoot(getOperation(), "pe-lower-to-linalg")))
      return signalPassFailure();
    // Oversized constant tables are reported once each, before converting.
    bool oversized = false;
    getOperation()->walk([&](Operation *op) {
      if (isa<PEDialect>(op->getDialect()) && failed(checkConstantTables(op)))
        oversized = true;
    });
    if (oversized)
      return signalPassFailure();
    // Keys read from one tensor per head.
    expandSharedKeys(getOperation());
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalDialect<PEDialect>();
    target.addLegalDialect<arith::ArithDialect, func::FuncDialect,
                           linalg::LinalgDialect, math::MathDialect,
                           scf::SCFDialect, tensor::TensorDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    populatePEToLinalgConversionPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
