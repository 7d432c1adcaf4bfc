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
  SmallVector<double> cosValues, sinValues;
  cosValues.reserve(positions->size() * half);
  sinValues.reserve(positions->size() * half);
  for (int64_t p : *positions)
    for (double f : invFreq) {
      double angle = formula::reducedAngle(p, f);
      cosValues.push_back(m * std::cos(angle));
      sinValues.push_back(m * std::sin(angle));
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

/// Whether every value of the integer tensor `positions` fits in 32 bits: a
/// narrower element type, a sign or zero extension of one, or constants in
/// range. The sum of two such positions is exact in i64.
static bool hasNarrowPositions(Value positions) {
  auto type = cast<RankedTensorType>(positions.getType());
  if (type.getElementTypeBitWidth() <= 32)
    return true;
  if (auto ext = positions.getDefiningOp<arith::ExtSIOp>())
    return getElementTypeOrSelf(ext.getIn().getType()).getIntOrFloatBitWidth() <= 32;
  if (auto ext = positions.getDefiningOp<arith::ExtUIOp>())
    return getElementTypeOrSelf(ext.getIn().getType()).getIntOrFloatBitWidth() < 32;
  DenseIntElementsAttr values;
  if (!matchPattern(positions, m_Constant(&values)))
    return false;
  return llvm::all_of(values.getValues<APInt>(),
                      [](const APInt &p) { return p.isSignedIntN(32); });
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
/// The sum is formed in i64 and only where it is exact (positions that fit
/// in 32 bits); other chains stay as they are.
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
    if (!hasNarrowPositions(inner.getPositions()) ||
        !hasNarrowPositions(op.getPositions()))
      return rewriter.notifyMatchFailure(op, "the sum of positions could overflow");
    Location loc = op.getLoc();
    Value sum = arith::AddIOp::create(rewriter, loc,
                                      toI64Positions(rewriter, loc, inner.getPositions()),
                                      toI64Positions(rewriter, loc, op.getPositions()));
    rewriter.replaceOpWithNewOp<RopeOp>(op, inner.getInput(), sum, op.getRope(),
                                        op.getLayout());
    return success();
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
  const int64_t dim = type.getShape().back();
  std::optional<SmallVector<int64_t>> positions =
      constantPositions(adaptor.getPositions(), dim);
  if (!positions || !type.hasStaticShape())
    return {};
  std::vector<double> freqs = formula::sinusoidalFrequencies(
      dim, getBase().convertToDouble(),
      getSpacing() == SinusoidalSpacing::fairseq);
  const int64_t half = dim / 2;
  const bool interleaved = getLayout() == SinusoidalLayout::interleaved;
  SmallVector<double> values(positions->size() * dim);
  for (auto [row, p] : llvm::enumerate(*positions)) {
    double *e = values.data() + row * dim;
    for (int64_t k = 0; k < half; ++k) {
      double angle = formula::reducedAngle(p, freqs[k]);
      e[interleaved ? 2 * k : k] = std::sin(angle);
      e[interleaved ? 2 * k + 1 : half + k] = std::cos(angle);
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
