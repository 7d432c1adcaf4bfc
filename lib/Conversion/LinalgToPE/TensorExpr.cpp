//===- TensorExpr.cpp - tensor elements as symbolic expressions -----------===//
#include "TensorExpr.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::pe::raising;

//===----------------------------------------------------------------------===//
// Building and comparing
//===----------------------------------------------------------------------===//

ExprRef pe::raising::leaf(Value value, const Point &point) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::Leaf;
  e->value = value;
  e->point = point;
  return e;
}

ExprRef pe::raising::constant(double number) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::Constant;
  e->number = number;
  return e;
}

ExprRef pe::raising::integerConstant(int64_t value, Type type) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::Constant;
  e->integer = value;
  e->number = double(value);
  e->type = type;
  return e;
}

static bool isIntegerConstant(const ExprRef &e) {
  return e->kind == ExprKind::Constant && e->type && e->type.isIntOrIndex();
}

ExprRef pe::raising::node(ExprKind kind, ArrayRef<ExprRef> operands, int atom) {
  // Folds that keep the normal forms small: x + 0, max(-inf, x).
  if (kind == ExprKind::Max && operands[0]->kind == ExprKind::Constant &&
      operands[0]->number <= -std::numeric_limits<float>::max())
    return operands[1];
  if (kind == ExprKind::Add && operands[0]->kind == ExprKind::Constant &&
      operands[0]->number == 0)
    return operands[1];
  // Float constants fold here; integer ones by the ops' own folders (they
  // wrap), in the evaluation of the body.
  if (!operands.empty() && llvm::all_of(operands, [](const ExprRef &o) {
        return o->kind == ExprKind::Constant && !isIntegerConstant(o);
      })) {
    switch (kind) {
    case ExprKind::Add:
      return constant(operands[0]->number + operands[1]->number);
    case ExprKind::Mul:
      return constant(operands[0]->number * operands[1]->number);
    case ExprKind::Neg:
      return constant(-operands[0]->number);
    default:
      break;
    }
  }
  auto e = std::make_shared<Expr>();
  e->kind = kind;
  e->operands.assign(operands.begin(), operands.end());
  e->atom = atom;
  return e;
}

/// Scalar op `op` applied to `operands`, compared by its name, predicate and
/// result type.
static ExprRef opaque(Operation *op, ArrayRef<ExprRef> operands) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::Opaque;
  e->op = op->getName();
  e->type = op->getResult(0).getType();
  if (auto cmp = dyn_cast<arith::CmpIOp>(op))
    e->cmpi = cmp.getPredicate();
  if (auto cmp = dyn_cast<arith::CmpFOp>(op))
    e->cmpf = cmp.getPredicate();
  e->operands.assign(operands.begin(), operands.end());
  return e;
}

/// The signed range of integer type `type` (index: 64 bits).
static std::pair<__int128, __int128> typeRange(Type type) {
  unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
  width = std::min(width, 64u);
  __int128 half = __int128(1) << (width - 1);
  return {-half, half - 1};
}

/// Bounds of the integer `e`: loop indices by their extents, constants,
/// value-keeping casts and non-wrapping arithmetic by their operands, any
/// other value by its type.
static std::pair<__int128, __int128> integerRange(const Evaluator &ev, const ExprRef &e,
                                                  Type type) {
  switch (e->kind) {
  case ExprKind::Constant:
    if (isIntegerConstant(e))
      return {e->integer, e->integer};
    break;
  case ExprKind::Iota:
  case ExprKind::IndexOf: {
    int64_t extent = ev.extent(e->kind == ExprKind::Iota ? Index::variable(e->atom) : e->point[0]);
    if (extent > 0)
      return {0, extent - 1};
    break;
  }
  case ExprKind::Cast:
    if (e->type && e->type.isIntOrIndex()) // extsi, widening index_cast
      return integerRange(ev, e->operands[0], e->fromType);
    break;
  case ExprKind::Add:
  case ExprKind::Mul:
  case ExprKind::Neg: {
    if (e->type) // may wrap
      break;
    auto a = integerRange(ev, e->operands[0], type);
    if (e->kind == ExprKind::Neg)
      return {-a.second, -a.first};
    auto b = integerRange(ev, e->operands[1], type);
    if (e->kind == ExprKind::Add)
      return {a.first + b.first, a.second + b.second};
    __int128 products[] = {a.first * b.first, a.first * b.second, a.second * b.first,
                           a.second * b.second};
    return {*std::min_element(products, products + 4), *std::max_element(products, products + 4)};
  }
  default:
    break;
  }
  return typeRange(e->type && e->type.isIntOrIndex() ? e->type : type);
}

/// `e`, a new integer Add, Mul or Neg node of `type`: as it is (exact
/// arithmetic, which proofs may expand) when no value of its operands can
/// overflow `type`, else marked as wrapping to `type` (opaque to proofs,
/// evaluated modulo 2^width).
static ExprRef wrapsTo(const Evaluator &ev, ExprRef e, Type type) {
  if (!type.isIntOrIndex() ||
      (e->kind != ExprKind::Add && e->kind != ExprKind::Mul && e->kind != ExprKind::Neg) ||
      e->type)
    return e;
  // Operands within 64 bits each: their sum or product fits in 128.
  auto [low, high] = integerRange(ev, e, type);
  auto [min, max] = typeRange(type);
  if (low >= min && high <= max)
    return e;
  auto copy = std::make_shared<Expr>(*e);
  copy->type = type;
  return copy;
}

static bool binds(ExprKind kind) {
  return kind == ExprKind::Sum || kind == ExprKind::MaxOver;
}

ExprRef pe::raising::renameAtom(const ExprRef &e, int from, int to) {
  if (!mentionsAtom(e, from))
    return e;
  auto copy = std::make_shared<Expr>(*e);
  for (Index &index : copy->point)
    if (!index.isConst && index.atom == from)
      index.atom = to;
  if (copy->atom == from)
    copy->atom = to;
  for (ExprRef &operand : copy->operands)
    operand = renameAtom(operand, from, to);
  return copy;
}

bool pe::raising::mentionsAtom(const ExprRef &e, int atom) {
  if (e->atom == atom && e->kind != ExprKind::Constant)
    return true;
  for (const Index &index : e->point)
    if (!index.isConst && index.atom == atom)
      return true;
  for (const ExprRef &operand : e->operands)
    if (mentionsAtom(operand, atom))
      return true;
  return false;
}

