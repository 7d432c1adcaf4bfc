//===- RaiseRope.cpp - rotary embeddings from generic IR to pe.rope -------===//
//
// A 4-d value R is a rotary embedding of a value X when, for every channel c
// of its last dim,
//
//   R[.., c] = m X[.., c] cos(p f_i) + s_c m X[.., c'] sin(p f_i)
//
// with c' the partner of c (half: c +- r/2; interleaved: c ^ 1), s_c = -1
// for the first member of the pair and +1 for the second, f_i the frequency
// of pair i, p the position of the row and m > 0 one magnitude; and
// R[.., c] = X[.., c] for the channels c >= r that pass through. The proof
// evaluates every channel of R symbolically (TensorExpr.h), so the spelling
// does not matter (slices + negation + concatenation, strided slices,
// reshapes to pairs, real/imaginary parts, a partner read by tensor.extract
// in one fused generic). The frequencies come from a constant table times
// positions (outer product, K = 1 matmul, broadcast multiply); the
// positions are an integer tensor or iota.
//
//===----------------------------------------------------------------------===//
#include "pe/Conversion/LinalgToPE/LinalgToPE.h"
#include "TensorExpr.h"

#include "pe/Dialect/PE/IR/PE.h"
#include "pe/Math/PositionalMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <algorithm>
#include <array>
#include <cmath>

using namespace mlir;
using namespace mlir::pe;
using namespace mlir::pe::raising;

namespace {
/// One term of a channel: `coefficient * X[.., source] * rest`.
struct ChannelTerm {
  int64_t source = -1;
  double coefficient = 0;
  ExprRef rest; // the cos or sin factor; null for a pass-through channel
};

/// How a position indexes a constant cos/sin table: a loop index i reads
/// row i + offset (a table sliced at a start position, Meta's LLaMA:
/// freqs_cis[start_pos : start_pos + S]); a gathered position p reads row
/// p, or p + wrapRows when p < 0 (IREE's gather of torch indexing).
struct TablePositions {
  int64_t offset = 0, wrapRows = 0;
  bool operator==(const TablePositions &o) const {
    return offset == o.offset && wrapRows == o.wrapRows;
  }
  bool operator!=(const TablePositions &o) const { return !(*this == o); }
};

/// What the proof establishes about R.
struct RopeProof {
  Value input;
  Layout layout = Layout::bhsd;
  RopeStyle style = RopeStyle::half;
  int64_t rotaryDim = 0;
  double magnitude = 1;
  std::vector<double> invFreq;
  ExprRef positions; // a Leaf of integers or an Iota
  /// How the positions index the table (TablePositions).
  TablePositions map;
  /// Whether channel 0 is a rotation's (X times one factor, plus its
  /// partner), and the first step of the proof that failed after that.
  bool shaped = false;
  std::string why;
};
} // namespace

/// Records why the proof stops here.
static LogicalResult fail(RopeProof &proof, const Twine &why) {
  proof.why = why.str();
  return failure();
}

/// The partner channel and the sign of its term for channel c.
static std::pair<int64_t, double> partner(RopeStyle style, int64_t r, int64_t c) {
  if (style == RopeStyle::half)
    return c < r / 2 ? std::pair{c + r / 2, -1.0} : std::pair{c - r / 2, 1.0};
  return c % 2 == 0 ? std::pair{c + 1, -1.0} : std::pair{c - 1, 1.0};
}

/// Replaces every non-constant leaf of `e` by its own evaluation (through
/// everything), to see how a table was computed.
static ExprRef deepen(Evaluator &ev, const ExprRef &e) {
  if (e->kind == ExprKind::Leaf) {
    if (constantValue(e) || e->value.getDefiningOp<arith::ConstantOp>())
      return e;
    ExprRef inner = ev.eval(e->value, e->point, Depth::Everything);
    return inner->kind == ExprKind::Leaf && inner->value == e->value ? inner
                                                                     : deepen(ev, inner);
  }
  if (e->operands.empty())
    return e;
  auto copy = std::make_shared<Expr>(*e);
  for (ExprRef &operand : copy->operands)
    operand = deepen(ev, operand);
  return copy;
}

