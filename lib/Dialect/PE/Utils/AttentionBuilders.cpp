//===- AttentionBuilders.cpp - attention's positional math as IR ----------===//
#include "pe/Dialect/PE/Utils/AttentionBuilders.h"

#include "pe/Dialect/PE/Utils/ValueUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <limits>

using namespace mlir;
using namespace mlir::pe;

using IntPredicate = arith::CmpIPredicate;
using FloatPredicate = arith::CmpFPredicate;

/// A constant i1 (or vector of i1) shaped like the integer or float `like`.
static Value boolLike(ImplicitLocOpBuilder &b, Value like, bool value) {
  Type type = withElementType(like.getType(), b.getI1Type());
  auto attr = b.getBoolAttr(value);
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, DenseElementsAttr::get(vector, attr));
  return arith::ConstantOp::create(b, attr);
}

static Value orOf(ImplicitLocOpBuilder &b, Value x, Value y) {
  return arith::OrIOp::create(b, x, y);
}

//===----------------------------------------------------------------------===//
// Which keys a query sees
//===----------------------------------------------------------------------===//

Value pe::buildAtLeastApart(ImplicitLocOpBuilder &b, Value ahead, Value behind,
                            Value distance) {
  Value ordered = arith::CmpIOp::create(b, IntPredicate::sge, ahead, behind);
  // Exact as an unsigned number when ahead >= behind.
  Value gap = arith::SubIOp::create(b, ahead, behind);
  Value far = arith::CmpIOp::create(b, IntPredicate::uge, gap, distance);
  return arith::AndIOp::create(b, ordered, far);
}

/// The rule of PositionMask, for any representation of positions (exact
/// i64 positions, or distances held exactly in f32) given by how it answers
/// four questions: `keyAfterQuery` (k > q), `queryAhead(w)` (q - k >= w),
/// `keyAhead(w)` (k - q >= w) and `otherChunk(c)` (floor(k / c) !=
/// floor(q / c)). Causal hides k > q; a window of W hides q - k >= W and,
/// without causal, k - q >= W; a chunk of C hides the other chunks.
static Value buildMaskRule(ImplicitLocOpBuilder &b, const PositionMask &mask,
                           Value noneMasked, function_ref<Value()> keyAfterQuery,
                           function_ref<Value(int64_t)> queryAhead,
                           function_ref<Value(int64_t)> keyAhead,
                           function_ref<Value(int64_t)> otherChunk) {
  Value masked = noneMasked;
  if (mask.causal)
    masked = keyAfterQuery();
  if (mask.window) {
    masked = orOf(b, masked, queryAhead(*mask.window));
    if (!mask.causal)
      masked = orOf(b, masked, keyAhead(*mask.window));
  }
  if (mask.chunk)
    masked = orOf(b, masked, otherChunk(*mask.chunk));
  return masked;
}

/// floor(p / c) for i64 positions (scalars or vectors) and c >= 1.
static Value buildChunkOf(ImplicitLocOpBuilder &b, Value p, int64_t c) {
  return arith::FloorDivSIOp::create(b, p, intConstantLike(b, p, c));
}

Value pe::buildIsMasked(ImplicitLocOpBuilder &b, const PositionMask &mask,
                        Value q, Value k) {
  return buildMaskRule(
      b, mask, boolLike(b, q, false),
      [&] { return Value(arith::CmpIOp::create(b, IntPredicate::sgt, k, q)); },
      [&](int64_t w) { return buildAtLeastApart(b, q, k, intConstantLike(b, q, w)); },
      [&](int64_t w) { return buildAtLeastApart(b, k, q, intConstantLike(b, q, w)); },
      [&](int64_t c) {
        return Value(arith::CmpIOp::create(b, IntPredicate::ne, buildChunkOf(b, k, c),
                                           buildChunkOf(b, q, c)));
      });
}

Value pe::buildIsMaskedByDistance(ImplicitLocOpBuilder &b, const PositionMask &mask,
                                  Value kMinusQ) {
  assert(!mask.chunk && "chunks need positions, not distances");
  auto atLeast = [&](Value x, int64_t w) {
    return Value(arith::CmpFOp::create(b, FloatPredicate::OGE, x,
                                       floatConstantLike(b, kMinusQ, double(w))));
  };
  return buildMaskRule(
      b, mask, boolLike(b, kMinusQ, false),
      [&] {
        return Value(arith::CmpFOp::create(b, FloatPredicate::OGT, kMinusQ,
                                           floatConstantLike(b, kMinusQ, 0.0)));
      },
      [&](int64_t w) { return atLeast(arith::NegFOp::create(b, kMinusQ), w); },
      [&](int64_t w) { return atLeast(kMinusQ, w); }, [](int64_t) { return Value(); });
}

