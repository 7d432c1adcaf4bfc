//===- PEToLinalg.cpp - pe-lower-to-linalg --------------------------------===//
//
// The reference lowering of every pe op to linalg on tensors. All positional
// math comes from pe/Math; what is computed at run time (angles, dynamic
// scalings) follows the same formulas.
//
//===----------------------------------------------------------------------===//
#include "pe/Conversion/Passes.h"
#include "pe/Dialect/PE/IR/PE.h"
#include "pe-c/Runtime.h"


#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>
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

/// Small helpers over an OpBuilder at a fixed location.
struct Emitter {
  OpBuilder &b;
  Location loc;

  Type f32() { return b.getF32Type(); }
  Type f64() { return b.getF64Type(); }
  Type i64() { return b.getI64Type(); }

  Value f64Const(double v) {
    return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
  }
  Value floatConst(Type type, double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, v));
  }
  Value i64Const(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }
  Value denseF64(ArrayRef<double> values) {
    auto type = RankedTensorType::get({int64_t(values.size())}, f64());
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, values));
  }

  OpFoldResult dim(Value tensor, int64_t i) {
    return tensor::getMixedSize(b, loc, tensor, i);
  }
  SmallVector<OpFoldResult> dims(Value tensor) {
    return tensor::getMixedSizes(b, loc, tensor);
  }
  Value empty(ArrayRef<OpFoldResult> sizes, Type element) {
    return tensor::EmptyOp::create(b, loc, sizes, element);
  }
  Value filled(ArrayRef<OpFoldResult> sizes, Type element, double value) {
    Value init = empty(sizes, element);
    return linalg::FillOp::create(b, loc, ValueRange{floatConst(element, value)},
                                  ValueRange{init})
        .getResult(0);
  }

  /// Extends f16/bf16 to f32; f32 and f64 stay.
  Value toF32(Value v) {
    if (v.getType().getIntOrFloatBitWidth() >= 32)
      return v;
    return arith::ExtFOp::create(b, loc, f32(), v);
  }
  /// Rounds once to `type` (f32 values; f64 results extend).
  Value toType(Value v, Type type) {
    if (v.getType() == type)
      return v;
    if (type.getIntOrFloatBitWidth() > v.getType().getIntOrFloatBitWidth())
      return arith::ExtFOp::create(b, loc, type, v);
    return arith::TruncFOp::create(b, loc, type, v);
  }
  Value toI64(Value v) {
    if (v.getType().isInteger(64))
      return v;
    return arith::ExtSIOp::create(b, loc, i64(), v);
  }

  /// The i64 maximum of an integer tensor (INT64_MIN when empty).
  Value maxOf(Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    int64_t rank = type.getRank();
    Value init = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, i64());
    init = linalg::FillOp::create(
               b, loc, ValueRange{i64Const(std::numeric_limits<int64_t>::min())},
               ValueRange{init})
               .getResult(0);
    MLIRContext *ctx = b.getContext();
    SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                   AffineMap::get(rank, 0, ctx)};
    SmallVector<IteratorType> iterators(rank, IteratorType::reduction);
    auto reduce = linalg::GenericOp::create(
        b, loc, init.getType(), ValueRange{tensor}, ValueRange{init}, maps,
        iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
          Emitter n{nb, nloc};
          Value v = n.toI64(args[0]);
          linalg::YieldOp::create(nb, nloc,
                                  ValueRange{arith::MaxSIOp::create(nb, nloc, v, args[1])});
        });
    return tensor::ExtractOp::create(b, loc, reduce.getResult(0), ValueRange{});
  }

  /// angle(p, f) reduced into [-pi, pi], in f64: the product p f is held
  /// exactly as hi + lo (FMA), and k 2pi is subtracted with a two-part 2pi.
  /// Returns the f32 rounding of the reduced angle.
  Value reducedAngle(Value position, Value invFreq) {
    static constexpr double kTwoPiHi = 6.283185307179586232;
    static constexpr double kTwoPiLo = 2.449293598294706414e-16;
    Value p = arith::SIToFPOp::create(b, loc, f64(), position);
    Value hi = arith::MulFOp::create(b, loc, p, invFreq);
    Value negHi = arith::NegFOp::create(b, loc, hi);
    Value lo = math::FmaOp::create(b, loc, p, invFreq, negHi);
    Value turns = arith::MulFOp::create(b, loc, hi, f64Const(1.0 / kTwoPiHi));
    Value k = math::RoundEvenOp::create(b, loc, turns);
    Value negK = arith::NegFOp::create(b, loc, k);
    Value r = math::FmaOp::create(b, loc, negK, f64Const(kTwoPiHi), hi);
    r = math::FmaOp::create(b, loc, negK, f64Const(kTwoPiLo), r);
    r = arith::AddFOp::create(b, loc, r, lo);
    return arith::TruncFOp::create(b, loc, f32(), r);
  }
};

/// An affine map from `rank` loops to the given loop dims.
AffineMap dimsMap(MLIRContext *ctx, int64_t rank, ArrayRef<int64_t> dims) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

} // namespace

/// `value` with the (static or dynamic) type the replaced op declares.
static Value castTo(OpBuilder &b, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return tensor::CastOp::create(b, loc, type, value);
}

/// Declares the runtime function `name(i64, i64, i64)` in the module of `op`
/// once.
static FlatSymbolRefAttr declareRuntimeFunction(OpBuilder &b, Operation *op,
                                                StringRef name) {
  auto module = op->getParentOfType<ModuleOp>();
  MLIRContext *ctx = b.getContext();
  if (!module.lookupSymbol(name)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    Type i64 = b.getI64Type();
    auto fn = func::FuncOp::create(b, op->getLoc(), name,
                                   FunctionType::get(ctx, {i64, i64, i64}, {}));
    fn.setPrivate();
  }
  return FlatSymbolRefAttr::get(ctx, name);
}