/// The terms of channel c as (source channel of X, coefficient, rest), for
/// the X found in channel 0.
static FailureOr<SmallVector<ChannelTerm>> channelTerms(ArrayRef<Term> terms,
                                                        const Point &rows,
                                                        Value &x, Type type) {
  auto isX = [&](const ExprRef &f) {
    if (f->kind != ExprKind::Leaf || f->point.size() != rows.size() + 1 ||
        !f->point.back().isConst)
      return false;
    if (!x) {
      if (f->value.getType() != type ||
          !llvm::equal(ArrayRef(f->point).drop_back(), rows))
        return false;
      x = f->value;
    }
    return f->value == x && llvm::equal(ArrayRef(f->point).drop_back(), rows);
  };
  SmallVector<ChannelTerm> result;
  for (const Term &term : terms) {
    ChannelTerm channel{-1, term.coefficient, nullptr};
    for (const ExprRef &factor : term.factors) {
      ExprRef f = stripCasts(factor);
      if (channel.source < 0 && isX(f))
        channel.source = f->point.back().value;
      else if (!channel.rest)
        channel.rest = stripCasts(f);
      else
        return failure(); // more than one table factor
    }
    if (channel.source < 0)
      return failure();
    result.push_back(channel);
  }
  return result;
}

/// A position: an iota, or an element of an i32/i64 tensor.
static bool isPosition(const ExprRef &f) {
  if (f->kind == ExprKind::Iota)
    return true;
  Type element = f->kind == ExprKind::Leaf ? getElementTypeOrSelf(f->value.getType()) : Type();
  return element && (element.isSignlessInteger(64) || element.isSignlessInteger(32));
}

/// The rotation of one channel: `m cos(p' f)` and `m sin(p' f)` for the
/// position p' its table row stands for.
struct Rotation {
  double frequency = 0, magnitude = 1;
  ExprRef position;
  TablePositions map;
};

/// The frequency and position of an angle `k * p * table[i]` (or `k * p`).
static FailureOr<std::pair<double, ExprRef>> splitAngle(Evaluator &ev,
                                                        const ExprRef &angle) {
  SmallVector<Term> terms = expand(deepen(ev, angle));
  if (terms.size() != 1)
    return failure();
  double frequency = terms[0].coefficient;
  ExprRef position;
  for (const ExprRef &factor : terms[0].factors) {
    ExprRef f = stripCasts(factor);
    std::optional<double> value = constantValue(f);
    // A number computed from constants alone (JAX computes inv_freq as
    // 1 / theta^(2i/r) in the program), evaluated as the IR rounds it.
    if (!value && onlyAtoms(f, {}))
      value = evaluateAt(factor, {});
    if (value)
      frequency *= *value;
    else if (!position && isPosition(f))
      position = f;
    else
      return failure();
  }
  if (!position)
    return failure();
  return std::pair{frequency, position};
}

/// cos and sin computed in the IR: cos(p f) and sin(p f) of one angle.
static FailureOr<Rotation> computedRotation(Evaluator &ev, const ExprRef &cos,
                                            const ExprRef &sin) {
  if (cos->kind != ExprKind::Cos || sin->kind != ExprKind::Sin)
    return failure();
  auto cosAngle = splitAngle(ev, cos->operands[0]);
  auto sinAngle = splitAngle(ev, sin->operands[0]);
  if (failed(cosAngle) || failed(sinAngle) || cosAngle->first != sinAngle->first ||
      !equal(cosAngle->second, sinAngle->second))
    return failure();
  return Rotation{cosAngle->first, 1.0, cosAngle->second, TablePositions()};
}

/// A column of a constant table read at one row: the row's index is the
/// position (a loop index: the table sliced to the sequence; a computed
/// index: the table gathered by positions), every other index a constant.
/// A loop index may read a static slice of the table (its row is the loop
/// index plus the slice's first row), a gathered position may be wrapped as
/// torch indexes (`map`).
struct TableColumn {
  Value table;
  SmallVector<int64_t> index; // the constant indices; the row's is ignored
  int64_t rowDim = -1;
  ExprRef position;
  TablePositions map;
};

/// Whether `e` is the integer constant `value`.
static bool isInteger(const ExprRef &e, int64_t value) {
  return e->kind == ExprKind::Constant && e->type && e->type.isSignlessIntOrIndex() &&
         e->integer == value;
}

