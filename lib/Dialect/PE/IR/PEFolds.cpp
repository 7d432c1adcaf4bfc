//===- PEFolds.cpp - folds and canonicalizations of the pe dialect --------===//
//
// Constants are computed by pe/Math in double precision and rounded once to
// the result element type.
//
//===----------------------------------------------------------------------===//
#include "pe/Dialect/PE/IR/PE.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::pe;

/// Tables larger than this stay runtime computations: a fold would bloat the
/// IR for no gain.
static constexpr int64_t kMaxFoldedElements = 1 << 16;

/// A dense float constant of `type`, each value rounded once from double.
static DenseElementsAttr denseFloats(ShapedType type, ArrayRef<double> values) {
  const llvm::fltSemantics &semantics =
      cast<FloatType>(type.getElementType()).getFloatSemantics();
  SmallVector<APFloat> floats;
  floats.reserve(values.size());
  for (double v : values) {
    APFloat f(v);
    bool losesInfo;
    f.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
    floats.push_back(f);
  }
  return DenseElementsAttr::get(type, floats);
}

/// The values of constant integer positions, if they are constant and small
/// enough to fold tables of `perPosition` elements each.
static std::optional<SmallVector<int64_t>>
constantPositions(Attribute attr, int64_t perPosition) {
  auto dense = dyn_cast_if_present<DenseIntElementsAttr>(attr);
  // Compared by division: the product may overflow.
  if (!dense || perPosition > kMaxFoldedElements ||
      dense.getNumElements() > kMaxFoldedElements / std::max<int64_t>(perPosition, 1))
    return std::nullopt;
  SmallVector<int64_t> positions;
  for (const APInt &p : dense.getValues<APInt>())
    positions.push_back(p.getSExtValue());
  return positions;
}

/// The sequence length that dynamic scalings see (0 for no positions).
static int64_t sequenceLength(ArrayRef<int64_t> positions) {
  if (positions.empty())
    return 0;
  return formula::sequenceLength(
      *std::max_element(positions.begin(), positions.end()));
}

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

OpFoldResult RopeFrequenciesOp::fold(FoldAdaptor adaptor) {
  if (getType().getNumElements() > kMaxFoldedElements)
    return {};
  std::optional<int64_t> seqLen;
  formula::RopeConfig config = getRope().getConfig();
  if (getSeqLen() && formula::dependsOnSequenceLength(config)) {
    auto constant = dyn_cast_if_present<IntegerAttr>(adaptor.getSeqLen());
    if (!constant)
      return {};
    seqLen = constant.getInt();
  }
  return denseFloats(getType(), formula::inverseFrequencies(config, seqLen));
}

LogicalResult RopeTablesOp::fold(FoldAdaptor adaptor,
                                 SmallVectorImpl<OpFoldResult> &results) {
  formula::RopeConfig config = getRope().getConfig();
  const int64_t half = config.rotaryDim / 2;
  std::optional<SmallVector<int64_t>> positions =
      constantPositions(adaptor.getPositions(), half);
  if (!positions || !getCos().getType().hasStaticShape())
    return failure();
  std::vector<double> invFreq =
      formula::inverseFrequencies(config, sequenceLength(*positions));
  const double m = formula::attentionFactor(config);
  // Row-major positions [.., A, S]: pair i of token (b, s) reads
  // positions[b, stream[i], s]; one stream is A = 1.
  const std::vector<int64_t> streams = formula::pairStreams(config);
  const int64_t numStreams = getRope().getNumStreams();
  const int64_t length = getPositions().getType().getShape().back();
  const int64_t tokens = int64_t(positions->size()) / numStreams;
  SmallVector<double> cosValues, sinValues;
  cosValues.reserve(tokens * half);
  sinValues.reserve(tokens * half);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t i = 0; i < half; ++i) {
      int64_t row = t / length, column = t % length;
      int64_t p = (*positions)[(row * numStreams + streams[i]) * length + column];
      auto [cos, sin] = formula::rotationTableEntry(p, invFreq[i], m);
      cosValues.push_back(cos);
      sinValues.push_back(sin);
    }
  results.push_back(denseFloats(getCos().getType(), cosValues));
  results.push_back(denseFloats(getSin().getType(), sinValues));
  return success();
}

OpFoldResult RopeOp::fold(FoldAdaptor adaptor) {
  // Position 0 is the identity rotation unless a magnitude factor scales it.
  auto positions = dyn_cast_if_present<DenseIntElementsAttr>(adaptor.getPositions());
  if (!positions || formula::attentionFactor(getRope().getConfig()) != 1.0)
    return {};
  if (!llvm::all_of(positions.getValues<APInt>(),
                    [](const APInt &p) { return p.isZero(); }))
    return {};
  return getInput();
}