/// Calls pe_runtime_size_mismatch(check, got, want) unless got == want.
static void checkSize(Emitter &h, Operation *op, pe_size_check check, Value got,
                      Value want) {
  OpBuilder &b = h.b;
  FlatSymbolRefAttr fn = declareRuntimeFunction(b, op, kSizeMismatchFn);
  Value differ =
      arith::CmpIOp::create(b, h.loc, arith::CmpIPredicate::ne, got, want);
  scf::IfOp::create(b, h.loc, differ, [&](OpBuilder &tb, Location tloc) {
    Value args[] = {arith::ConstantOp::create(tb, tloc, tb.getI64IntegerAttr(check)),
                    arith::IndexCastOp::create(tb, tloc, tb.getI64Type(), got),
                    arith::IndexCastOp::create(tb, tloc, tb.getI64Type(), want)};
    func::CallOp::create(tb, tloc, fn, TypeRange{}, args);
    scf::YieldOp::create(tb, tloc);
  });
}

/// At run time, dimension `da` of `a` equals dimension `db` of `b`, else the
/// program stops with the message of `check`. Static pairs were verified.
static void assertSameSize(Emitter &h, Operation *op, pe_size_check check,
                           Value a, int64_t da, Value b, int64_t db) {
  auto ta = cast<RankedTensorType>(a.getType());
  auto tb = cast<RankedTensorType>(b.getType());
  if (!ta.isDynamicDim(da) && !tb.isDynamicDim(db))
    return;
  checkSize(h, op, check, tensor::DimOp::create(h.b, h.loc, a, da),
            tensor::DimOp::create(h.b, h.loc, b, db));
}

/// The static dimensions of the declared result `type` agree at run time with
/// the sizes computed from the operands.
static void assertResultSizes(Emitter &h, Operation *op, pe_size_check check,
                              RankedTensorType type,
                              ArrayRef<OpFoldResult> sizes) {
  for (auto [i, size] : llvm::enumerate(sizes)) {
    auto dynamic = dyn_cast<Value>(size);
    if (!dynamic || type.isDynamicDim(i))
      continue;
    checkSize(h, op, check, dynamic,
              arith::ConstantIndexOp::create(h.b, h.loc, type.getDimSize(i)));
  }
}

//===----------------------------------------------------------------------===//
// RoPE: frequencies, tables, rotation
//===----------------------------------------------------------------------===//

/// inv_freq as a tensor<r/2 x f64>. `seqLen` (i64) is the call's sequence
/// length for the scalings that depend on it; null means "not known".
static Value buildInverseFrequencies(Emitter &h, RopeAttr rope, Value seqLen) {
  formula::RopeConfig config = rope.getConfig();
  if (!seqLen || !formula::dependsOnSequenceLength(config))
    return h.denseF64(formula::inverseFrequencies(config));

  OpBuilder &b = h.b;
  Location loc = h.loc;
  if (config.kind == formula::ScalingKind::LongRope) {
    // ext = long_factor when seq_len > L0, else short_factor.
    formula::RopeConfig shortConfig = config, longConfig = config;
    shortConfig.longRopeChoice = formula::LongRopeChoice::Short;
    longConfig.longRopeChoice = formula::LongRopeChoice::Long;
    Value shortFreq = h.denseF64(formula::inverseFrequencies(shortConfig));
    Value longFreq = h.denseF64(formula::inverseFrequencies(longConfig));
    Value isLong = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, seqLen,
                                         h.i64Const(config.originalMaxPositions));
    return arith::SelectOp::create(b, loc, isLong, longFreq, shortFreq);
  }

  // Dynamic NTK: theta' = theta c with c = (s L / L_max - (s - 1))^(r/(r-2)),
  // L = max(seq_len, L_max), so inv_freq[i] = base[i] * exp(-(2i/r) ln c).
  const double r = double(config.rotaryDim), s = config.factor,
               lMax = double(config.originalMaxPositions);
  Value l = arith::SIToFPOp::create(b, loc, h.f64(), seqLen);
  l = arith::MaximumFOp::create(b, loc, l, h.f64Const(lMax));
  Value ratio = arith::MulFOp::create(b, loc, l, h.f64Const(s / lMax));
  ratio = arith::SubFOp::create(b, loc, ratio, h.f64Const(s - 1.0));
  Value lnC = arith::MulFOp::create(b, loc, math::LogOp::create(b, loc, ratio),
                                    h.f64Const(r / (r - 2.0)));
  formula::RopeConfig unscaled = config;
  unscaled.kind = formula::ScalingKind::None;
  std::vector<double> exponents(config.rotaryDim / 2);
  for (int64_t i = 0; i < int64_t(exponents.size()); ++i)
    exponents[i] = -2.0 * double(i) / r;
  Value base = h.denseF64(formula::inverseFrequencies(unscaled));
  Value exps = h.denseF64(exponents);
  MLIRContext *ctx = b.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  Value init = h.empty({b.getIndexAttr(int64_t(exponents.size()))}, h.f64());
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{base, exps}, ValueRange{init},
             SmallVector<AffineMap>{id, id, id},
             SmallVector<IteratorType>{IteratorType::parallel},
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value scale = math::ExpOp::create(
                   nb, nloc, arith::MulFOp::create(nb, nloc, args[1], lnC));
               linalg::YieldOp::create(
                   nb, nloc, ValueRange{arith::MulFOp::create(nb, nloc, args[0], scale)});
             })
      .getResult(0);
}

/// The sequence length that dynamic scalings see: max(positions) + 1.
static Value sequenceLengthOf(Emitter &h, RopeAttr rope, Value positions) {
  if (!formula::dependsOnSequenceLength(rope.getConfig()))
    return nullptr;
  return arith::AddIOp::create(h.b, h.loc, h.maxOf(positions), h.i64Const(1));
}