bool pe::raising::equal(const ExprRef &a, const ExprRef &b) {
  if (a == b)
    return true;
  if (a->kind != b->kind || a->operands.size() != b->operands.size())
    return false;
  switch (a->kind) {
  case ExprKind::Leaf:
    return a->value == b->value && a->point == b->point;
  case ExprKind::Constant:
    if (isIntegerConstant(a) && isIntegerConstant(b))
      return a->integer == b->integer;
    return a->number == b->number ||
           (std::isnan(a->number) && std::isnan(b->number));
  case ExprKind::Iota:
    return a->atom == b->atom;
  case ExprKind::IndexOf:
    return a->point == b->point;
  case ExprKind::Cast: // value-keeping: only the rounding type matters
    if (a->type != b->type)
      return false;
    break;
  case ExprKind::Convert:
    if (a->type != b->type || a->fromType != b->fromType || a->op != b->op)
      return false;
    break;
  case ExprKind::Gather:
    if (a->value != b->value)
      return false;
    break;
  case ExprKind::Opaque:
    if (a->op != b->op || a->cmpi != b->cmpi || a->cmpf != b->cmpf || a->type != b->type)
      return false;
    break;
  default:
    if (a->type != b->type) // integer arithmetic wraps to its type
      return false;
    break;
  }
  if (binds(a->kind)) // bound atoms compare up to renaming
    return equal(a->operands[0], renameAtom(b->operands[0], b->atom, a->atom));
  if (a->atom != b->atom)
    return false;
  for (auto [x, y] : llvm::zip(a->operands, b->operands))
    if (!equal(x, y))
      return false;
  return true;
}

ExprRef pe::raising::stripCasts(ExprRef e) {
  while (e->kind == ExprKind::Cast)
    e = e->operands[0];
  return e;
}

/// Whether two factor lists are equal as multisets.
static bool sameFactors(ArrayRef<ExprRef> a, ArrayRef<ExprRef> b) {
  if (a.size() != b.size())
    return false;
  SmallVector<bool> used(b.size(), false);
  for (const ExprRef &x : a) {
    bool found = false;
    for (auto [i, y] : llvm::enumerate(b))
      if (!used[i] && equal(x, y)) {
        used[i] = found = true;
        break;
      }
    if (!found)
      return false;
  }
  return true;
}

bool pe::raising::sameSum(ArrayRef<Term> a, ArrayRef<Term> b) {
  if (a.size() != b.size())
    return false;
  for (const Term &t : a)
    if (!llvm::any_of(b, [&](const Term &u) {
          return t.coefficient == u.coefficient && sameFactors(t.factors, u.factors);
        }))
      return false;
  return true;
}

SmallVector<Term> pe::raising::expand(const ExprRef &e) {
  SmallVector<Term> terms;
  // Integer arithmetic wraps at its width: a factor, not a polynomial.
  if (e->type && e->type.isIntOrIndex() &&
      (e->kind == ExprKind::Add || e->kind == ExprKind::Mul || e->kind == ExprKind::Neg))
    return {Term{1, {e}}};
  switch (e->kind) {
  case ExprKind::Constant:
    terms.push_back(Term{e->number, {}});
    break;
  case ExprKind::Cast:
    return expand(e->operands[0]);
  case ExprKind::Neg:
    terms = expand(e->operands[0]);
    for (Term &t : terms)
      t.coefficient = -t.coefficient;
    return terms;
  case ExprKind::Add:
    terms = expand(e->operands[0]);
    llvm::append_range(terms, expand(e->operands[1]));
    break;
  case ExprKind::Mul: {
    SmallVector<Term> lhs = expand(e->operands[0]), rhs = expand(e->operands[1]);
    if (lhs.size() * rhs.size() > 4096)
      return {Term{1, {e}}};
    for (const Term &x : lhs)
      for (const Term &y : rhs) {
        Term t{x.coefficient * y.coefficient, x.factors};
        llvm::append_range(t.factors, y.factors);
        terms.push_back(std::move(t));
      }
    break;
  }
  default:
    return {Term{1, {e}}};
  }
  // Merge terms with the same factors; drop those that cancel.
  SmallVector<Term> merged;
  for (Term &t : terms) {
    auto it = llvm::find_if(merged, [&](const Term &m) {
      return sameFactors(m.factors, t.factors);
    });
    if (it == merged.end())
      merged.push_back(std::move(t));
    else
      it->coefficient += t.coefficient;
  }
  llvm::erase_if(merged, [](const Term &t) { return t.coefficient == 0; });
  return merged;
}

//===----------------------------------------------------------------------===//
// Index arithmetic
//===----------------------------------------------------------------------===//

int Evaluator::newAtom(int64_t extent) {
  extents.push_back(extent);
  return int(extents.size()) - 1;
}

int64_t Evaluator::extent(const Index &index) const {
  if (index.isConst)
    return 1;
  int64_t full = extents[index.atom];
  if (full < 0)
    return index.mod ? index.mod : -1;
  int64_t range = (full + index.div - 1) / index.div;
  return index.mod ? std::min(range, index.mod) : range;
}

bool Evaluator::coversShape(Value value, const Point &point) const {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && coversShape(type.getShape(), point);
}

bool Evaluator::coversShape(ArrayRef<int64_t> shape, const Point &point) const {
  if (shape.size() != point.size())
    return false;
  for (auto [size, index] : llvm::zip(shape, point))
    if (ShapedType::isDynamic(size) || size != extent(index))
      return false;
  return true;
}

Index Evaluator::divide(const Index &index, int64_t n) const {
  if (index.isConst)
    return Index::constant(index.value / n);
  Index result = index;
  result.div *= n;
  result.mod = index.mod ? index.mod / n : 0;
  return normalize(result);
}

Index Evaluator::normalize(Index index) const {
  if (index.isConst)
    return index;
  int64_t full = extents[index.atom];
  if (index.mod && full >= 0 && (full + index.div - 1) / index.div <= index.mod)
    index.mod = 0;
  if (extent(index) == 1)
    return Index::constant(0);
  return index;
}

std::optional<Point> Evaluator::delinearize(const Index &index,
                                            ArrayRef<int64_t> sizes) {
  Point parts(sizes.size(), Index::constant(0));
  if (index.isConst) {
    int64_t rest = index.value;
    for (int64_t t = int64_t(sizes.size()) - 1; t >= 0; --t) {
      if (sizes[t] <= 0)
        return std::nullopt;
      parts[t] = Index::constant(rest % sizes[t]);
      rest /= sizes[t];
    }
    return parts;
  }
  int64_t inner = 1;
  for (int64_t t = int64_t(sizes.size()) - 1; t >= 0; --t) {
    if (sizes[t] <= 0)
      return std::nullopt;
    Index part = index;
    part.div = index.div * inner;
    if (t > 0)
      part.mod = sizes[t];
    else if (index.mod) {
      if (index.mod % inner)
        return std::nullopt;
      part.mod = index.mod / inner;
    }
    parts[t] = normalize(part);
    inner *= sizes[t];
  }
  return parts;
}