/// p of `p < 0 ? p + rows : p` (a negative index counts from the end, as
/// IREE's gather spells torch's indexing), or null.
static ExprRef unwrapNegativeIndex(const ExprRef &e, int64_t rows) {
  if (!isOpaque<arith::SelectOp>(e) || e->operands.size() != 3)
    return nullptr;
  const ExprRef &cond = e->operands[0], &up = e->operands[1], &p = e->operands[2];
  if (!isOpaque<arith::CmpIOp>(cond) || cond->cmpi != arith::CmpIPredicate::slt ||
      !equal(cond->operands[0], p) || !isInteger(cond->operands[1], 0))
    return nullptr;
  if ((up->kind != ExprKind::Add && !isOpaque<arith::AddIOp>(up)) || up->operands.size() != 2)
    return nullptr;
  const ExprRef &a = up->operands[0], &b = up->operands[1];
  bool added = (equal(a, p) && isInteger(b, rows)) || (equal(b, p) && isInteger(a, rows));
  return added ? p : nullptr;
}

/// The first index of each dim when `table` is a static, unit-stride slice
/// (no dim dropped) of a constant, and that constant; else `table` and 0s.
static std::pair<Value, SmallVector<int64_t>> sliceOfConstant(Value table) {
  auto slice = table.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || !slice.hasUnitStride() || slice.getDroppedDims().any() ||
      llvm::any_of(slice.getStaticOffsets(), ShapedType::isDynamic) ||
      !slice.getSource().getDefiningOp<arith::ConstantOp>())
    return {table, SmallVector<int64_t>(cast<ShapedType>(table.getType()).getRank(), 0)};
  return {slice.getSource(), SmallVector<int64_t>(slice.getStaticOffsets())};
}

static std::optional<TableColumn> tableColumn(const ExprRef &f) {
  if (f->kind != ExprKind::Leaf && f->kind != ExprKind::Gather)
    return std::nullopt;
  auto [table, offsets] = f->kind == ExprKind::Leaf
                              ? sliceOfConstant(f->value)
                              : std::pair{f->value, SmallVector<int64_t>(f->operands.size(), 0)};
  if (!table.getDefiningOp<arith::ConstantOp>())
    return std::nullopt;
  TableColumn column{table, {}, -1, nullptr, {}};
  ArrayRef<int64_t> shape = cast<RankedTensorType>(table.getType()).getShape();
  size_t rank = f->kind == ExprKind::Leaf ? f->point.size() : f->operands.size();
  for (size_t n = 0; n < rank; ++n) {
    ExprRef index;
    int64_t wrapRows = 0;
    if (f->kind == ExprKind::Gather) {
      index = stripCasts(f->operands[n]);
      if (ExprRef p = unwrapNegativeIndex(index, shape[n])) {
        index = stripCasts(p);
        wrapRows = shape[n];
      }
    } else if (f->point[n].isConst)
      index = constant(double(f->point[n].value + offsets[n]));
    else if (f->point[n].div == 1 && f->point[n].mod == 0)
      index = node(ExprKind::Iota, {}, f->point[n].atom);
    else
      return std::nullopt;
    if (index->kind == ExprKind::Constant) {
      column.index.push_back(int64_t(index->number));
    } else if (column.rowDim < 0 && isPosition(index)) {
      column.rowDim = n;
      column.position = index;
      column.map = {offsets[n], wrapRows};
      column.index.push_back(0);
    } else {
      return std::nullopt;
    }
  }
  if (column.rowDim < 0)
    return std::nullopt;
  return column;
}