/// m cos(p f) and m sin(p f) for positions of shape P: two tensors of shape
/// P + [r/2] and element type `element`.
static std::pair<Value, Value> buildTables(Emitter &h, RopeAttr rope,
                                           Value positions, Value invFreq,
                                           Type element) {
  OpBuilder &b = h.b;
  MLIRContext *ctx = b.getContext();
  auto posType = cast<RankedTensorType>(positions.getType());
  int64_t rank = posType.getRank() + 1;
  int64_t half = rope.getRotaryDim() / 2;
  SmallVector<OpFoldResult> sizes = h.dims(positions);
  sizes.push_back(b.getIndexAttr(half));
  Value init = h.empty(sizes, element);
  SmallVector<int64_t> posDims;
  for (int64_t i = 0; i < rank - 1; ++i)
    posDims.push_back(i);
  SmallVector<AffineMap> maps = {
      dimsMap(ctx, rank, posDims), dimsMap(ctx, rank, {rank - 1}),
      AffineMap::getMultiDimIdentityMap(rank, ctx),
      AffineMap::getMultiDimIdentityMap(rank, ctx)};
  const double m = formula::attentionFactor(rope.getConfig());
  auto generic = linalg::GenericOp::create(
      b, h.loc, TypeRange{init.getType(), init.getType()},
      ValueRange{positions, invFreq}, ValueRange{init, init}, maps,
      SmallVector<IteratorType>(rank, IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Emitter n{nb, nloc};
        Value angle = n.reducedAngle(args[0], args[1]);
        Value c = math::CosOp::create(nb, nloc, angle);
        Value s = math::SinOp::create(nb, nloc, angle);
        if (m != 1.0) {
          Value mv = n.floatConst(n.f32(), m);
          c = arith::MulFOp::create(nb, nloc, c, mv);
          s = arith::MulFOp::create(nb, nloc, s, mv);
        }
        linalg::YieldOp::create(nb, nloc, ValueRange{n.toType(c, element),
                                                     n.toType(s, element)});
      });
  return {generic.getResult(0), generic.getResult(1)};
}

/// Tables for `positions` under `rope`, with the positions' own sequence
/// length for dynamic scalings.
static std::pair<Value, Value> tablesFor(Emitter &h, RopeAttr rope,
                                         Value positions) {
  Value invFreq =
      buildInverseFrequencies(h, rope, sequenceLengthOf(h, rope, positions));
  return buildTables(h, rope, positions, invFreq, h.f32());
}

/// Rotates `x` ([B,H,S,D] or [B,S,H,D]) with f32 tables of shape [S, r/2] or
/// [B, S, r/2]. The rotated channels are computed as two slices (the members
/// of each pair), the rest of `x` passes through.
static Value applyRotation(Emitter &h, Value x, Value cos, Value sin,
                           RopeAttr rope, Layout layout) {
  OpBuilder &b = h.b;
  Location loc = h.loc;
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(x.getType());
  Type element = type.getElementType();
  int64_t half = rope.getRotaryDim() / 2;
  bool interleaved = rope.getStyle() == RopeStyle::interleaved;

  // Slices of the first and second member of each pair: (i, i + r/2) or
  // (2i, 2i + 1).
  SmallVector<OpFoldResult> sizes = h.dims(x);
  sizes[3] = b.getIndexAttr(half);
  SmallVector<OpFoldResult> zeros(4, b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  SmallVector<OpFoldResult> firstOffsets = zeros, secondOffsets = zeros;
  if (interleaved) {
    strides[3] = b.getIndexAttr(2);
    secondOffsets[3] = b.getIndexAttr(1);
  } else {
    secondOffsets[3] = b.getIndexAttr(half);
  }
  Value first =
      tensor::ExtractSliceOp::create(b, loc, x, firstOffsets, sizes, strides);
  Value second =
      tensor::ExtractSliceOp::create(b, loc, x, secondOffsets, sizes, strides);

  // Loops (d0, d1, d2, d3) follow x; the tables index (s, i) or (b, s, i).
  int64_t seqDim = layout == Layout::bhsd ? 2 : 1;
  auto tableType = cast<RankedTensorType>(cos.getType());
  AffineMap tableMap = tableType.getRank() == 2
                           ? dimsMap(ctx, 4, {seqDim, 3})
                           : dimsMap(ctx, 4, {0, seqDim, 3});
  AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
  Value init = h.empty(sizes, element);
  auto rotate = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType(), init.getType()},
      ValueRange{first, second, cos, sin}, ValueRange{init, init},
      SmallVector<AffineMap>{id, id, tableMap, tableMap, id, id},
      SmallVector<IteratorType>(4, IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Emitter n{nb, nloc};
        Value x0 = n.toF32(args[0]), x1 = n.toF32(args[1]);
        Value c = args[2], s = args[3];
        // x0' = x0 cos - x1 sin ; x1' = x1 cos + x0 sin, each one FMA and
        // one product.
        Value x1s = arith::MulFOp::create(nb, nloc, x1, s);
        Value out0 = math::FmaOp::create(nb, nloc, x0, c,
                                         arith::NegFOp::create(nb, nloc, x1s));
        Value out1 = math::FmaOp::create(nb, nloc, x1, c,
                                         arith::MulFOp::create(nb, nloc, x0, s));
        linalg::YieldOp::create(nb, nloc, ValueRange{n.toType(out0, element),
                                                     n.toType(out1, element)});
      });
  Value result = tensor::InsertSliceOp::create(b, loc, rotate.getResult(0), x,
                                               firstOffsets, sizes, strides);
  return tensor::InsertSliceOp::create(b, loc, rotate.getResult(1), result,
                                       secondOffsets, sizes, strides);
}

std::pair<Value, Value> mlir::pe::prepareRopeOperands(OpBuilder &rewriter,
                                                    Location loc, RopeOp op,
                                                    Value x, Value positions,
                                                    Value cos, Value sin) {
  Emitter h{rewriter, loc};
  int64_t seqDim = op.getLayout() == Layout::bhsd ? 2 : 1;
  auto posType = cast<RankedTensorType>(positions.getType());
  assertSameSize(h, op, PE_CHECK_ROPE_POSITIONS_LENGTH, positions,
                 posType.getRank() - 1, x, seqDim);
  if (posType.getRank() == 2)
    assertSameSize(h, op, PE_CHECK_ROPE_POSITIONS_BATCH, positions, 0, x, 0);
  // Shared tables when given (pe-share-rope-tables), else our own.
  if (cos)
    for (int64_t i = 0; i < posType.getRank(); ++i)
      assertSameSize(h, op, PE_CHECK_ROPE_TABLES, cos, i, positions, i);
  if (!cos)
    std::tie(cos, sin) = tablesFor(h, op.getRope(), positions);
  return {cos, sin};
}

