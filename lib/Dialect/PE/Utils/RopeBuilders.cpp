//===- RopeBuilders.cpp - RoPE as IR --------------------------------------===//
#include "pe/Dialect/PE/Utils/RopeBuilders.h"

#include "pe/Dialect/PE/Utils/ValueUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::pe;
using utils::IteratorType;

using formula::kPi;
using formula::kTwoPiHi;
using formula::kTwoPiLo;

namespace {
Value f64Constant(ImplicitLocOpBuilder &b, double value) {
  return arith::ConstantOp::create(b, b.getF64FloatAttr(value));
}

Value denseF64(ImplicitLocOpBuilder &b, ArrayRef<double> values) {
  auto type = RankedTensorType::get({int64_t(values.size())}, b.getF64Type());
  return arith::ConstantOp::create(b, DenseElementsAttr::get(type, values));
}

} // namespace

Value pe::buildReducedAngle(ImplicitLocOpBuilder &b, Value position,
                            Value invFreq) {
  // Integer positions, or float timesteps (exact in f64 too).
  Value p = position;
  if (!isa<FloatType>(position.getType()))
    p = arith::SIToFPOp::create(b, b.getF64Type(), position);
  else if (!position.getType().isF64())
    p = arith::ExtFOp::create(b, b.getF64Type(), position);
  // hi + lo = p f exactly.
  Value hi = arith::MulFOp::create(b, p, invFreq);
  Value lo = math::FmaOp::create(b, p, invFreq, arith::NegFOp::create(b, hi));
  // k = round(hi / 2pi); a = (hi - k 2pi_hi) - k 2pi_lo + lo.
  Value k = math::RoundEvenOp::create(
      b, arith::DivFOp::create(b, hi, f64Constant(b, kTwoPiHi)));
  Value negK = arith::NegFOp::create(b, k);
  Value a = math::FmaOp::create(b, negK, f64Constant(b, kTwoPiHi), hi);
  a = arith::SubFOp::create(
      b, a, arith::MulFOp::create(b, k, f64Constant(b, kTwoPiLo)));
  a = arith::AddFOp::create(b, a, lo);
  // Into [-pi, pi].
  Value above = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, a,
                                      f64Constant(b, kPi));
  Value below = arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, a,
                                      f64Constant(b, -kPi));
  a = arith::SelectOp::create(
      b, above, arith::SubFOp::create(b, a, f64Constant(b, kTwoPiHi)), a);
  a = arith::SelectOp::create(
      b, below, arith::AddFOp::create(b, a, f64Constant(b, kTwoPiHi)), a);
  return arith::TruncFOp::create(b, b.getF32Type(), a);
}

std::pair<Value, Value> pe::buildRopeTableEntry(ImplicitLocOpBuilder &b,
                                                RopeAttr rope, Value position,
                                                Value invFreq) {
  Value angle = buildReducedAngle(b, position, invFreq);
  Value cos = math::CosOp::create(b, angle);
  Value sin = math::SinOp::create(b, angle);
  const double m = formula::attentionFactor(rope.getConfig());
  if (m != 1.0) {
    Value factor = floatConstantLike(b, angle, m);
    cos = arith::MulFOp::create(b, cos, factor);
    sin = arith::MulFOp::create(b, sin, factor);
  }
  return {cos, sin};
}

std::pair<Value, Value> pe::buildPairRotation(ImplicitLocOpBuilder &b, Value x0,
                                              Value x1, Value cos, Value sin) {
  Value x1Sin = arith::MulFOp::create(b, x1, sin);
  Value y0 = math::FmaOp::create(b, x0, cos, arith::NegFOp::create(b, x1Sin));
  Value y1 = math::FmaOp::create(b, x1, cos, arith::MulFOp::create(b, x0, sin));
  return {y0, y1};
}

std::pair<int64_t, int64_t> pe::getPairChannels(const RotatedChannels &rotation,
                                                int64_t pair) {
  const int64_t o = rotation.offset;
  if (rotation.style == RopeStyle::interleaved)
    return {o + 2 * pair, o + 2 * pair + 1};
  return {o + pair, o + pair + rotation.rotaryDim / 2};
}

std::pair<Value, Value> pe::buildPairChannels(ImplicitLocOpBuilder &b,
                                              const RotatedChannels &rotation, Value pair) {
  auto plus = [&](Value v, int64_t c) -> Value {
    return c ? arith::AddIOp::create(b, v, intConstantLike(b, v, c)).getResult() : v;
  };
  if (rotation.style == RopeStyle::interleaved) {
    Value first = plus(arith::MulIOp::create(b, pair, intConstantLike(b, pair, 2)),
                       rotation.offset);
    return {first, plus(first, 1)};
  }
  return {plus(pair, rotation.offset), plus(pair, rotation.offset + rotation.rotaryDim / 2)};
}