/// cos and sin read from constant tables at the position's row: the
/// frequency and magnitude fitted to the columns (formula::fitRotationColumn)
/// at every row up to 4096, then at 4096 rows spread over the rest.
static FailureOr<Rotation> tableRotation(const ExprRef &cos, const ExprRef &sin) {
  std::optional<TableColumn> c = tableColumn(cos), s = tableColumn(sin);
  if (!c || !s || !equal(c->position, s->position) || c->map != s->map)
    return failure();
  auto rowsOf = [](const TableColumn &t) {
    return cast<RankedTensorType>(t.table.getType()).getShape()[t.rowDim];
  };
  int64_t rows = std::min(rowsOf(*c), rowsOf(*s));
  if (ShapedType::isDynamic(rows) || rows < 2)
    return failure();
  auto read = [](const TableColumn &t, int64_t row) {
    Point point;
    for (auto [n, i] : llvm::enumerate(t.index))
      point.push_back(Index::constant(int64_t(n) == t.rowDim ? row : i));
    return constantValue(leaf(t.table, point));
  };
  std::vector<std::array<double, 3>> samples;
  int64_t stride = std::max<int64_t>(1, (rows - 4096 + 4095) / 4096);
  for (int64_t row = 0; row < rows; row += row < 4096 ? 1 : stride) {
    std::optional<double> cv = read(*c, row), sv = read(*s, row);
    if (!cv || !sv)
      return failure();
    samples.push_back({double(row), *cv, *sv});
  }
  auto fit = formula::fitRotationColumn(samples);
  if (!fit)
    return failure();
  // Row r of the table is position r: the fit is over the whole table, and
  // the positions operand is the row each position reads (TablePositions).
  return Rotation{fit->first, fit->second, c->position, c->map};
}

static LogicalResult proveRope(Value root, RopeProof &proof) {
  auto type = dyn_cast<RankedTensorType>(root.getType());
  if (!type || type.getRank() != 4 || !isa<FloatType>(type.getElementType()))
    return failure();
  int64_t d = type.getShape().back();
  if (ShapedType::isDynamic(d) || d < 2 || d % 2)
    return failure();

  Evaluator ev;
  Point rows;
  for (int64_t size : type.getShape().drop_back())
    rows.push_back(size == 1 ? Index::constant(0) : Index::variable(ev.newAtom(size)));
  SmallVector<SmallVector<ChannelTerm>> channels;
  for (int64_t c = 0; c < d; ++c) {
    Point point = rows;
    point.push_back(Index::constant(c));
    SmallVector<Term> terms = expand(ev.eval(root, point, Depth::Elementwise));
    auto parsed = channelTerms(terms, rows, proof.input, type);
    if (failed(parsed))
      return proof.shaped ? fail(proof, "channel " + Twine(c) +
                                            " is not a sum of products of the input's "
                                            "channels with one factor each")
                          : failure();
    channels.push_back(*parsed);
    if (c == 0) {
      proof.shaped = parsed->size() == 2 && llvm::all_of(*parsed, [](const ChannelTerm &t) {
                       return t.rest != nullptr;
                     });
      if (!proof.shaped)
        return failure();
    }
  }

  // Rotated channels first, then pass-through ones.
  int64_t r = 0;
  while (r < d && channels[r].size() == 2)
    ++r;
  if (r < 2 || r % 2)
    return fail(proof, "the rotated channels are not an even prefix of the last dim");
  for (int64_t c = r; c < d; ++c)
    if (channels[c].size() != 1 || channels[c][0].source != c ||
        channels[c][0].coefficient != 1.0 || channels[c][0].rest)
      return fail(proof, "channel " + Twine(c) + ", after the rotated ones, is not the "
                                                   "input's channel passed through");
  const ChannelTerm &first = channels[0][0].source == 0 ? channels[0][1] : channels[0][0];
  proof.style = first.source == r / 2 ? RopeStyle::half : RopeStyle::interleaved;
  proof.rotaryDim = r;

  // Pairing, signs, one magnitude, cos and sin of one angle per pair.
  proof.invFreq.assign(r / 2, 0.0);
  for (int64_t c = 0; c < r; ++c) {
    auto [p, sign] = partner(proof.style, r, c);
    const ChannelTerm *self = nullptr, *other = nullptr;
    for (const ChannelTerm &t : channels[c])
      (t.source == c ? self : other) = &t;
    if (!self || !other || other->source != p || !self->rest || !other->rest ||
        self->coefficient != sign * other->coefficient)
      return fail(proof, "channel " + Twine(c) + " is not paired with channel " + Twine(p) +
                             " with the rotation's sign (" +
                             (proof.style == RopeStyle::half ? "half" : "interleaved") +
                             " pairs)");
    ExprRef cos = stripCasts(deepen(ev, self->rest));
    ExprRef sin = stripCasts(deepen(ev, other->rest));
    FailureOr<Rotation> rotation = computedRotation(ev, cos, sin);
    if (failed(rotation))
      rotation = tableRotation(cos, sin);
    if (failed(rotation))
      return fail(proof, "the factors of channel " + Twine(c) +
                             " are not cos and sin of one angle position x frequency "
                             "(computed, or constant tables read at the position)");
    double m = self->coefficient * rotation->magnitude;
    if (c == 0)
      proof.magnitude = m;
    if (!(m > 0) || std::abs(m - proof.magnitude) > 1e-6 * proof.magnitude)
      return fail(proof, "the channels do not share one magnitude > 0");
    if (!proof.positions) {
      proof.positions = rotation->position;
      proof.map = rotation->map;
    }
    if (!equal(proof.positions, rotation->position) || proof.map != rotation->map)
      return fail(proof, "the channels turn by different positions");
    // Both members of a pair turn by the same frequency.
    int64_t pair = proof.style == RopeStyle::half ? c % (r / 2) : c / 2;
    double f = rotation->frequency;
    if (c == pair || (proof.style == RopeStyle::interleaved && c % 2 == 0))
      proof.invFreq[pair] = f;
    else if (std::abs(proof.invFreq[pair] - f) > 1e-6 * std::abs(f))
      return fail(proof, "the two channels of pair " + Twine(pair) +
                             " turn by different frequencies");
  }

  // The positions index the sequence dim of R: dim 2 (bhsd) or 1 (bshd).
  const ExprRef &pos = proof.positions;
  Index seq = pos->kind == ExprKind::Iota ? Index::variable(pos->atom) : pos->point.back();
  if (seq == rows[2])
    proof.layout = Layout::bhsd;
  else if (seq == rows[1])
    proof.layout = Layout::bshd;
  else
    return fail(proof, "the positions index neither dim 1 (bshd) nor dim 2 (bhsd)");
  // [B, S] positions read at (b, s), or a [1, S] row shared by the batch.
  if (pos->kind == ExprKind::Leaf) {
    int64_t rank = pos->point.size();
    auto posType = cast<RankedTensorType>(pos->value.getType());
    if (!ev.coversShape(pos->value, pos->point) || rank > 2 ||
        (rank == 2 && pos->point[0].isConst ? posType.getShape()[0] != 1
                                             : rank == 2 && pos->point[0] != rows[0]))
      return fail(proof, "the positions are not an [S] or [B, S] tensor read whole at "
                         "(batch, sequence)");
  }
  return success();
}