namespace {

struct LowerRopeFrequencies : OpConversionPattern<RopeFrequenciesOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RopeFrequenciesOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter h{rewriter, op.getLoc()};
    Value seqLen;
    if (Value n = adaptor.getSeqLen())
      seqLen = arith::IndexCastOp::create(rewriter, op.getLoc(), h.i64(), n);
    Value freqs = buildInverseFrequencies(h, op.getRope(), seqLen);
    Type element = op.getType().getElementType();
    if (element.isF64()) {
      rewriter.replaceOp(op, freqs);
      return success();
    }
    // Round the f64 frequencies once to the result type.
    MLIRContext *ctx = rewriter.getContext();
    AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
    Value init = h.empty(h.dims(freqs), element);
    auto cast = linalg::GenericOp::create(
        rewriter, op.getLoc(), op.getType(), ValueRange{freqs}, ValueRange{init},
        SmallVector<AffineMap>{id, id},
        SmallVector<IteratorType>{IteratorType::parallel},
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          linalg::YieldOp::create(
              nb, nloc, ValueRange{arith::TruncFOp::create(nb, nloc, element, args[0])});
        });
    rewriter.replaceOp(op, cast.getResult(0));
    return success();
  }
};

struct LowerRopeTables : OpConversionPattern<RopeTablesOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RopeTablesOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter h{rewriter, op.getLoc()};
    Value positions = adaptor.getPositions();
    Value invFreq = buildInverseFrequencies(
        h, op.getRope(), sequenceLengthOf(h, op.getRope(), positions));
    auto [cos, sin] = buildTables(h, op.getRope(), positions, invFreq,
                                  op.getCos().getType().getElementType());
    RankedTensorType type = op.getCos().getType();
    assertResultSizes(h, op, PE_CHECK_TABLE_SHAPE, type, h.dims(cos));
    rewriter.replaceOp(op, {castTo(rewriter, op.getLoc(), cos, type),
                            castTo(rewriter, op.getLoc(), sin, type)});
    return success();
  }
};

struct LowerRope : OpConversionPattern<RopeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RopeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter h{rewriter, op.getLoc()};
    Value x = adaptor.getInput();
    auto [cos, sin] =
        prepareRopeOperands(rewriter, op.getLoc(), op, x, adaptor.getPositions(),
                            adaptor.getCos(), adaptor.getSin());
    rewriter.replaceOp(op, applyRotation(h, x, cos, sin, op.getRope(),
                                         op.getLayout()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Absolute encodings
//===----------------------------------------------------------------------===//

struct LowerSinusoidal : OpConversionPattern<SinusoidalOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SinusoidalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter h{rewriter, loc};
    MLIRContext *ctx = rewriter.getContext();
    Value positions = adaptor.getPositions();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    int64_t rank = type.getRank();
    int64_t dim = type.getShape().back(), half = dim / 2;
    Value freqs = h.denseF64(formula::sinusoidalFrequencies(
        dim, op.getBase().convertToDouble(),
        op.getSpacing() == SinusoidalSpacing::fairseq));

    // sin and cos halves [..., S, dim/2], then placed into the result.
    SmallVector<OpFoldResult> halfSizes = h.dims(positions);
    halfSizes.push_back(rewriter.getIndexAttr(half));
    Value init = h.empty(halfSizes, element);
    SmallVector<int64_t> posDims;
    for (int64_t i = 0; i < rank - 1; ++i)
      posDims.push_back(i);
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    auto tables = linalg::GenericOp::create(
        rewriter, loc, TypeRange{init.getType(), init.getType()},
        ValueRange{positions, freqs}, ValueRange{init, init},
        SmallVector<AffineMap>{dimsMap(ctx, rank, posDims),
                               dimsMap(ctx, rank, {rank - 1}), id, id},
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          Emitter n{nb, nloc};
          Value angle = n.reducedAngle(args[0], args[1]);
          linalg::YieldOp::create(
              nb, nloc,
              ValueRange{n.toType(math::SinOp::create(nb, nloc, angle), element),
                         n.toType(math::CosOp::create(nb, nloc, angle), element)});
        });

    SmallVector<OpFoldResult> sizes = h.dims(positions);
    sizes.push_back(rewriter.getIndexAttr(dim));
    Value result = h.empty(sizes, element);
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    SmallVector<OpFoldResult> cosOffsets = offsets;
    if (op.getLayout() == SinusoidalLayout::interleaved) {
      // e[2k] = sin, e[2k + 1] = cos.
      strides.back() = rewriter.getIndexAttr(2);
      cosOffsets.back() = rewriter.getIndexAttr(1);
    } else {
      // e[k] = sin, e[dim/2 + k] = cos.
      cosOffsets.back() = rewriter.getIndexAttr(half);
    }
    result = tensor::InsertSliceOp::create(rewriter, loc, tables.getResult(0),
                                           result, offsets, halfSizes, strides);
    result = tensor::InsertSliceOp::create(rewriter, loc, tables.getResult(1),
                                           result, cosOffsets, halfSizes, strides);
    assertResultSizes(h, op, PE_CHECK_SINUSOIDAL_SHAPE, type, sizes);
    rewriter.replaceOp(op, castTo(rewriter, loc, result, type));
    return success();
  }
};