Value pe::buildZip(ImplicitLocOpBuilder &b, Value a, Value c) {
  int64_t lanes = cast<VectorType>(a.getType()).getNumElements();
  SmallVector<int64_t> mask;
  for (int64_t l = 0; l < lanes; ++l) {
    mask.push_back(l);
    mask.push_back(l + lanes);
  }
  return vector::ShuffleOp::create(b, a, c, mask);
}

void pe::buildVectorPairRotation(ImplicitLocOpBuilder &b, Value cos, Value sin,
                                 Value firstPair, const RotatedChannels &rotation,
                                 function_ref<Value(Value, int64_t)> load,
                                 function_ref<void(Value, Value)> store) {
  const int64_t lanes = cast<VectorType>(cos.getType()).getNumElements();
  const RopeStyle style = rotation.style;
  auto [c0, c1] = buildPairChannels(b, rotation, firstPair);
  // Loads and shuffles one statement each: the IR is in the same order
  // whatever order a compiler evaluates call arguments in.
  if (style == RopeStyle::half) {
    Value x0 = load(c0, lanes);
    Value x1 = load(c1, lanes);
    auto [y0, y1] = buildPairRotation(b, x0, x1, cos, sin);
    store(y0, c0);
    store(y1, c1);
    return;
  }
  SmallVector<int64_t> even, odd;
  for (int64_t l = 0; l < lanes; ++l) {
    even.push_back(2 * l);
    odd.push_back(2 * l + 1);
  }
  Value x = load(c0, 2 * lanes);
  Value x0 = vector::ShuffleOp::create(b, x, x, even);
  Value x1 = vector::ShuffleOp::create(b, x, x, odd);
  auto [y0, y1] = buildPairRotation(b, x0, x1, cos, sin);
  Value y = buildZip(b, y0, y1);
  for (int64_t part = 0; part < 2; ++part)
    store(vector::ExtractStridedSliceOp::create(b, y, ArrayRef<int64_t>{part * lanes},
                                                ArrayRef<int64_t>{lanes},
                                                ArrayRef<int64_t>{1}),
          part == 0 ? c0
                    : arith::AddIOp::create(b, c0, intConstantLike(b, c0, lanes)).getResult());
}

Value pe::buildSequenceLength(ImplicitLocOpBuilder &b, RopeAttr rope,
                              Value positions) {
  if (!formula::dependsOnSequenceLength(rope.getConfig()))
    return nullptr;
  // m = max(positions), INT64_MIN for none.
  auto type = cast<RankedTensorType>(positions.getType());
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  Value init = tensor::EmptyOp::create(b, ArrayRef<int64_t>{}, b.getI64Type());
  Value lowest = arith::ConstantOp::create(
      b, b.getI64IntegerAttr(std::numeric_limits<int64_t>::min()));
  init = linalg::FillOp::create(b, ValueRange{lowest}, ValueRange{init}).getResult(0);
  auto reduce = linalg::GenericOp::create(
      b, init.getType(), ValueRange{positions}, ValueRange{init},
      SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx),
                             AffineMap::get(rank, 0, ctx)},
      SmallVector<IteratorType>(rank, IteratorType::reduction),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        ImplicitLocOpBuilder n(nloc, nb);
        linalg::YieldOp::create(
            n, ValueRange{arith::MaxSIOp::create(n, extendToI64(n, args[0]), args[1])});
      });
  Value max = tensor::ExtractOp::create(b, reduce.getResult(0), ValueRange{});
  // m + 1, saturating: a position of INT64_MAX has no successor.
  Value highest = arith::ConstantOp::create(
      b, b.getI64IntegerAttr(std::numeric_limits<int64_t>::max()));
  Value atMax = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, max, highest);
  Value next = arith::AddIOp::create(b, max, intConstantLike(b, max, 1));
  return arith::SelectOp::create(b, atMax, max, next);
}