std::optional<Index> Evaluator::linearize(ArrayRef<Index> parts,
                                          ArrayRef<int64_t> sizes) {
  // Drop unit parts; constants merge with constants only.
  SmallVector<std::pair<Index, int64_t>> kept;
  for (auto [part, size] : llvm::zip(parts, sizes))
    if (size != 1)
      kept.push_back({part, size});
  if (kept.empty())
    return Index::constant(0);
  if (llvm::all_of(kept, [](auto &p) { return p.first.isConst; })) {
    int64_t value = 0;
    for (auto &[part, size] : kept)
      value = value * size + part.value;
    return Index::constant(value);
  }
  // Consecutive pieces of one atom: part t = (a / d_t) mod s_t with
  // d_t = d_{t+1} s_{t+1}.
  Index merged = kept.back().first;
  int64_t span = kept.back().second;
  for (int64_t t = int64_t(kept.size()) - 2; t >= 0; --t) {
    const Index &outer = kept[t].first;
    const Index &inner = kept[t + 1].first;
    if (outer.isConst || inner.isConst || outer.atom != merged.atom ||
        outer.div != inner.div * kept[t + 1].second ||
        inner.mod != kept[t + 1].second)
      return std::nullopt;
    span *= kept[t].second;
    merged.mod = outer.mod ? span : 0;
  }
  return normalize(merged);
}

std::optional<Point> Evaluator::freshPoint(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return std::nullopt;
  Point point;
  for (int64_t size : type.getShape())
    point.push_back(size == 1 ? Index::constant(0) : Index::variable(newAtom(size)));
  return point;
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

namespace {
/// The evaluation of one linalg op's body at one iteration point.
struct BodyEvaluation {
  BodyEvaluation(Evaluator &evaluator, linalg::LinalgOp op, Point iteration,
                 Depth operandDepth, Value accumulator)
      : evaluator(evaluator), op(op), iteration(std::move(iteration)),
        operandDepth(operandDepth), accumulator(accumulator) {}

  Evaluator &evaluator;
  linalg::LinalgOp op;
  Point iteration;
  Depth operandDepth;
  /// The accumulator of a reduction (the output block argument).
  Value accumulator;
  DenseMap<Value, ExprRef> known;

  ExprRef eval(Value v);
  std::optional<Index> toIndex(const ExprRef &e) {
    if (e->kind == ExprKind::Constant && e->number == std::floor(e->number))
      return Index::constant(int64_t(e->number));
    if (e->kind == ExprKind::Iota)
      return Index::variable(e->atom);
    return std::nullopt;
  }
};
} // namespace

/// The point of an operand read through indexing map `map` at `iteration`.
static std::optional<Point> applyMap(AffineMap map, ArrayRef<Index> iteration) {
  Point point;
  for (AffineExpr result : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(result))
      point.push_back(iteration[dim.getPosition()]);
    else if (auto c = dyn_cast<AffineConstantExpr>(result))
      point.push_back(Index::constant(c.getValue()));
    else
      return std::nullopt;
  }
  return point;
}

/// The value of scalar op `op` when every operand is a number (index
/// arithmetic, comparisons and selects of a fused body), by the op's folder:
/// a number, or the operand the op forwards.
static ExprRef foldConstants(Operation *op, ArrayRef<ExprRef> operands) {
  if (op->getNumResults() != 1 || operands.empty())
    return nullptr;
  SmallVector<Attribute> attrs;
  for (auto [value, e] : llvm::zip(op->getOperands(), operands)) {
    if (e->kind != ExprKind::Constant) {
      attrs.push_back(nullptr);
      continue;
    }
    Type type = value.getType();
    if (isa<FloatType>(type))
      attrs.push_back(FloatAttr::get(type, e->number));
    else if (type.isIntOrIndex())
      attrs.push_back(IntegerAttr::get(type, isIntegerConstant(e) ? e->integer
                                                                  : int64_t(e->number)));
    else
      attrs.push_back(nullptr);
  }
  if (llvm::all_of(attrs, [](Attribute a) { return !a; }))
    return nullptr;
  SmallVector<OpFoldResult> results;
  if (failed(op->fold(attrs, results)) || results.size() != 1)
    return nullptr;
  if (auto forwarded = dyn_cast<Value>(results[0])) {
    for (auto [value, e] : llvm::zip(op->getOperands(), operands))
      if (value == forwarded)
        return e;
    return nullptr;
  }
  auto attr = dyn_cast<Attribute>(results[0]);
  if (auto f = dyn_cast_if_present<FloatAttr>(attr))
    return constant(f.getValueAsDouble());
  if (auto i = dyn_cast_if_present<IntegerAttr>(attr); i && i.getValue().getBitWidth() <= 64)
    return integerConstant(i.getValue().getSExtValue(), i.getType());
  return nullptr;
}

/// The bit width of an integer or index type (index: 64); 0 otherwise.
static unsigned intWidth(Type type) {
  if (type.isIndex())
    return 64;
  if (auto i = dyn_cast<IntegerType>(type))
    return i.getWidth();
  return 0;
}

/// Whether `cast` keeps every value of its operand (floats up to the
/// rounding of the result type), so that proofs may look through it.
static bool keepsValue(Operation *cast) {
  if (isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::ExtSIOp>(cast))
    return true;
  if (isa<arith::IndexCastOp>(cast))
    return intWidth(cast->getResult(0).getType()) >= intWidth(cast->getOperand(0).getType());
  return false;
}

/// The node of conversion op `cast`: Cast when it keeps values, else Convert.
static ExprRef conversion(Operation *cast, ExprRef operand) {
  auto e = std::make_shared<Expr>();
  e->kind = keepsValue(cast) ? ExprKind::Cast : ExprKind::Convert;
  e->type = cast->getResult(0).getType();
  e->fromType = cast->getOperand(0).getType();
  e->op = cast->getName();
  e->operands = {std::move(operand)};
  return e;
}