struct LowerLearned : OpConversionPattern<LearnedOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LearnedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter h{rewriter, loc};
    MLIRContext *ctx = rewriter.getContext();
    Value table = adaptor.getTable(), positions = adaptor.getPositions();
    auto posType = cast<RankedTensorType>(positions.getType());
    FlatSymbolRefAttr errorFn =
        declareRuntimeFunction(rewriter, op, kLearnedOutOfRangeFn);

    // Check every position before the gather: 0 <= p < rows, else report
    // (position, flat index, rows).
    Value rows = arith::IndexCastOp::create(
        rewriter, loc, h.i64(), tensor::DimOp::create(rewriter, loc, table, 0));
    Value flat = positions;
    if (posType.getRank() == 2)
      flat = tensor::CollapseShapeOp::create(
          rewriter, loc, positions, SmallVector<ReassociationIndices>{{0, 1}});
    Value count = tensor::DimOp::create(rewriter, loc, flat, 0);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    scf::ForOp::create(
        rewriter, loc, zero, count, one, ValueRange{},
        [&](OpBuilder &nb, Location nloc, Value iv, ValueRange) {
          Emitter n{nb, nloc};
          Value p = n.toI64(tensor::ExtractOp::create(nb, nloc, flat, iv));
          Value negative = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt,
                                                 p, n.i64Const(0));
          Value tooLarge = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sge,
                                                 p, rows);
          Value bad = arith::OrIOp::create(nb, nloc, negative, tooLarge);
          scf::IfOp::create(nb, nloc, bad, [&](OpBuilder &tb, Location tloc) {
            Value index = arith::IndexCastOp::create(tb, tloc, tb.getI64Type(), iv);
            func::CallOp::create(tb, tloc, errorFn, TypeRange{},
                                 ValueRange{p, index, rows});
            scf::YieldOp::create(tb, tloc);
          });
          scf::YieldOp::create(nb, nloc);
        });

    // out[..., s, d] = table[clamp(p[..., s]), d]; the clamp only keeps the
    // read in bounds should the error function return.
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    SmallVector<int64_t> posDims;
    for (int64_t i = 0; i < rank - 1; ++i)
      posDims.push_back(i);
    SmallVector<OpFoldResult> sizes = h.dims(positions);
    sizes.push_back(h.dim(table, 1));
    Value out = h.empty(sizes, type.getElementType());
    Value lastRow = arith::SubIOp::create(rewriter, loc, rows, h.i64Const(1));
    assertResultSizes(h, op, PE_CHECK_LEARNED_SHAPE, type, sizes);
    auto gather = linalg::GenericOp::create(
        rewriter, loc, out.getType(), ValueRange{positions}, ValueRange{out},
        SmallVector<AffineMap>{dimsMap(ctx, rank, posDims),
                               AffineMap::getMultiDimIdentityMap(rank, ctx)},
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          Emitter n{nb, nloc};
          Value p = n.toI64(args[0]);
          p = arith::MaxSIOp::create(nb, nloc, p, n.i64Const(0));
          p = arith::MinSIOp::create(nb, nloc, p, lastRow);
          Value row = arith::IndexCastOp::create(nb, nloc, nb.getIndexType(), p);
          Value col = linalg::IndexOp::create(nb, nloc, rank - 1);
          Value v = tensor::ExtractOp::create(nb, nloc, table, ValueRange{row, col});
          linalg::YieldOp::create(nb, nloc, ValueRange{v});
        });
    rewriter.replaceOp(op, castTo(rewriter, loc, gather.getResult(0), type));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// ALiBi
//===----------------------------------------------------------------------===//

struct LowerAlibiSlopes : OpConversionPattern<AlibiSlopesOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AlibiSlopesOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpFoldResult folded = op.fold(AlibiSlopesOp::FoldAdaptor({}, op));
    auto attr = dyn_cast_if_present<TypedAttr>(dyn_cast_if_present<Attribute>(folded));
    if (!attr)
      return rewriter.notifyMatchFailure(op, "too many slopes to materialize");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, attr);
    return success();
  }
};

} // namespace

namespace {
enum class BiasForm { Relative, Causal, Symmetric };
} // namespace

/// The ALiBi bias in f32: -slope (q_pos - k_pos) (Relative); the same with
/// -inf for keys after the query (Causal); -slope |q_pos - k_pos| (Symmetric).
static Value alibiBias(OpBuilder &b, Location loc, Value slope, Value qPos,
                       Value kPos, BiasForm form) {
  Emitter h{b, loc};
  Value qp = h.toI64(qPos), kp = h.toI64(kPos);
  Value d = arith::SIToFPOp::create(b, loc, h.f32(),
                                    arith::SubIOp::create(b, loc, qp, kp));
  if (form == BiasForm::Symmetric)
    d = math::AbsFOp::create(b, loc, d);
  Value bias = arith::MulFOp::create(b, loc, arith::NegFOp::create(b, loc, slope), d);
  if (form != BiasForm::Causal)
    return bias;
  Value future = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, kp, qp);
  Value negInf = h.floatConst(h.f32(), -std::numeric_limits<double>::infinity());
  return arith::SelectOp::create(b, loc, future, negInf, bias);
}