/// Dynamic NTK at run time: theta' = theta c, c = (s L / L_max - (s - 1))^(r/(r-2))
/// with L = max(seq_len, L_max), so inv_freq[i] = base[i] exp(-(2i/r) ln c).
static Value buildDynamicNtkFrequencies(ImplicitLocOpBuilder &b,
                                        const formula::RopeConfig &config,
                                        Value seqLen) {
  const double r = double(config.rotaryDim), s = config.factor,
               lMax = double(config.originalMaxPositions);
  Value l = arith::SIToFPOp::create(b, b.getF64Type(), seqLen);
  l = arith::MaximumFOp::create(b, l, f64Constant(b, lMax));
  Value ratio = arith::MulFOp::create(b, l, f64Constant(b, s / lMax));
  ratio = arith::SubFOp::create(b, ratio, f64Constant(b, s - 1.0));
  Value lnC = arith::MulFOp::create(b, math::LogOp::create(b, ratio),
                                    f64Constant(b, r / (r - 2.0)));
  formula::RopeConfig unscaled = config;
  unscaled.kind = formula::ScalingKind::None;
  std::vector<double> exponents(config.rotaryDim / 2);
  for (int64_t i = 0; i < int64_t(exponents.size()); ++i)
    exponents[i] = -2.0 * double(i) / r;
  Value base = denseF64(b, formula::inverseFrequencies(unscaled));
  Value exps = denseF64(b, exponents);
  MLIRContext *ctx = b.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  Value init = tensor::EmptyOp::create(b, ArrayRef<int64_t>{int64_t(exponents.size())},
                                       b.getF64Type());
  return linalg::GenericOp::create(
             b, init.getType(), ValueRange{base, exps}, ValueRange{init},
             SmallVector<AffineMap>{id, id, id},
             SmallVector<IteratorType>{IteratorType::parallel},
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               ImplicitLocOpBuilder n(nloc, nb);
               Value scale =
                   math::ExpOp::create(n, arith::MulFOp::create(n, args[1], lnC));
               linalg::YieldOp::create(
                   n, ValueRange{arith::MulFOp::create(n, args[0], scale)});
             })
      .getResult(0);
}

Value pe::buildInverseFrequencies(ImplicitLocOpBuilder &b, RopeAttr rope,
                                  Value seqLen) {
  formula::RopeConfig config = rope.getConfig();
  if (!seqLen || !formula::dependsOnSequenceLength(config))
    return denseF64(b, formula::inverseFrequencies(config));
  if (config.kind == formula::ScalingKind::DynamicNtk)
    return buildDynamicNtkFrequencies(b, config, seqLen);
  // LongRoPE: the long factors when seq_len > L0, else the short ones.
  formula::RopeConfig shortConfig = config, longConfig = config;
  shortConfig.longRopeChoice = formula::LongRopeChoice::Short;
  longConfig.longRopeChoice = formula::LongRopeChoice::Long;
  Value isLong = arith::CmpIOp::create(
      b, arith::CmpIPredicate::sgt, seqLen,
      intConstantLike(b, seqLen, config.originalMaxPositions));
  return arith::SelectOp::create(
      b, isLong, denseF64(b, formula::inverseFrequencies(longConfig)),
      denseF64(b, formula::inverseFrequencies(shortConfig)));
}

std::pair<Value, Value> pe::buildRopeTables(ImplicitLocOpBuilder &b,
                                            RopeAttr rope, Value positions,
                                            Type element) {
  Value invFreq =
      buildInverseFrequencies(b, rope, buildSequenceLength(b, rope, positions));
  MLIRContext *ctx = b.getContext();
  const bool multiStream = rope.isMultiStream();
  // The tables' leading dims: the positions' without a stream dimension.
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, b.getLoc(), positions);
  if (multiStream)
    sizes.erase(sizes.end() - 2);
  const int64_t rank = int64_t(sizes.size()) + 1;
  sizes.push_back(b.getIndexAttr(rope.getRotaryDim() / 2));
  Value init = tensor::EmptyOp::create(b, sizes, element);
  SmallVector<int64_t> positionLoops;
  for (int64_t i = 0; i < rank - 1; ++i)
    positionLoops.push_back(i);
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap perPair = loopsMap(ctx, rank, {rank - 1});
  // One stream: the position of the table row is an input. Several: pair i
  // reads the row's position in its stream, positions[.., stream[i], s].
  SmallVector<Value> inputs = {positions, invFreq};
  SmallVector<AffineMap> maps = {loopsMap(ctx, rank, positionLoops), perPair, id, id};
  if (multiStream) {
    std::vector<int64_t> streams = formula::pairStreams(rope.getConfig());
    auto streamType = RankedTensorType::get({int64_t(streams.size())}, b.getIndexType());
    SmallVector<APInt> values;
    for (int64_t stream : streams)
      values.push_back(APInt(64, stream));
    inputs[0] = arith::ConstantOp::create(b, DenseElementsAttr::get(streamType, values));
    maps[0] = perPair;
  }
  auto tables = linalg::GenericOp::create(
      b, TypeRange{init.getType(), init.getType()}, inputs, ValueRange{init, init}, maps,
      SmallVector<IteratorType>(rank, IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        ImplicitLocOpBuilder n(nloc, nb);
        Value position = args[0];
        if (multiStream) {
          // positions[b?, stream, s] for the loops (b?, s, i).
          SmallVector<Value> index;
          for (int64_t i = 0; i < rank - 1; ++i)
            index.push_back(linalg::IndexOp::create(n, i));
          index.insert(index.end() - 1, args[0]);
          position = tensor::ExtractOp::create(n, positions, index);
        }
        auto [cos, sin] = buildRopeTableEntry(n, rope, position, args[1]);
        linalg::YieldOp::create(
            n, ValueRange{convertFloat(n, cos, element), convertFloat(n, sin, element)});
      });
  return {tables.getResult(0), tables.getResult(1)};
}