/// The #pe.rope of a fitted configuration.
static RopeAttr ropeAttr(MLIRContext *context, const formula::RopeConfig &config,
                         RopeStyle style) {
  RopeScalingAttrInterface scaling;
  switch (config.kind) {
  case formula::ScalingKind::Linear:
    scaling = LinearScalingAttr::get(context, APFloat(config.factor));
    break;
  case formula::ScalingKind::Llama3:
    scaling = Llama3ScalingAttr::get(context, APFloat(config.factor),
                                     APFloat(config.lowFreqFactor),
                                     APFloat(config.highFreqFactor),
                                     config.originalMaxPositions);
    break;
  case formula::ScalingKind::LongRope: {
    std::optional<APFloat> attentionFactor;
    if (config.attentionFactor)
      attentionFactor = APFloat(*config.attentionFactor);
    auto factors = DenseF64ArrayAttr::get(context, config.shortFactor);
    scaling = LongRopeScalingAttr::get(context, factors, factors,
                                       config.originalMaxPositions, APFloat(1.0),
                                       attentionFactor, LongRopeSelect::short_);
    break;
  }
  default:
    break;
  }
  return RopeAttr::get(context, APFloat(config.theta), config.rotaryDim, style, scaling);
}

/// `positions < 0 ? positions + rows : positions`, elementwise.
static Value wrapNegative(PatternRewriter &rewriter, Location loc, Value positions,
                          int64_t rows) {
  auto type = cast<RankedTensorType>(positions.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, positions);
  Value init = tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
  auto map = linalg::MapOp::create(
      rewriter, loc, ValueRange{positions}, init,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Type element = type.getElementType();
        Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(element, 0));
        Value n = arith::ConstantOp::create(b, l, b.getIntegerAttr(element, rows));
        Value negative = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, args[0], zero);
        Value up = arith::AddIOp::create(b, l, args[0], n);
        linalg::YieldOp::create(b, l, ValueRange{arith::SelectOp::create(b, l, negative, up,
                                                                          args[0])});
      });
  return map.getResult()[0];
}