ExprRef BodyEvaluation::eval(Value v) {
  if (auto it = known.find(v); it != known.end())
    return it->second;
  ExprRef result;
  if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() == op.getBlock()) {
    OpOperand *operand = op->getOpOperands().begin() + arg.getArgNumber();
    if (v == accumulator)
      result = leaf(v, {});
    else if (auto point = applyMap(op.getMatchingIndexingMap(operand), iteration))
      result = evaluator.eval(operand->get(), *point, operandDepth);
    else
      result = leaf(operand->get(), {});
  } else if (!v.getDefiningOp() ||
             !op->isProperAncestor(v.getDefiningOp())) {
    // A scalar defined above the op; a tensor there is only read by
    // tensor.extract (below), anything else sees it as an opaque leaf.
    result = isa<ShapedType>(v.getType()) ? leaf(v, {}) : evaluator.eval(v, {}, operandDepth);
  } else {
    Operation *def = v.getDefiningOp();
    auto operands = [&] {
      SmallVector<ExprRef> list;
      for (Value operand : def->getOperands())
        list.push_back(eval(operand));
      return list;
    };
    Type type = def->getNumResults() == 1 ? def->getResult(0).getType() : Type();
    // Every operand a number: the op's own folder (exact integer semantics).
    if (!isa<arith::ConstantOp, linalg::IndexOp, tensor::ExtractOp>(def) && type &&
        def->getNumOperands() > 0)
      result = foldConstants(def, operands());
    if (!result)
    result =
        TypeSwitch<Operation *, ExprRef>(def)
            .Case<arith::AddFOp, arith::AddIOp>([&](auto) {
              return wrapsTo(evaluator, node(ExprKind::Add, operands()), type);
            })
            .Case<arith::SubFOp, arith::SubIOp>([&](auto) {
              auto o = operands();
              ExprRef negated = wrapsTo(evaluator, node(ExprKind::Neg, {o[1]}), type);
              return wrapsTo(evaluator, node(ExprKind::Add, {o[0], negated}), type);
            })
            .Case<arith::MulFOp, arith::MulIOp>([&](auto) {
              return wrapsTo(evaluator, node(ExprKind::Mul, operands()), type);
            })
            .Case<arith::DivFOp>([&](auto) {
              auto o = operands();
              ExprRef divisor = o[1]->kind == ExprKind::Constant
                                    ? constant(1.0 / o[1]->number)
                                    : node(ExprKind::Recip, {o[1]});
              return node(ExprKind::Mul, {o[0], divisor});
            })
            .Case<arith::NegFOp>([&](auto) { return node(ExprKind::Neg, operands()); })
            .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](auto) {
              return node(ExprKind::Max, operands());
            })
            .Case<math::ExpOp>([&](auto) { return node(ExprKind::Exp, operands()); })
            .Case<math::CosOp>([&](auto) { return node(ExprKind::Cos, operands()); })
            .Case<math::SinOp>([&](auto) { return node(ExprKind::Sin, operands()); })
            .Case<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::ExtSIOp,
                  arith::IndexCastOp, arith::TruncIOp, arith::ExtUIOp, arith::UIToFPOp,
                  arith::FPToSIOp, arith::FPToUIOp, arith::IndexCastUIOp>(
                [&](Operation *cast) { return conversion(cast, operands()[0]); })
            .Case<arith::ConstantOp>([&](arith::ConstantOp c) {
              return evaluator.eval(c, {}, operandDepth);
            })
            .Case<linalg::IndexOp>([&](linalg::IndexOp index) -> ExprRef {
              const Index &i = iteration[index.getDim()];
              if (i.isConst)
                return constant(double(i.value));
              if (i.div == 1 && i.mod == 0)
                return node(ExprKind::Iota, {}, i.atom);
              auto e = std::make_shared<Expr>();
              e->kind = ExprKind::IndexOf;
              e->point = {i};
              return ExprRef(e);
            })
            .Case<tensor::ExtractOp>([&](tensor::ExtractOp extract) -> ExprRef {
              // A read at loop indices, or a gather at computed ones.
              Point point;
              SmallVector<ExprRef> indices;
              for (Value index : extract.getIndices()) {
                indices.push_back(eval(index));
                if (std::optional<Index> i = toIndex(indices.back()))
                  point.push_back(*i);
              }
              if (point.size() == indices.size())
                return evaluator.eval(extract.getTensor(), point, operandDepth);
              auto gather = std::make_shared<Expr>();
              gather->kind = ExprKind::Gather;
              gather->value = extract.getTensor();
              gather->operands.assign(indices.begin(), indices.end());
              return ExprRef(gather);
            })
            .Default([&](Operation *other) { return opaque(other, operands()); });
  }
  known[v] = result;
  return result;
}

/// Whether `op` reads every input in loop order (broadcasts allowed): it
/// moves no data between dims.
static bool keepsDimOrder(linalg::LinalgOp op) {
  for (AffineMap map : op.getIndexingMapsArray()) {
    int64_t last = -1;
    for (AffineExpr result : map.getResults()) {
      auto dim = dyn_cast<AffineDimExpr>(result);
      if (!dim)
        continue;
      if (int64_t(dim.getPosition()) <= last)
        return false;
      last = dim.getPosition();
    }
  }
  return true;
}

/// Whether the body of `op` yields, for result `r`, one of its inputs.
static bool isDataMovement(linalg::LinalgOp op, unsigned r) {
  Value yielded = op.getBlock()->getTerminator()->getOperand(r);
  auto arg = dyn_cast<BlockArgument>(yielded);
  return arg && arg.getOwner() == op.getBlock() &&
         arg.getArgNumber() < unsigned(op.getNumDpsInputs());
}

/// Whether `op` is a contraction (sum of products of two inputs).
static bool isContraction(linalg::LinalgOp op) {
  return op.getNumDpsInputs() == 2 && op.getNumReductionLoops() > 0 &&
         linalg::isaContractionOpInterface(op);
}