/// `positions` as (p, k) with positions = k * p, p not itself such a
/// multiple: k = 1 unless `positions` multiplies by an integer splat.
static std::pair<Value, int64_t> multipleOf(Value positions) {
  // Only i64 products: a narrower one may have wrapped.
  auto product = positions.getDefiningOp<arith::MulIOp>();
  if (product && !getElementTypeOrSelf(positions.getType()).isInteger(64))
    return {positions, 1};
  SplatElementsAttr factor;
  if (!product || !matchPattern(product.getRhs(), m_Constant(&factor)))
    return {positions, 1};
  return {product.getLhs(), factor.getSplatValue<APInt>().getSExtValue()};
}

/// Bounds [lo, hi] on every element of the integer tensor `positions`, from
/// how it is computed: the range of a narrower element type or of what was
/// extended, sums (of composed rotations) and constants. std::nullopt when
/// nothing is known or the bounds leave int64. Iterative: a chain of
/// thousands of composed rotations sums thousands of positions.
static std::optional<std::pair<int64_t, int64_t>> positionBounds(Value positions) {
  using Bounds = std::pair<int64_t, int64_t>;
  auto leaf = [](Value v) -> std::optional<Bounds> {
    unsigned width = getElementTypeOrSelf(v.getType()).getIntOrFloatBitWidth();
    if (auto ext = v.getDefiningOp<arith::ExtSIOp>())
      width = getElementTypeOrSelf(ext.getIn().getType()).getIntOrFloatBitWidth();
    else if (auto ext = v.getDefiningOp<arith::ExtUIOp>())
      width = getElementTypeOrSelf(ext.getIn().getType()).getIntOrFloatBitWidth() + 1;
    if (width < 64)
      return Bounds{-(int64_t(1) << (width - 1)), (int64_t(1) << (width - 1)) - 1};
    DenseIntElementsAttr values;
    if (!matchPattern(v, m_Constant(&values)) || values.empty())
      return std::nullopt;
    Bounds bounds{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
    for (const APInt &p : values.getValues<APInt>()) {
      bounds.first = std::min(bounds.first, p.getSExtValue());
      bounds.second = std::max(bounds.second, p.getSExtValue());
    }
    return bounds;
  };
  Bounds total{0, 0};
  SmallVector<Value> pending = {positions};
  while (!pending.empty()) {
    Value v = pending.pop_back_val();
    // Only i64 sums are looked through: a narrower one may have wrapped, so
    // its type bounds it.
    auto sum = v.getDefiningOp<arith::AddIOp>();
    if (sum && getElementTypeOrSelf(v.getType()).isInteger(64)) {
      pending.append({sum.getLhs(), sum.getRhs()});
      continue;
    }
    if (auto [base, times] = multipleOf(v); times != 1) {
      std::optional<Bounds> bounds = leaf(base);
      std::optional<int64_t> lo, hi;
      if (bounds) {
        lo = llvm::checkedMul(bounds->first, times);
        hi = llvm::checkedMul(bounds->second, times);
      }
      if (!lo || !hi)
        return std::nullopt;
      std::optional<int64_t> newLo = llvm::checkedAdd(total.first, std::min(*lo, *hi));
      std::optional<int64_t> newHi = llvm::checkedAdd(total.second, std::max(*lo, *hi));
      if (!newLo || !newHi)
        return std::nullopt;
      total = {*newLo, *newHi};
      continue;
    }
    std::optional<Bounds> bounds = leaf(v);
    if (!bounds)
      return std::nullopt;
    std::optional<int64_t> lo = llvm::checkedAdd(total.first, bounds->first);
    std::optional<int64_t> hi = llvm::checkedAdd(total.second, bounds->second);
    if (!lo || !hi)
      return std::nullopt;
    total = {*lo, *hi};
  }
  return total;
}

/// Whether p1 + p2 is exact in i64 for every element.
static bool sumFitsInt64(Value p1, Value p2) {
  std::optional<std::pair<int64_t, int64_t>> a = positionBounds(p1), b = positionBounds(p2);
  return a && b && llvm::checkedAdd(a->first, b->first) &&
         llvm::checkedAdd(a->second, b->second);
}

/// `positions` as i64.
static Value toI64Positions(PatternRewriter &rewriter, Location loc, Value positions) {
  auto type = cast<RankedTensorType>(positions.getType());
  if (type.getElementType().isInteger(64))
    return positions;
  return arith::ExtSIOp::create(rewriter, loc, type.clone(rewriter.getI64Type()),
                                positions);
}

namespace {
/// rope(rope(x, p1), p2) -> rope(x, p1 + p2): rotations by angles p1 f and
/// p2 f compose to (p1 + p2) f when the frequencies f do not depend on the
/// positions and no magnitude factor is applied (it would be applied twice).
/// The sum is formed in i64 and only where it is provably exact (positions
/// bounded by their type, extensions, constants and earlier sums); other
/// chains stay as they are.
struct ComposeRotations : OpRewritePattern<RopeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RopeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<RopeOp>();
    if (!inner || !inner->hasOneUse())
      return rewriter.notifyMatchFailure(op, "input is not a single-use rope");
    if (inner.getRope() != op.getRope() || inner.getLayout() != op.getLayout())
      return rewriter.notifyMatchFailure(op, "different rope configuration");
    if (inner.getCos() || op.getCos())
      return rewriter.notifyMatchFailure(op, "rotation by given tables");
    if (inner.getPositions().getType().getShape() !=
        op.getPositions().getType().getShape())
      return rewriter.notifyMatchFailure(op, "positions of different shapes");
    formula::RopeConfig config = op.getRope().getConfig();
    if (formula::dependsOnSequenceLength(config) ||
        formula::attentionFactor(config) != 1.0)
      return rewriter.notifyMatchFailure(op, "angles do not add");
    if (!sumFitsInt64(inner.getPositions(), op.getPositions()))
      return rewriter.notifyMatchFailure(op, "the sum of positions could overflow");
    rewriter.replaceOpWithNewOp<RopeOp>(
        op, inner.getInput(),
        addPositions(rewriter, op.getLoc(), inner.getPositions(), op.getPositions()),
        op.getRope(), op.getLayout());
    return success();
  }

private:
  /// p1 + p2 in i64; k1 p + k2 p as (k1 + k2) p, so that a chain of n
  /// rotations by one p stays one product n p.
  static Value addPositions(PatternRewriter &rewriter, Location loc, Value p1, Value p2) {
    auto [base1, k1] = multipleOf(p1);
    auto [base2, k2] = multipleOf(p2);
    base1 = toI64Base(base1);
    base2 = toI64Base(base2);
    if (base1 == base2 && llvm::checkedAdd(k1, k2)) {
      Value base = toI64Positions(rewriter, loc, base1);
      auto type = cast<RankedTensorType>(base.getType());
      Value factor = arith::ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(type, rewriter.getI64IntegerAttr(k1 + k2)));
      return arith::MulIOp::create(rewriter, loc, base, factor);
    }
    return arith::AddIOp::create(rewriter, loc, toI64Positions(rewriter, loc, p1),
                                 toI64Positions(rewriter, loc, p2));
  }

  /// The positions an i64 value was extended from, else the value.
  static Value toI64Base(Value positions) {
    if (auto ext = positions.getDefiningOp<arith::ExtSIOp>())
      return ext.getIn();
    return positions;
  }
};
} // namespace

void RopeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<ComposeRotations>(context);
}

//===----------------------------------------------------------------------===//
// Absolute encodings and ALiBi
//===----------------------------------------------------------------------===//

OpFoldResult SinusoidalOp::fold(FoldAdaptor adaptor) {
  RankedTensorType type = getType();
  formula::SinusoidalTable table = getTable();
  std::optional<SmallVector<int64_t>> positions =
      constantPositions(adaptor.getPositions(), table.dim);
  if (!positions || !type.hasStaticShape())
    return {};
  std::vector<double> freqs = table.frequencies();
  std::optional<int64_t> padding = getPaddingIdx();
  // Zero-initialized: the pad rows and an odd table's zero channel.
  SmallVector<double> values(positions->size() * table.dim, 0.0);
  for (auto [row, p] : llvm::enumerate(*positions)) {
    if (p == padding)
      continue;
    double *e = values.data() + row * table.dim;
    for (int64_t k = 0; k < table.sinCount(); ++k) {
      auto [cos, sin] = formula::rotationTableEntry(p, freqs[k]);
      e[table.sinChannel(k)] = sin;
      if (k < table.half())
        e[table.cosChannel(k)] = cos;
    }
  }
  return denseFloats(type, values);
}

OpFoldResult AlibiSlopesOp::fold(FoldAdaptor) {
  if (getType().getNumElements() > kMaxFoldedElements)
    return {};
  return denseFloats(getType(),
                     formula::alibiSlopes(getType().getDimSize(0),
                                       getMaxBias().convertToDouble()));
}