/// The positions operand of pe.rope: the integer tensor ([S] or [B, S]; a
/// [1, S] one shared by a batch is collapsed; negative ones wrapped where
/// the table gather wraps them), or offset + 0..S-1 for an iota.
static Value positionsOperand(PatternRewriter &rewriter, Location loc,
                              const RopeProof &proof, RankedTensorType type) {
  const ExprRef &pos = proof.positions;
  int64_t seqDim = proof.layout == Layout::bhsd ? 2 : 1;
  if (pos->kind == ExprKind::Iota) {
    int64_t s = type.getShape()[seqDim];
    if (ShapedType::isDynamic(s))
      return {};
    SmallVector<int64_t> iota(s);
    for (int64_t i = 0; i < s; ++i)
      iota[i] = proof.map.offset + i;
    auto iotaType = RankedTensorType::get({s}, rewriter.getI64Type());
    return arith::ConstantOp::create(rewriter, loc,
                                     DenseIntElementsAttr::get(iotaType, ArrayRef(iota)));
  }
  auto posType = cast<RankedTensorType>(pos->value.getType());
  Value positions = pos->value;
  if (proof.map.wrapRows)
    positions = wrapNegative(rewriter, loc, positions, proof.map.wrapRows);
  if (posType.getRank() == 2 && posType.getShape()[0] == 1 && type.getShape()[0] != 1)
    return tensor::CollapseShapeOp::create(rewriter, loc, positions,
                                           ArrayRef<ReassociationIndices>{{0, 1}});
  return positions;
}

namespace {
struct RaiseRope : RewritePattern {
  RaiseRope(MLIRContext *context, RaisingNotes *notes)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/2, context), notes(notes) {}

  RaisingNotes *notes;

  LogicalResult leftAlone(PatternRewriter &rewriter, Operation *op, const Twine &why) const {
    if (notes)
      notes->notRaised[op] = ("not raised as pe.rope: " + why).str();
    return rewriter.notifyMatchFailure(op, why);
  }

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (op->hasAttr(kRaiseRefusedAttr))
      return failure(); // verify refused this rewrite
    // Roots: the op producing the rotated tensor (an add, a fused generic,
    // or the concatenation/reshape that reassembles the pairs).
    if (op->getNumResults() != 1 ||
        !isa<linalg::LinalgOp, tensor::ConcatOp, tensor::CollapseShapeOp,
             tensor::InsertSliceOp>(op) ||
        isa<linalg::TransposeOp, linalg::BroadcastOp, linalg::FillOp>(op))
      return failure();
    Value root = op->getResult(0);
    RopeProof proof;
    if (failed(proveRope(root, proof)))
      return proof.shaped ? leftAlone(rewriter, op, proof.why)
                          : rewriter.notifyMatchFailure(op, "not a rotation");
    std::optional<formula::RopeConfig> config =
        formula::fitRopeConfig(proof.invFreq, proof.magnitude);
    if (!config)
      return leftAlone(rewriter, op, "the frequencies are not finite and > 0");
    auto type = cast<RankedTensorType>(root.getType());
    Value positions = positionsOperand(rewriter, op->getLoc(), proof, type);
    if (!positions)
      return leftAlone(rewriter, op, "iota positions of a dynamic length");
    RopeAttr rope = ropeAttr(op->getContext(), *config, proof.style);
    if (notes)
      notes->notRaised.remove_if([&](auto &entry) { return entry.first == op; });
    rewriter.replaceOpWithNewOp<RopeOp>(op, proof.input, positions, rope, proof.layout);
    return success();
  }
};
} // namespace

void mlir::pe::populateRaiseRopePatterns(RewritePatternSet &patterns, RaisingNotes *notes) {
  patterns.add<RaiseRope>(patterns.getContext(), notes);
}