static ExprRef evalLinalg(Evaluator &evaluator, linalg::LinalgOp op,
                          OpResult result, const Point &point, Depth depth) {
  unsigned r = result.getResultNumber();
  ExprRef asLeaf = leaf(result, point);
  if (depth == Depth::Structure && !isDataMovement(op, r))
    return asLeaf;
  if (depth == Depth::Elementwise && (op.getNumReductionLoops() > 0 || !keepsDimOrder(op)))
    return asLeaf;

  // The iteration point: output dims from `point`, reduction dims fresh.
  OpOperand *init = op.getDpsInitOperand(r);
  AffineMap outputMap = op.getMatchingIndexingMap(init);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<std::optional<Index>> iteration(op.getNumLoops());
  for (auto [position, expr] : llvm::enumerate(outputMap.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      iteration[dim.getPosition()] = point[position];
    } else if (!isa<AffineConstantExpr>(expr)) {
      return asLeaf;
    }
  }
  int reductionAtom = -1;
  Point loops;
  for (auto [i, index] : llvm::enumerate(iteration)) {
    if (!index) {
      if (ranges[i] == 1) {
        index = Index::constant(0);
      } else if (reductionAtom >= 0) {
        return asLeaf; // one reduced dim of more than one element at most
      } else {
        reductionAtom = evaluator.newAtom(ranges[i]);
        index = Index::variable(reductionAtom);
      }
    }
    loops.push_back(*index);
  }

  Depth operandDepth = depth;
  if (depth == Depth::Everything && isContraction(op))
    operandDepth = Depth::Structure;
  BodyEvaluation body(evaluator, op, loops, operandDepth,
                      op.getBlock()->getArgument(op.getNumDpsInputs() + r));
  Value yielded = op.getBlock()->getTerminator()->getOperand(r);
  if (reductionAtom < 0) {
    if (body.accumulator == yielded)
      return evaluator.eval(init->get(), point, depth);
    body.known[body.accumulator] = evaluator.eval(init->get(), point, depth);
    return body.eval(yielded);
  }

  // A reduction: yield = combine(accumulator, x) with + or max.
  Operation *combine = yielded.getDefiningOp();
  if (!combine || combine->getNumOperands() != 2 ||
      !isa<arith::AddFOp, arith::MaximumFOp, arith::MaxNumFOp>(combine))
    return asLeaf;
  Value lhs = combine->getOperand(0), rhs = combine->getOperand(1);
  if (rhs == body.accumulator)
    std::swap(lhs, rhs);
  if (lhs != body.accumulator || rhs == body.accumulator)
    return asLeaf;
  ExprRef element = body.eval(rhs);
  if (mentionsAtom(element, reductionAtom) == false)
    return asLeaf;
  ExprRef start = evaluator.eval(init->get(), point, depth);
  if (isa<arith::AddFOp>(combine))
    return node(ExprKind::Add, {start, node(ExprKind::Sum, {element}, reductionAtom)});
  return node(ExprKind::Max, {start, node(ExprKind::MaxOver, {element}, reductionAtom)});
}

/// A constant: splats and scalars become numbers, other tensors leaves.
static ExprRef evalConstant(arith::ConstantOp c, const Point &point) {
  Attribute value = c.getValue();
  if (auto f = dyn_cast<FloatAttr>(value))
    return constant(f.getValueAsDouble());
  if (auto i = dyn_cast<IntegerAttr>(value); i && i.getValue().getBitWidth() <= 64)
    return integerConstant(i.getValue().getSExtValue(), i.getType());
  if (auto dense = dyn_cast<DenseElementsAttr>(value); dense && dense.isSplat()) {
    Type element = dense.getElementType();
    if (isa<FloatType>(element))
      return constant(dense.getSplatValue<APFloat>().convertToDouble());
    if (element.isIntOrIndex() && dense.getSplatValue<APInt>().getBitWidth() <= 64)
      return integerConstant(dense.getSplatValue<APInt>().getSExtValue(), element);
  }
  return leaf(c, point);
}

ExprRef Evaluator::eval(Value value, const Point &point, Depth depth) {
  if (++nodes > budget)
    return leaf(value, point);
  ExprRef e = evalProducer(value, point, depth);
  if (!e->origin && isa<RankedTensorType>(value.getType())) {
    e->origin = value;
    e->originPoint = point;
  }
  return e;
}

ExprRef Evaluator::evalProducer(Value value, const Point &point, Depth depth) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return leaf(value, point);
  auto shapeOf = [](Value v) { return cast<RankedTensorType>(v.getType()).getShape(); };

  return TypeSwitch<Operation *, ExprRef>(def)
      .Case<arith::ConstantOp>([&](auto c) { return evalConstant(c, point); })
      .Case<linalg::LinalgOp>([&](linalg::LinalgOp op) {
        return evalLinalg(*this, op, cast<OpResult>(value), point, depth);
      })
      .Case<linalg::SoftmaxOp>([&](linalg::SoftmaxOp op) -> ExprRef {
        const Index &j = point[op.getDimension()];
        if (depth != Depth::Everything || !j.isPlainAtom(j.atom))
          return leaf(value, point);
        return node(ExprKind::Softmax, {eval(op.getInput(), point, depth)}, j.atom);
      })
      .Case<tensor::ExtractSliceOp>([&](tensor::ExtractSliceOp slice) -> ExprRef {
        if (!slice.hasUnitStride() && depth == Depth::Structure)
          return leaf(value, point);
        ArrayRef<int64_t> offsets = slice.getStaticOffsets();
        ArrayRef<int64_t> strides = slice.getStaticStrides();
        llvm::SmallBitVector dropped = slice.getDroppedDims();
        Point inner;
        unsigned next = 0;
        for (unsigned d = 0; d < slice.getSourceType().getRank(); ++d) {
          if (ShapedType::isDynamic(offsets[d]) || ShapedType::isDynamic(strides[d]))
            return leaf(value, point);
          if (dropped.test(d)) {
            inner.push_back(Index::constant(offsets[d]));
            continue;
          }
          const Index &i = point[next++];
          if (i.isConst)
            inner.push_back(Index::constant(offsets[d] + i.value * strides[d]));
          else if (offsets[d] == 0 && strides[d] == 1)
            inner.push_back(i); // the atom ranges over a prefix of the dim
          else
            return leaf(value, point);
        }
        return eval(slice.getSource(), inner, depth);
      })
      .Case<tensor::ConcatOp>([&](tensor::ConcatOp concat) -> ExprRef {
        int64_t dim = concat.getDim();
        if (!point[dim].isConst)
          return leaf(value, point);
        int64_t offset = point[dim].value;
        for (Value input : concat.getInputs()) {
          int64_t size = shapeOf(input)[dim];
          if (ShapedType::isDynamic(size))
            return leaf(value, point);
          if (offset < size) {
            Point inner = point;
            inner[dim] = Index::constant(offset);
            return eval(input, inner, depth);
          }
          offset -= size;
        }
        return leaf(value, point);
      })
      .Case<tensor::InsertSliceOp>([&](tensor::InsertSliceOp insert) -> ExprRef {
        if (!insert.hasUnitStride() || insert.getSourceType().getRank() != insert.getType().getRank())
          return leaf(value, point);
        Point inner;
        bool inside = true;
        for (auto [d, i] : llvm::enumerate(point)) {
          int64_t offset = insert.getStaticOffsets()[d];
          int64_t size = insert.getStaticSizes()[d];
          if (ShapedType::isDynamic(offset) || ShapedType::isDynamic(size))
            return leaf(value, point);
          if (i.isConst) {
            inside &= i.value >= offset && i.value < offset + size;
            inner.push_back(Index::constant(i.value - offset));
          } else if (offset == 0 && size == shapeOf(value)[d]) {
            inner.push_back(i);
          } else {
            return leaf(value, point);
          }
        }
        return inside ? eval(insert.getSource(), inner, depth)
                      : eval(insert.getDest(), point, depth);
      })
      .Case<tensor::ExpandShapeOp>([&](tensor::ExpandShapeOp expand) -> ExprRef {
        ArrayRef<int64_t> shape = expand.getResultType().getShape();
        Point inner;
        for (ReassociationIndices group : expand.getReassociationIndices()) {
          SmallVector<Index> parts;
          SmallVector<int64_t> sizes;
          for (int64_t d : group) {
            parts.push_back(point[d]);
            sizes.push_back(shape[d]);
          }
          std::optional<Index> i = linearize(parts, sizes);
          if (!i)
            return leaf(value, point);
          inner.push_back(*i);
        }
        return eval(expand.getSrc(), inner, depth);
      })
      .Case<tensor::CollapseShapeOp>([&](tensor::CollapseShapeOp collapse) -> ExprRef {
        ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
        Point inner;
        for (auto [d, group] : llvm::enumerate(collapse.getReassociationIndices())) {
          SmallVector<int64_t> sizes;
          for (int64_t s : group)
            sizes.push_back(shape[s]);
          std::optional<Point> parts = delinearize(point[d], sizes);
          if (!parts)
            return leaf(value, point);
          llvm::append_range(inner, *parts);
        }
        return eval(collapse.getSrc(), inner, depth);
      })
      .Case<tensor::CastOp>([&](tensor::CastOp cast) {
        return eval(cast.getSource(), point, depth);
      })
      .Default([&](Operation *) { return leaf(value, point); });
}