Value pe::buildPositionAt(ImplicitLocOpBuilder &b, Value positions, Value bi, Value i) {
  bool batched = cast<MemRefType>(positions.getType()).getRank() == 2;
  SmallVector<Value> at = batched ? SmallVector<Value>{bi, i} : SmallVector<Value>{i};
  return extendToI64(b, memref::LoadOp::create(b, positions, at));
}

Value pe::buildPositionDistance(ImplicitLocOpBuilder &b, Value k, Value q) {
  // |k - q| as an unsigned 64-bit number, then its sign.
  Value nonNegative = arith::CmpIOp::create(b, IntPredicate::sge, k, q);
  Value magnitude =
      arith::SelectOp::create(b, nonNegative, arith::SubIOp::create(b, k, q),
                              arith::SubIOp::create(b, q, k));
  Value rounded = arith::UIToFPOp::create(
      b, withElementType(k.getType(), b.getF32Type()), magnitude);
  return arith::SelectOp::create(b, nonNegative, rounded,
                                 arith::NegFOp::create(b, rounded));
}

TileVisibility pe::buildTileVisibility(ImplicitLocOpBuilder &b,
                                       const PositionMask &mask, Value qMin,
                                       Value qMax, Value kMin, Value kMax) {
  TileVisibility tile{boolLike(b, qMin, false), boolLike(b, qMin, false)};
  if (mask.causal) {
    // Every key after every query / some key after some query.
    tile.hidden = arith::CmpIOp::create(b, IntPredicate::sgt, kMin, qMax);
    tile.partial = arith::CmpIOp::create(b, IntPredicate::sgt, kMax, qMin);
  }
  if (mask.window) {
    Value w = intConstantLike(b, qMin, *mask.window);
    tile.hidden = orOf(b, tile.hidden, buildAtLeastApart(b, qMin, kMax, w));
    tile.partial = orOf(b, tile.partial, buildAtLeastApart(b, qMax, kMin, w));
    if (!mask.causal) {
      tile.hidden = orOf(b, tile.hidden, buildAtLeastApart(b, kMin, qMax, w));
      tile.partial = orOf(b, tile.partial, buildAtLeastApart(b, kMax, qMin, w));
    }
  }
  if (mask.chunk) {
    // The chunks of the queries span [cq0, cq1], those of the keys
    // [ck0, ck1]: every pair differs when the spans are disjoint; every pair
    // shares one chunk only when all four are one chunk.
    Value cq0 = buildChunkOf(b, qMin, *mask.chunk), cq1 = buildChunkOf(b, qMax, *mask.chunk);
    Value ck0 = buildChunkOf(b, kMin, *mask.chunk), ck1 = buildChunkOf(b, kMax, *mask.chunk);
    Value disjoint = orOf(b, arith::CmpIOp::create(b, IntPredicate::slt, ck1, cq0),
                          arith::CmpIOp::create(b, IntPredicate::sgt, ck0, cq1));
    Value oneChunk = arith::AndIOp::create(
        b, arith::AndIOp::create(b, arith::CmpIOp::create(b, IntPredicate::eq, cq0, cq1),
                                 arith::CmpIOp::create(b, IntPredicate::eq, ck0, ck1)),
        arith::CmpIOp::create(b, IntPredicate::eq, cq0, ck0));
    tile.hidden = orOf(b, tile.hidden, disjoint);
    Value split = arith::XOrIOp::create(b, oneChunk, boolLike(b, qMin, true));
    tile.partial = orOf(b, tile.partial, split);
  }
  return tile;
}

//===----------------------------------------------------------------------===//
// ALiBi
//===----------------------------------------------------------------------===//

Value pe::buildAlibiSlopes(ImplicitLocOpBuilder &b, int64_t heads, double maxBias,
                          Type element) {
  auto floatType = cast<FloatType>(element ? element : b.getF32Type());
  SmallVector<APFloat> values;
  for (double slope : formula::alibiSlopes(heads, maxBias)) {
    APFloat value(slope);
    bool losesInfo;
    value.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
    values.push_back(value);
  }
  auto type = RankedTensorType::get({heads}, floatType);
  return arith::ConstantOp::create(b, DenseElementsAttr::get(type, values));
}

Value pe::buildAddMask(ImplicitLocOpBuilder &b, Value score, Value maskEntry) {
  Value negInf = floatConstantLike(b, score, -std::numeric_limits<double>::infinity());
  Value hides = arith::CmpFOp::create(b, FloatPredicate::OEQ, maskEntry, negInf);
  return arith::SelectOp::create(b, hides, negInf,
                                 arith::AddFOp::create(b, score, maskEntry));
}

Value pe::buildAlibiScore(ImplicitLocOpBuilder &b, Value score, Value slope,
                          Value distance) {
  // -slope (q - k) = slope (k - q).
  return math::FmaOp::create(b, slope, distance, score);
}