namespace {
struct LowerAlibiBias : OpConversionPattern<AlibiBiasOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AlibiBiasOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter h{rewriter, loc};
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    bool batched = rank == 4;
    // Loops: ([b,] h, i, j).
    int64_t hd = batched ? 1 : 0, id = hd + 1, jd = hd + 2;
    auto posMap = [&](Value pos, int64_t seqDim) {
      if (cast<RankedTensorType>(pos.getType()).getRank() == 2)
        return dimsMap(ctx, rank, {0, seqDim});
      return dimsMap(ctx, rank, {seqDim});
    };
    SmallVector<OpFoldResult> sizes;
    Value qPos = adaptor.getQPositions(), kPos = adaptor.getKPositions();
    if (batched) {
      Value withBatch = cast<RankedTensorType>(qPos.getType()).getRank() == 2 ? qPos : kPos;
      sizes.push_back(h.dim(withBatch, 0));
    }
    sizes.push_back(h.dim(adaptor.getSlopes(), 0));
    sizes.push_back(h.dim(qPos, cast<RankedTensorType>(qPos.getType()).getRank() - 1));
    sizes.push_back(h.dim(kPos, cast<RankedTensorType>(kPos.getType()).getRank() - 1));
    Value init = h.empty(sizes, type.getElementType());
    BiasForm form = op.getMode() == AlibiMode::causal ? BiasForm::Causal
                                                      : BiasForm::Symmetric;
    Type element = type.getElementType();
    if (cast<RankedTensorType>(qPos.getType()).getRank() == 2 &&
        cast<RankedTensorType>(kPos.getType()).getRank() == 2)
      assertSameSize(h, op, PE_CHECK_ALIBI_BATCH, kPos, 0, qPos, 0);
    assertResultSizes(h, op, PE_CHECK_ALIBI_SHAPE, type, sizes);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init.getType(), ValueRange{adaptor.getSlopes(), qPos, kPos},
        ValueRange{init},
        SmallVector<AffineMap>{dimsMap(ctx, rank, {hd}), posMap(qPos, id),
                               posMap(kPos, jd),
                               AffineMap::getMultiDimIdentityMap(rank, ctx)},
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          Emitter n{nb, nloc};
          Value bias = alibiBias(nb, nloc, n.toF32(args[0]), args[1], args[2], form);
          linalg::YieldOp::create(nb, nloc, ValueRange{n.toType(bias, element)});
        });
    rewriter.replaceOp(op, castTo(rewriter, loc, generic.getResult(0), type));
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Default positions: element i of dimension `seqDim` of `tensor` has
/// position offset + i.
static Value defaultPositions(Emitter &h, Value tensor, int64_t seqDim,
                              Value offset) {
  MLIRContext *ctx = h.b.getContext();
  Value init = h.empty({h.dim(tensor, seqDim)}, h.i64());
  return linalg::GenericOp::create(
             h.b, h.loc, init.getType(), ValueRange{}, ValueRange{init},
             SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(1, ctx)},
             SmallVector<IteratorType>{IteratorType::parallel},
             [&](OpBuilder &nb, Location nloc, ValueRange) {
               Value i = linalg::IndexOp::create(nb, nloc, 0);
               Value p = arith::IndexCastOp::create(nb, nloc, nb.getI64Type(), i);
               if (offset)
                 p = arith::AddIOp::create(nb, nloc, p, offset);
               linalg::YieldOp::create(nb, nloc, ValueRange{p});
             })
      .getResult(0);
}

std::pair<Value, Value> mlir::pe::prepareAttentionOperands(
    OpBuilder &rewriter, Location loc, AttentionOp op, Value q, Value k, Value v,
    Value mask, Value qPos, Value kPos) {
  Emitter h{rewriter, loc};
  const int64_t hq = cast<RankedTensorType>(q.getType()).getDimSize(1);
  // Sizes the verifier could not see (dynamic) must agree at run time.
  assertSameSize(h, op, PE_CHECK_ATTENTION_KEY_BATCH, k, 0, q, 0);
  assertSameSize(h, op, PE_CHECK_ATTENTION_VALUE_BATCH, v, 0, q, 0);
  assertSameSize(h, op, PE_CHECK_ATTENTION_VALUE_LENGTH, v, 2, k, 2);
  if (mask) {
    if (cast<RankedTensorType>(mask.getType()).getDimSize(0) != 1)
      assertSameSize(h, op, PE_CHECK_ATTENTION_MASK_BATCH, mask, 0, q, 0);
    if (cast<RankedTensorType>(mask.getType()).isDynamicDim(1))
      checkSize(h, op, PE_CHECK_ATTENTION_MASK_HEADS,
                tensor::DimOp::create(rewriter, loc, mask, 1),
                arith::ConstantIndexOp::create(rewriter, loc, hq));
    assertSameSize(h, op, PE_CHECK_ATTENTION_MASK_ROWS, mask, 2, q, 2);
    assertSameSize(h, op, PE_CHECK_ATTENTION_MASK_COLUMNS, mask, 3, k, 2);
  }
  for (auto [pos, x, check] :
       {std::tuple{qPos, q, PE_CHECK_ATTENTION_Q_POSITIONS},
        std::tuple{kPos, k, PE_CHECK_ATTENTION_K_POSITIONS}}) {
    if (!pos)
      continue;
    auto posType = cast<RankedTensorType>(pos.getType());
    assertSameSize(h, op, check, pos, posType.getRank() - 1, x, 2);
    if (posType.getRank() == 2)
      assertSameSize(h, op, PE_CHECK_ATTENTION_POSITIONS_BATCH, pos, 0, x, 0);
  }
  if (!qPos) {
    // q_pos[i] = Skv - Sq + i.
    Value skv = arith::IndexCastOp::create(
        rewriter, loc, h.i64(), tensor::DimOp::create(rewriter, loc, k, 2));
    Value sq = arith::IndexCastOp::create(
        rewriter, loc, h.i64(), tensor::DimOp::create(rewriter, loc, q, 2));
    qPos = defaultPositions(h, q, 2, arith::SubIOp::create(rewriter, loc, skv, sq));
  }
  if (!kPos)
    kPos = defaultPositions(h, k, 2, nullptr);

  return {qPos, kPos};
}

std::pair<Value, Value> mlir::pe::buildRopeTables(OpBuilder &b, Location loc,
                                                  RopeAttr rope, Value positions) {
  Emitter h{b, loc};
  return tablesFor(h, rope, positions);
}

void mlir::pe::checkAttentionResult(OpBuilder &b, Location loc, AttentionOp op,
                                    ArrayRef<OpFoldResult> sizes) {
  Emitter h{b, loc};
  assertResultSizes(h, op, PE_CHECK_ATTENTION_RESULT, op.getType(), sizes);
}

namespace {

struct LowerAttention : OpConversionPattern<AttentionOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter h{rewriter, loc};
    MLIRContext *ctx = rewriter.getContext();
    Value q = adaptor.getQuery(), k = adaptor.getKey(), v = adaptor.getValue();
    auto qType = cast<RankedTensorType>(q.getType());
    auto kType = cast<RankedTensorType>(k.getType());
    auto vType = cast<RankedTensorType>(v.getType());
    Type element = qType.getElementType();
    const int64_t hq = qType.getDimSize(1), hkv = kType.getDimSize(1),
                  group = hq / hkv, dv = vType.getDimSize(3);

    Value qPos, kPos;
    std::tie(qPos, kPos) = prepareAttentionOperands(
        rewriter, loc, op, q, k, v, adaptor.getMask(), adaptor.getQPositions(),
        adaptor.getKPositions());