/// The value of an index under an assignment of its atom.
static std::optional<int64_t> indexValue(const Index &index,
                                         ArrayRef<std::pair<int, int64_t>> atoms) {
  if (index.isConst)
    return index.value;
  for (auto [atom, value] : atoms)
    if (atom == index.atom) {
      int64_t v = value / index.div;
      return index.mod ? v % index.mod : v;
    }
  return std::nullopt;
}

namespace {
/// A value of the exact evaluation: an integer of `width` bits (stored
/// sign-extended to 64) or a double.
struct Num {
  bool isInt = false;
  unsigned width = 64;
  int64_t i = 0;
  double f = 0;

  static Num integer(int64_t value, unsigned width) {
    Num n;
    n.isInt = true;
    n.width = width;
    n.i = width >= 64 ? value : llvm::SignExtend64(uint64_t(value), width);
    return n;
  }
  static Num real(double value) {
    Num n;
    n.f = value;
    return n;
  }
  double asDouble() const { return isInt ? double(i) : f; }
  /// The bits read as an unsigned integer of `width`.
  uint64_t asUnsigned() const {
    return width >= 64 ? uint64_t(i) : uint64_t(i) & llvm::maskTrailingOnes<uint64_t>(width);
  }
};
} // namespace

/// `value` rounded to the float type `type` (double: unchanged).
static double roundTo(double value, Type type) {
  auto floatType = dyn_cast_if_present<FloatType>(type);
  if (!floatType || floatType.isF64())
    return value;
  APFloat x(value);
  bool losesInfo;
  x.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
  x.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  return x.convertToDouble();
}

/// Element `point` (all constants) of a constant tensor.
static std::optional<Num> readConstant(Value tensor, ArrayRef<int64_t> point) {
  auto c = tensor.getDefiningOp<arith::ConstantOp>();
  auto type = c ? dyn_cast<RankedTensorType>(c.getType()) : nullptr;
  if (!type || !type.hasStaticShape() || int64_t(point.size()) != type.getRank())
    return std::nullopt;
  int64_t linear = 0;
  for (auto [index, size] : llvm::zip(point, type.getShape())) {
    if (index < 0 || index >= size)
      return std::nullopt;
    linear = linear * size + index;
  }
  Type element = type.getElementType();
  Attribute value = c.getValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (isa<FloatType>(element))
      return Num::real((*(dense.getValues<APFloat>().begin() + linear)).convertToDouble());
    unsigned width = intWidth(element);
    if (width == 0 || width > 64)
      return std::nullopt;
    return Num::integer((*(dense.getValues<APInt>().begin() + linear)).getSExtValue(), width);
  }
  if (auto blob = dyn_cast<DenseF32ResourceElementsAttr>(value))
    if (std::optional<ArrayRef<float>> values = blob.tryGetAsArrayRef())
      return Num::real(double((*values)[linear]));
  if (auto blob = dyn_cast<DenseF64ResourceElementsAttr>(value))
    if (std::optional<ArrayRef<double>> values = blob.tryGetAsArrayRef())
      return Num::real((*values)[linear]);
  return std::nullopt;
}

std::optional<double> pe::raising::constantValue(const ExprRef &e) {
  if (e->kind == ExprKind::Constant)
    return e->number;
  if (e->kind != ExprKind::Leaf)
    return std::nullopt;
  SmallVector<int64_t> point;
  for (const Index &index : e->point) {
    if (!index.isConst)
      return std::nullopt;
    point.push_back(index.value);
  }
  if (std::optional<Num> n = readConstant(e->value, point))
    return n->asDouble();
  return std::nullopt;
}

/// Integer operands of one width (an untyped integral constant takes the
/// other's width), or nothing.
static std::optional<std::pair<Num, Num>> integers(Num a, Num b) {
  auto fit = [](Num &n, unsigned width) {
    if (n.isInt)
      return true;
    if (n.f != std::floor(n.f) || std::abs(n.f) > 0x1p63)
      return false;
    n = Num::integer(int64_t(n.f), width);
    return true;
  };
  unsigned width = a.isInt ? a.width : b.isInt ? b.width : 64;
  if (!fit(a, width) || !fit(b, width) || a.width != b.width)
    return std::nullopt;
  return std::pair{a, b};
}