Value pe::buildQueryTemperature(ImplicitLocOpBuilder &b, TemperatureAttr temperature,
                                Value position) {
  // floor((p + 1) / F) = floor(p / F) + (p mod F == F - 1), without p + 1.
  const int64_t f = temperature.getFloorScale();
  Value divisor = intConstantLike(b, position, f);
  Value quotient = arith::FloorDivSIOp::create(b, position, divisor);
  Value remainder = arith::SubIOp::create(b, position,
                                          arith::MulIOp::create(b, quotient, divisor));
  Value last = arith::CmpIOp::create(b, IntPredicate::eq, remainder,
                                     intConstantLike(b, position, f - 1));
  quotient = arith::AddIOp::create(
      b, quotient, arith::ExtUIOp::create(b, position.getType(), last));
  quotient = arith::MaxSIOp::create(b, quotient, intConstantLike(b, position, 0));
  Value x = arith::SIToFPOp::create(
      b, withElementType(position.getType(), b.getF32Type()), quotient);
  Value log = math::Log1pOp::create(b, x);
  Value a = floatConstantLike(b, log, temperature.getAttnScale().convertToDouble());
  return math::FmaOp::create(b, a, log, floatConstantLike(b, log, 1.0));
}

Value pe::buildSoftcapScore(ImplicitLocOpBuilder &b, Value score, double cap) {
  Value c = floatConstantLike(b, score, cap);
  return arith::MulFOp::create(
      b, c, math::TanhOp::create(b, arith::DivFOp::create(b, score, c)));
}

//===----------------------------------------------------------------------===//
// Online softmax
//===----------------------------------------------------------------------===//

Value pe::buildMathExp(ImplicitLocOpBuilder &b, Value x) {
  return math::ExpOp::create(b, x);
}

Value pe::buildRowMax(ImplicitLocOpBuilder &b, Value m, Value s) {
  // maxnum (one instruction) rather than IEEE maximum: a NaN score is left
  // out of the max but still reaches its row, through exp(NaN - base) = NaN
  // in the weights and the sum.
  return arith::MaxNumFOp::create(b, m, s);
}

Value pe::buildRunningRowMax(ImplicitLocOpBuilder &b, Value m, Value s) {
  // A NaN score compares false and leaves m, as maxnum does.
  Value greater = arith::CmpFOp::create(b, FloatPredicate::OGT, s, m);
  return arith::SelectOp::create(b, greater, s, m);
}

Value pe::buildExponentBase(ImplicitLocOpBuilder &b, Value rowMax) {
  Value none = arith::CmpFOp::create(
      b, FloatPredicate::OEQ, rowMax,
      floatConstantLike(b, rowMax, -std::numeric_limits<double>::infinity()));
  return arith::SelectOp::create(b, none, floatConstantLike(b, rowMax, 0.0), rowMax);
}

Value pe::buildExpOfDifference(ImplicitLocOpBuilder &b, Value x, Value base,
                               ExpBuilder exp) {
  return exp(b, arith::SubFOp::create(b, x, base));
}

Value pe::buildRescaledSum(ImplicitLocOpBuilder &b, Value l, Value alpha,
                           Value rowSum) {
  return math::FmaOp::create(b, l, alpha, rowSum);
}

Value pe::buildRescale(ImplicitLocOpBuilder &b, Value acc, Value alpha) {
  return arith::MulFOp::create(b, acc, alpha);
}

Value pe::buildWeightedSum(ImplicitLocOpBuilder &b, Value acc, Value p, Value v) {
  // The FMA where p != 0 (or NaN), acc elsewhere: an FMA merged into acc
  // under a mask.
  Value weighs = arith::CmpFOp::create(b, FloatPredicate::UNE, p,
                                       floatConstantLike(b, p, 0.0));
  return arith::SelectOp::create(b, weighs, math::FmaOp::create(b, p, v, acc), acc);
}

Value pe::buildWeightedTerm(ImplicitLocOpBuilder &b, Value p, Value v) {
  Value zero = floatConstantLike(b, p, 0.0);
  Value none = arith::CmpFOp::create(b, FloatPredicate::OEQ, p, zero);
  return arith::SelectOp::create(b, none, zero, arith::MulFOp::create(b, p, v));
}

Value pe::buildNormalize(ImplicitLocOpBuilder &b, Value acc, Value l) {
  Value zero = floatConstantLike(b, acc, 0.0);
  Value none = arith::CmpFOp::create(b, FloatPredicate::OEQ, l,
                                     floatConstantLike(b, l, 0.0));
  return arith::SelectOp::create(b, none, zero, arith::DivFOp::create(b, acc, l));
}