    if (RopeAttr rope = op.getRopeAttr()) {
      auto [qCos, qSin] = tablesFor(h, rope, qPos);
      q = applyRotation(h, q, qCos, qSin, rope, Layout::bhsd);
      auto [kCos, kSin] = tablesFor(h, rope, kPos);
      k = applyRotation(h, k, kCos, kSin, rope, Layout::bhsd);
    }

    // GQA: query heads as (Hkv, group). Loops of the score ops:
    // (b, kh, g, i, j) and a trailing reduction (d for QK^T, j for PV).
    SmallVector<OpFoldResult> qSizes = h.dims(q);
    auto q5Type = RankedTensorType::get(
        {qType.getDimSize(0), hkv, group, qType.getDimSize(2), qType.getDimSize(3)},
        element);
    Value q5 = tensor::ExpandShapeOp::create(
        rewriter, loc, q5Type, q,
        SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}},
        SmallVector<OpFoldResult>{qSizes[0], rewriter.getIndexAttr(hkv),
                                  rewriter.getIndexAttr(group), qSizes[2], qSizes[3]});
    OpFoldResult batch = qSizes[0], sq = qSizes[2], skv = h.dim(k, 2);
    SmallVector<OpFoldResult> scoreSizes = {batch, rewriter.getIndexAttr(hkv),
                                            rewriter.getIndexAttr(group), sq, skv};

    // S = Q K^T (f32 accumulation).
    Value scores = h.filled(scoreSizes, h.f32(), 0.0);
    auto par = IteratorType::parallel, red = IteratorType::reduction;
    scores = linalg::GenericOp::create(
                 rewriter, loc, scores.getType(), ValueRange{q5, k},
                 ValueRange{scores},
                 SmallVector<AffineMap>{dimsMap(ctx, 6, {0, 1, 2, 3, 5}),
                                        dimsMap(ctx, 6, {0, 1, 4, 5}),
                                        dimsMap(ctx, 6, {0, 1, 2, 3, 4})},
                 SmallVector<IteratorType>{par, par, par, par, par, red},
                 [&](OpBuilder &nb, Location nloc, ValueRange args) {
                   Emitter n{nb, nloc};
                   Value prod = arith::MulFOp::create(nb, nloc, n.toF32(args[0]),
                                                      n.toF32(args[1]));
                   linalg::YieldOp::create(
                       nb, nloc, ValueRange{arith::AddFOp::create(nb, nloc, args[2], prod)});
                 })
                 .getResult(0);

    // S = scale S + alibi + mask, -inf where causal/window masked.
    auto posMap = [&](Value pos, int64_t seqDim) {
      if (cast<RankedTensorType>(pos.getType()).getRank() == 2)
        return dimsMap(ctx, 5, {0, seqDim});
      return dimsMap(ctx, 5, {seqDim});
    };
    SmallVector<Value> inputs = {qPos, kPos};
    SmallVector<AffineMap> maps = {posMap(qPos, 3), posMap(kPos, 4)};
    std::optional<APFloat> alibi = op.getAlibi();
    if (alibi) {
      std::vector<double> slopes = formula::alibiSlopes(hq, alibi->convertToDouble());
      SmallVector<float> values(slopes.begin(), slopes.end());
      auto slopeType = RankedTensorType::get({hkv, group}, h.f32());
      inputs.push_back(arith::ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(slopeType, ArrayRef<float>(values))));
      maps.push_back(dimsMap(ctx, 5, {1, 2}));
    }
    if (Value mask = adaptor.getMask()) {
      auto maskType = cast<RankedTensorType>(mask.getType());
      SmallVector<AffineExpr> exprs;
      exprs.push_back(maskType.getDimSize(0) == 1 ? getAffineConstantExpr(0, ctx)
                                                  : getAffineDimExpr(0, ctx));
      if (maskType.getDimSize(1) == 1) {
        exprs.push_back(getAffineConstantExpr(0, ctx));
      } else {
        // Mask head h = kh * group + g.
        exprs.push_back(getAffineDimExpr(1, ctx) * group + getAffineDimExpr(2, ctx));
      }
      exprs.push_back(getAffineDimExpr(3, ctx));
      exprs.push_back(getAffineDimExpr(4, ctx));
      inputs.push_back(mask);
      maps.push_back(AffineMap::get(5, 0, exprs, ctx));
    }
    maps.push_back(AffineMap::getMultiDimIdentityMap(5, ctx));
    const double scale = op.getEffectiveScale();
    const bool causal = op.getCausal();
    const std::optional<int64_t> window = op.getWindow();
    const bool hasMask = bool(adaptor.getMask());
    scores = linalg::GenericOp::create(
                 rewriter, loc, scores.getType(), inputs, ValueRange{scores}, maps,
                 SmallVector<IteratorType>(5, par),
                 [&](OpBuilder &nb, Location nloc, ValueRange args) {
                   Emitter n{nb, nloc};
                   Value qp = n.toI64(args[0]), kp = n.toI64(args[1]);
                   Value s = arith::MulFOp::create(nb, nloc, args.back(),
                                                   n.floatConst(n.f32(), scale));
                   unsigned next = 2;
                   if (alibi)
                     s = arith::AddFOp::create(
                         nb, nloc, s,
                         alibiBias(nb, nloc, args[next++], qp, kp, BiasForm::Relative));
                   if (hasMask)
                     s = arith::AddFOp::create(nb, nloc, s, n.toF32(args[next++]));
                   Value masked = arith::ConstantOp::create(nb, nloc, nb.getBoolAttr(false));
                   Value delta = arith::SubIOp::create(nb, nloc, qp, kp); // q - k
                   if (causal)
                     masked = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt,
                                                    delta, n.i64Const(0));
                   if (window) {
                     Value w = n.i64Const(*window);
                     Value far = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sge,
                                                       delta, w);
                     if (!causal) {
                       Value negDelta = arith::SubIOp::create(nb, nloc, kp, qp);
                       far = arith::OrIOp::create(
                           nb, nloc, far,
                           arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sge,
                                                 negDelta, w));
                     }
                     masked = arith::OrIOp::create(nb, nloc, masked, far);
                   }
                   Value negInf = n.floatConst(
                       n.f32(), -std::numeric_limits<double>::infinity());
                   s = arith::SelectOp::create(nb, nloc, masked, negInf, s);
                   linalg::YieldOp::create(nb, nloc, ValueRange{s});
                 })
                 .getResult(0);

    // Softmax over j, with a fully masked row (max = -inf) giving 0.
    SmallVector<OpFoldResult> rowSizes = {batch, rewriter.getIndexAttr(hkv),
                                          rewriter.getIndexAttr(group), sq};
    AffineMap rowMap = dimsMap(ctx, 5, {0, 1, 2, 3});
    AffineMap id5 = AffineMap::getMultiDimIdentityMap(5, ctx);
    SmallVector<IteratorType> rowReduce = {par, par, par, par, red};
    // rowMax = max_j S.
    Value rowMax = h.filled(rowSizes, h.f32(), -std::numeric_limits<double>::infinity());
    rowMax = linalg::GenericOp::create(
                 rewriter, loc, rowMax.getType(), ValueRange{scores}, ValueRange{rowMax},
                 SmallVector<AffineMap>{id5, rowMap}, rowReduce,
                 [&](OpBuilder &nb, Location nloc, ValueRange args) {
                   linalg::YieldOp::create(
                       nb, nloc, ValueRange{arith::MaximumFOp::create(nb, nloc, args[0], args[1])});
                 })
                 .getResult(0);
    // P = exp(S - max'), max' = (max == -inf) ? 0 : max.
    Value probs = h.empty(scoreSizes, h.f32());
    probs = linalg::GenericOp::create(
                rewriter, loc, probs.getType(), ValueRange{scores, rowMax},
                ValueRange{probs}, SmallVector<AffineMap>{id5, rowMap, id5},
                SmallVector<IteratorType>(5, par),
                [&](OpBuilder &nb, Location nloc, ValueRange args) {
                  Emitter n{nb, nloc};
                  Value negInf = n.floatConst(n.f32(), -std::numeric_limits<double>::infinity());
                  Value isEmpty = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OEQ,
                                                        args[1], negInf);
                  Value m = arith::SelectOp::create(nb, nloc, isEmpty,
                                                    n.floatConst(n.f32(), 0.0), args[1]);
                  Value e = math::ExpOp::create(
                      nb, nloc, arith::SubFOp::create(nb, nloc, args[0], m));
                  linalg::YieldOp::create(nb, nloc, ValueRange{e});
                })
                .getResult(0);
    // l = sum_j P.
    Value rowSum = h.filled(rowSizes, h.f32(), 0.0);
    rowSum = linalg::GenericOp::create(
                 rewriter, loc, rowSum.getType(), ValueRange{probs}, ValueRange{rowSum},
                 SmallVector<AffineMap>{id5, rowMap}, rowReduce,
                 [&](OpBuilder &nb, Location nloc, ValueRange args) {
                   linalg::YieldOp::create(
                       nb, nloc, ValueRange{arith::AddFOp::create(nb, nloc, args[0], args[1])});
                 })
                 .getResult(0);
    // O = P V (loops b, kh, g, i, j, e: the reduction over keys outside the
    // value channels, which stay innermost and vectorize in full vectors).
    SmallVector<OpFoldResult> outSizes = {batch, rewriter.getIndexAttr(hkv),
                                          rewriter.getIndexAttr(group), sq,
                                          rewriter.getIndexAttr(dv)};
    Value acc = h.filled(outSizes, h.f32(), 0.0);
    acc = linalg::GenericOp::create(
              rewriter, loc, acc.getType(), ValueRange{probs, v}, ValueRange{acc},
              SmallVector<AffineMap>{dimsMap(ctx, 6, {0, 1, 2, 3, 4}),
                                     dimsMap(ctx, 6, {0, 1, 4, 5}),
                                     dimsMap(ctx, 6, {0, 1, 2, 3, 5})},
              SmallVector<IteratorType>{par, par, par, par, red, par},
              [&](OpBuilder &nb, Location nloc, ValueRange args) {
                Emitter n{nb, nloc};
                Value prod = arith::MulFOp::create(nb, nloc, args[0], n.toF32(args[1]));
                linalg::YieldOp::create(
                    nb, nloc, ValueRange{arith::AddFOp::create(nb, nloc, args[2], prod)});
              })
              .getResult(0);
    // out = l == 0 ? 0 : O / l, rounded once to the element type.
    Value out5 = h.empty(outSizes, element);
    out5 = linalg::GenericOp::create(
               rewriter, loc, out5.getType(), ValueRange{acc, rowSum}, ValueRange{out5},
               SmallVector<AffineMap>{id5, rowMap, id5},
               SmallVector<IteratorType>(5, par),
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 Emitter n{nb, nloc};
                 Value zero = n.floatConst(n.f32(), 0.0);
                 Value isEmpty = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OEQ,
                                                       args[1], zero);
                 Value ratio = arith::DivFOp::create(nb, nloc, args[0], args[1]);
                 Value o = arith::SelectOp::create(nb, nloc, isEmpty, zero, ratio);
                 linalg::YieldOp::create(nb, nloc, ValueRange{n.toType(o, element)});
               })
               .getResult(0);
    Value out = tensor::CollapseShapeOp::create(
        rewriter, loc, out5, SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
    checkAttentionResult(rewriter, loc, op, h.dims(out));
    rewriter.replaceOp(op, castTo(rewriter, loc, out, op.getType()));
    return success();
  }
};

} // namespace

void mlir::pe::populatePEToLinalgConversionPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerRopeFrequencies, LowerRopeTables, LowerRope, LowerSinusoidal,
               LowerLearned, LowerAlibiSlopes, LowerAlibiBias, LowerAttention>(
      patterns.getContext());
}

namespace {
struct LowerToLinalgPass
    : mlir::pe::impl::PELowerToLinalgBase<LowerToLinalgPass> {
  void runOnOperation() override {
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