static std::optional<bool> compareIntegers(arith::CmpIPredicate predicate, Num a, Num b) {
  auto ints = integers(a, b);
  if (!ints)
    return std::nullopt;
  auto [x, y] = *ints;
  uint64_t ux = x.asUnsigned(), uy = y.asUnsigned();
  switch (predicate) {
  case arith::CmpIPredicate::eq: return x.i == y.i;
  case arith::CmpIPredicate::ne: return x.i != y.i;
  case arith::CmpIPredicate::slt: return x.i < y.i;
  case arith::CmpIPredicate::sle: return x.i <= y.i;
  case arith::CmpIPredicate::sgt: return x.i > y.i;
  case arith::CmpIPredicate::sge: return x.i >= y.i;
  case arith::CmpIPredicate::ult: return ux < uy;
  case arith::CmpIPredicate::ule: return ux <= uy;
  case arith::CmpIPredicate::ugt: return ux > uy;
  case arith::CmpIPredicate::uge: return ux >= uy;
  }
  return std::nullopt;
}

static bool compareFloats(arith::CmpFPredicate predicate, double x, double y) {
  using P = arith::CmpFPredicate;
  bool unordered = std::isnan(x) || std::isnan(y);
  switch (predicate) {
  case P::AlwaysFalse: return false;
  case P::AlwaysTrue: return true;
  case P::ORD: return !unordered;
  case P::UNO: return unordered;
  case P::OEQ: return !unordered && x == y;
  case P::ONE: return !unordered && x != y;
  case P::OLT: return !unordered && x < y;
  case P::OLE: return !unordered && x <= y;
  case P::OGT: return !unordered && x > y;
  case P::OGE: return !unordered && x >= y;
  case P::UEQ: return unordered || x == y;
  case P::UNE: return unordered || x != y;
  case P::ULT: return unordered || x < y;
  case P::ULE: return unordered || x <= y;
  case P::UGT: return unordered || x > y;
  case P::UGE: return unordered || x >= y;
  }
  return false;
}

/// Integer division and remainder as arith defines them; nothing for a zero
/// divisor or a signed overflow (undefined behavior there).
static std::optional<Num> divideById(TypeID op, Num a, Num b) {
  auto ints = integers(a, b);
  if (!ints)
    return std::nullopt;
  auto [x, y] = *ints;
  unsigned w = x.width;
  if (y.i == 0)
    return std::nullopt;
  bool overflow = x.i == (w >= 64 ? INT64_MIN : -(int64_t(1) << (w - 1))) && y.i == -1;
  uint64_t ux = x.asUnsigned(), uy = y.asUnsigned();
  int64_t q = overflow ? 0 : x.i / y.i, r = overflow ? 0 : x.i % y.i;
  if (op == TypeID::get<arith::DivUIOp>())
    return Num::integer(int64_t(ux / uy), w);
  if (op == TypeID::get<arith::RemUIOp>())
    return Num::integer(int64_t(ux % uy), w);
  if (op == TypeID::get<arith::RemSIOp>())
    return overflow ? Num::integer(0, w) : Num::integer(r, w);
  if (overflow)
    return std::nullopt;
  if (op == TypeID::get<arith::DivSIOp>())
    return Num::integer(q, w);
  if (op == TypeID::get<arith::FloorDivSIOp>())
    return Num::integer(r != 0 && ((r < 0) != (y.i < 0)) ? q - 1 : q, w);
  if (op == TypeID::get<arith::CeilDivSIOp>())
    return Num::integer(r != 0 && ((r < 0) == (y.i < 0)) ? q + 1 : q, w);
  if (op == TypeID::get<arith::CeilDivUIOp>())
    return Num::integer(int64_t(ux / uy + (ux % uy != 0)), w);
  return std::nullopt;
}

/// Conversion `e` (a Cast or Convert node) of `x`.
static std::optional<Num> convert(const Expr &e, Num x) {
  Type to = e.type;
  unsigned width = intWidth(to);
  if (isa<FloatType>(to)) {
    bool fromUnsigned = e.op && e.op->getTypeID() == TypeID::get<arith::UIToFPOp>();
    return Num::real(roundTo(fromUnsigned && x.isInt ? double(x.asUnsigned()) : x.asDouble(), to));
  }
  if (width == 0 || width > 64)
    return std::nullopt;
  if (!x.isInt) { // fptosi, fptoui: poison outside the range
    bool isUnsigned = e.op && e.op->getTypeID() == TypeID::get<arith::FPToUIOp>();
    double v = std::trunc(x.f);
    double low = isUnsigned ? 0.0 : -std::ldexp(1.0, int(width) - 1);
    double high = isUnsigned ? std::ldexp(1.0, int(width)) : std::ldexp(1.0, int(width) - 1);
    if (!(v >= low && v < high))
      return std::nullopt;
    return Num::integer(isUnsigned ? int64_t(uint64_t(v)) : int64_t(v), width);
  }
  // Zero extension (extui, index_castui) reads the bits as unsigned; every
  // other integer conversion is sign extension or truncation.
  bool zeroExtends = e.op && (e.op->getTypeID() == TypeID::get<arith::ExtUIOp>() ||
                              e.op->getTypeID() == TypeID::get<arith::IndexCastUIOp>());
  return Num::integer(zeroExtends ? int64_t(x.asUnsigned()) : x.i, width);
}

/// Integer (wrapping to the node's type) or float arithmetic.
static std::optional<Num> arithmetic(const Expr &e, ArrayRef<Num> x) {
  bool integer = llvm::all_of(x, [](const Num &n) { return n.isInt; }) ||
                 (e.type && e.type.isIntOrIndex());
  if (!integer) {
    double a = x[0].asDouble(), b = x.size() > 1 ? x[1].asDouble() : 0.0;
    return Num::real(e.kind == ExprKind::Add ? a + b : e.kind == ExprKind::Mul ? a * b : -a);
  }
  std::optional<std::pair<Num, Num>> ints =
      x.size() > 1 ? integers(x[0], x[1]) : integers(x[0], x[0]);
  if (!ints)
    return std::nullopt;
  unsigned width = e.type ? intWidth(e.type) : ints->first.width;
  uint64_t a = uint64_t(ints->first.i), b = uint64_t(ints->second.i); // wraps mod 2^64
  uint64_t r = e.kind == ExprKind::Add ? a + b : e.kind == ExprKind::Mul ? a * b : 0 - a;
  return Num::integer(int64_t(r), width);
}

static std::optional<Num> opaqueValue(const Expr &e, ArrayRef<Num> x) {
  TypeID id = e.op->getTypeID();
  auto is = [&](auto tag) { return id == TypeID::get<decltype(tag)>(); };
  auto logic = [&](auto f) -> std::optional<Num> {
    auto ints = integers(x[0], x[1]);
    if (!ints)
      return std::nullopt;
    return Num::integer(f(ints->first.i, ints->second.i), ints->first.width);
  };
  if (is(arith::SelectOp()))
    return (x[0].isInt ? x[0].i != 0 : x[0].f != 0) ? x[1] : x[2];
  if (is(arith::AndIOp()))
    return logic([](int64_t a, int64_t b) { return a & b; });
  if (is(arith::OrIOp()))
    return logic([](int64_t a, int64_t b) { return a | b; });
  if (is(arith::XOrIOp()))
    return logic([](int64_t a, int64_t b) { return a ^ b; });
  if (is(arith::MinSIOp()))
    return logic([](int64_t a, int64_t b) { return std::min(a, b); });
  if (is(arith::MaxSIOp()))
    return logic([](int64_t a, int64_t b) { return std::max(a, b); });
  if (e.cmpi) {
    std::optional<bool> r = compareIntegers(*e.cmpi, x[0], x[1]);
    return r ? std::optional(Num::integer(*r ? -1 : 0, 1)) : std::nullopt;
  }
  if (e.cmpf)
    return Num::integer(compareFloats(*e.cmpf, x[0].asDouble(), x[1].asDouble()) ? -1 : 0, 1);
  if (is(arith::DivSIOp()) || is(arith::DivUIOp()) || is(arith::RemSIOp()) ||
      is(arith::RemUIOp()) || is(arith::FloorDivSIOp()) || is(arith::CeilDivSIOp()) ||
      is(arith::CeilDivUIOp()))
    return std::nullopt; // handled by the caller, which has the op kind
  double a = x[0].asDouble();
  std::optional<double> real;
  if (is(math::PowFOp()))
    real = std::pow(a, x[1].asDouble());
  else if (is(math::Exp2Op()))
    real = std::exp2(a);
  else if (is(math::LogOp()))
    real = std::log(a);
  else if (is(math::SqrtOp()))
    real = std::sqrt(a);
  else if (is(math::AbsFOp()))
    real = std::abs(a);
  else if (is(math::AbsIOp()) && x[0].isInt)
    return Num::integer(int64_t(0 - uint64_t(x[0].i)) < 0 ? x[0].i : -x[0].i, x[0].width);
  if (!real)
    return std::nullopt;
  return Num::real(roundTo(*real, e.type));
}

static std::optional<Num> evaluateNum(const ExprRef &e,
                                      ArrayRef<std::pair<int, int64_t>> atoms) {
  SmallVector<Num, 3> x;
  for (const ExprRef &operand : e->operands) {
    std::optional<Num> v = evaluateNum(operand, atoms);
    if (!v)
      return std::nullopt;
    x.push_back(*v);
  }
  switch (e->kind) {
  case ExprKind::Constant:
    if (isIntegerConstant(e))
      return Num::integer(e->integer, intWidth(e->type));
    return Num::real(e->number);
  case ExprKind::Iota:
  case ExprKind::IndexOf: {
    Index index = e->kind == ExprKind::Iota ? Index::variable(e->atom) : e->point[0];
    if (std::optional<int64_t> v = indexValue(index, atoms))
      return Num::integer(*v, 64);
    return std::nullopt;
  }
  case ExprKind::Leaf: {
    SmallVector<int64_t> point;
    for (const Index &index : e->point) {
      std::optional<int64_t> v = indexValue(index, atoms);
      if (!v)
        return std::nullopt;
      point.push_back(*v);
    }
    return readConstant(e->value, point);
  }
  case ExprKind::Gather: {
    SmallVector<int64_t> point;
    for (const Num &v : x) {
      if (!v.isInt)
        return std::nullopt;
      point.push_back(v.i);
    }
    return readConstant(e->value, point);
  }
  case ExprKind::Add:
  case ExprKind::Mul:
  case ExprKind::Neg:
    return arithmetic(*e, x);
  case ExprKind::Recip:
    return Num::real(1.0 / x[0].asDouble());
  case ExprKind::Max:
    return Num::real(std::max(x[0].asDouble(), x[1].asDouble()));
  case ExprKind::Exp:
    return Num::real(std::exp(x[0].asDouble()));
  case ExprKind::Cos:
    return Num::real(std::cos(x[0].asDouble()));
  case ExprKind::Sin:
    return Num::real(std::sin(x[0].asDouble()));
  case ExprKind::Cast:
  case ExprKind::Convert:
    return convert(*e, x[0]);
  case ExprKind::Opaque: {
    TypeID id = e->op->getTypeID();
    if (id == TypeID::get<arith::DivSIOp>() || id == TypeID::get<arith::DivUIOp>() ||
        id == TypeID::get<arith::RemSIOp>() || id == TypeID::get<arith::RemUIOp>() ||
        id == TypeID::get<arith::FloorDivSIOp>() || id == TypeID::get<arith::CeilDivSIOp>() ||
        id == TypeID::get<arith::CeilDivUIOp>())
      return divideById(id, x[0], x[1]);
    return opaqueValue(*e, x);
  }
  default:
    return std::nullopt;
  }
}

std::optional<double> pe::raising::evaluateAt(const ExprRef &e,
                                              ArrayRef<std::pair<int, int64_t>> atoms) {
  if (std::optional<Num> n = evaluateNum(e, atoms))
    return n->asDouble();
  return std::nullopt;
}

bool pe::raising::onlyAtoms(const ExprRef &e, ArrayRef<int> atoms) {
  if (e->kind == ExprKind::Gather && !e->value.getDefiningOp<arith::ConstantOp>())
    return false;
  if (e->kind == ExprKind::Leaf) {
    if (!e->value.getDefiningOp<arith::ConstantOp>())
      return false;
    for (const Index &index : e->point)
      if (!index.isConst && !llvm::is_contained(atoms, index.atom))
        return false;
    return true;
  }
  if ((e->kind == ExprKind::Iota || e->kind == ExprKind::Sum || e->kind == ExprKind::MaxOver ||
       e->kind == ExprKind::Softmax) &&
      !llvm::is_contained(atoms, e->atom))
    return false;
  for (const ExprRef &operand : e->operands)
    if (!onlyAtoms(operand, atoms))
      return false;
  return true;
}
