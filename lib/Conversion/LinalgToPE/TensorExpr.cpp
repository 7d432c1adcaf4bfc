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

ExprRef pe::raising::node(ExprKind kind, ArrayRef<ExprRef> operands, int atom) {
  // Folds that keep the normal forms small: x + 0, max(-inf, x).
  if (kind == ExprKind::Max && operands[0]->kind == ExprKind::Constant &&
      operands[0]->number <= -std::numeric_limits<float>::max())
    return operands[1];
  if (kind == ExprKind::Add && operands[0]->kind == ExprKind::Constant &&
      operands[0]->number == 0)
    return operands[1];
  if (!operands.empty() && llvm::all_of(operands, [](const ExprRef &o) {
        return o->kind == ExprKind::Constant;
      })) {
    switch (kind) {
    case ExprKind::Add:
      return constant(operands[0]->number + operands[1]->number);
    case ExprKind::Mul:
      return constant(operands[0]->number * operands[1]->number);
    case ExprKind::Neg:
      return constant(-operands[0]->number);
    case ExprKind::Cast:
      return operands[0];
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

static ExprRef opaque(StringRef name, int64_t attr, ArrayRef<ExprRef> operands) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::Opaque;
  e->name = name;
  e->attr = attr;
  e->operands.assign(operands.begin(), operands.end());
  return e;
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
    return a->number == b->number ||
           (std::isnan(a->number) && std::isnan(b->number));
  case ExprKind::Iota:
    return a->atom == b->atom;
  case ExprKind::Gather:
    if (a->value != b->value)
      return false;
    break;
  case ExprKind::Opaque:
    if (a->name != b->name || a->attr != b->attr)
      return false;
    break;
  default:
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
  if (!type || type.getRank() != int64_t(point.size()))
    return false;
  for (auto [size, index] : llvm::zip(type.getShape(), point))
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
      attrs.push_back(IntegerAttr::get(type, int64_t(e->number)));
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
  if (auto i = dyn_cast_if_present<IntegerAttr>(attr))
    return constant(i.getType().isInteger(1) ? double(i.getValue().getZExtValue())
                                             : double(i.getValue().getSExtValue()));
  return nullptr;
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
    result =
        TypeSwitch<Operation *, ExprRef>(def)
            .Case<arith::AddFOp, arith::AddIOp>([&](auto) {
              return node(ExprKind::Add, operands());
            })
            .Case<arith::SubFOp, arith::SubIOp>([&](auto) {
              auto o = operands();
              return node(ExprKind::Add, {o[0], node(ExprKind::Neg, {o[1]})});
            })
            .Case<arith::MulFOp, arith::MulIOp>([&](auto) {
              return node(ExprKind::Mul, operands());
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
            .Case<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp,
                  arith::UIToFPOp, arith::IndexCastOp, arith::ExtSIOp,
                  arith::TruncIOp>([&](auto) { return node(ExprKind::Cast, operands()); })
            .Case<arith::ConstantOp>([&](arith::ConstantOp c) {
              return evaluator.eval(c, {}, operandDepth);
            })
            .Case<linalg::IndexOp>([&](linalg::IndexOp index) -> ExprRef {
              const Index &i = iteration[index.getDim()];
              if (i.isConst)
                return constant(double(i.value));
              if (i.div == 1 && i.mod == 0)
                return node(ExprKind::Iota, {}, i.atom);
              return opaque("index", i.div * 1000003 + i.mod, {node(ExprKind::Iota, {}, i.atom)});
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
            .Default([&](Operation *other) {
              SmallVector<ExprRef> o = operands();
              if (ExprRef folded = foldConstants(other, o))
                return folded;
              int64_t predicate = 0;
              if (auto cmp = dyn_cast<arith::CmpFOp>(other))
                predicate = int64_t(cmp.getPredicate());
              if (auto cmp = dyn_cast<arith::CmpIOp>(other))
                predicate = 100 + int64_t(cmp.getPredicate());
              return opaque(other->getName().getStringRef(), predicate, o);
            });
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
  if (auto i = dyn_cast<IntegerAttr>(value))
    return constant(double(i.getValue().getSExtValue()));
  if (auto dense = dyn_cast<DenseElementsAttr>(value); dense && dense.isSplat()) {
    if (isa<FloatType>(dense.getElementType()))
      return constant(dense.getSplatValue<APFloat>().convertToDouble());
    if (dense.getElementType().isIntOrIndex())
      return constant(double(dense.getSplatValue<APInt>().getSExtValue()));
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

std::optional<double> pe::raising::constantValue(const ExprRef &e) {
  if (e->kind == ExprKind::Constant)
    return e->number;
  if (e->kind != ExprKind::Leaf)
    return std::nullopt;
  auto c = e->value.getDefiningOp<arith::ConstantOp>();
  auto type = c ? dyn_cast<RankedTensorType>(c.getType()) : nullptr;
  if (!type || !type.hasStaticShape() || int64_t(e->point.size()) != type.getRank())
    return std::nullopt;
  int64_t linear = 0;
  for (auto [index, size] : llvm::zip(e->point, type.getShape())) {
    if (!index.isConst || index.value < 0 || index.value >= size)
      return std::nullopt;
    linear = linear * size + index.value;
  }
  Attribute value = c.getValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (isa<FloatType>(type.getElementType()))
      return (*(dense.getValues<APFloat>().begin() + linear)).convertToDouble();
    return double((*(dense.getValues<APInt>().begin() + linear)).getSExtValue());
  }
  if (auto blob = dyn_cast<DenseF32ResourceElementsAttr>(value))
    if (std::optional<ArrayRef<float>> values = blob.tryGetAsArrayRef())
      return double((*values)[linear]);
  if (auto blob = dyn_cast<DenseF64ResourceElementsAttr>(value))
    if (std::optional<ArrayRef<double>> values = blob.tryGetAsArrayRef())
      return (*values)[linear];
  return std::nullopt;
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

std::optional<double> pe::raising::evaluateAt(const ExprRef &e,
                                              ArrayRef<std::pair<int, int64_t>> atoms) {
  SmallVector<double, 3> x;
  for (const ExprRef &operand : e->operands) {
    std::optional<double> v = evaluateAt(operand, atoms);
    if (!v)
      return std::nullopt;
    x.push_back(*v);
  }
  switch (e->kind) {
  case ExprKind::Constant:
    return e->number;
  case ExprKind::Iota:
    if (std::optional<int64_t> v = indexValue(Index::variable(e->atom), atoms))
      return double(*v);
    return std::nullopt;
  case ExprKind::Leaf: {
    Point point;
    for (const Index &index : e->point) {
      std::optional<int64_t> v = indexValue(index, atoms);
      if (!v)
        return std::nullopt;
      point.push_back(Index::constant(*v));
    }
    return constantValue(leaf(e->value, point));
  }
  case ExprKind::Add:
    return x[0] + x[1];
  case ExprKind::Mul:
    return x[0] * x[1];
  case ExprKind::Neg:
    return -x[0];
  case ExprKind::Recip:
    return 1.0 / x[0];
  case ExprKind::Max:
    return std::max(x[0], x[1]);
  case ExprKind::Exp:
    return std::exp(x[0]);
  case ExprKind::Cos:
    return std::cos(x[0]);
  case ExprKind::Sin:
    return std::sin(x[0]);
  case ExprKind::Cast:
    return x[0];
  case ExprKind::Gather: {
    Point point;
    for (double v : x)
      point.push_back(Index::constant(int64_t(v)));
    return constantValue(leaf(e->value, point));
  }
  case ExprKind::Opaque:
    break;
  default:
    return std::nullopt;
  }
  StringRef name = e->name;
  if (name == "arith.select")
    return x[0] != 0 ? x[1] : x[2];
  if (name == "arith.andi")
    return double(int64_t(x[0]) & int64_t(x[1]));
  if (name == "arith.ori")
    return double(int64_t(x[0]) | int64_t(x[1]));
  if (name == "arith.xori")
    return double(int64_t(x[0]) ^ int64_t(x[1]));
  if (name == "math.powf")
    return std::pow(x[0], x[1]);
  if (name == "math.exp2")
    return std::exp2(x[0]);
  if (name == "math.log")
    return std::log(x[0]);
  if (name == "math.sqrt")
    return std::sqrt(x[0]);
  if (name == "math.absf" || name == "math.absi")
    return std::abs(x[0]);
  if (name == "arith.cmpi") {
    // Signed and unsigned compare alike: the operands are small indices.
    switch (arith::CmpIPredicate(e->attr - 100)) {
    case arith::CmpIPredicate::eq: return double(x[0] == x[1]);
    case arith::CmpIPredicate::ne: return double(x[0] != x[1]);
    case arith::CmpIPredicate::slt: case arith::CmpIPredicate::ult: return double(x[0] < x[1]);
    case arith::CmpIPredicate::sle: case arith::CmpIPredicate::ule: return double(x[0] <= x[1]);
    case arith::CmpIPredicate::sgt: case arith::CmpIPredicate::ugt: return double(x[0] > x[1]);
    case arith::CmpIPredicate::sge: case arith::CmpIPredicate::uge: return double(x[0] >= x[1]);
    }
  }
  if (name == "arith.cmpf") {
    switch (arith::CmpFPredicate(e->attr)) {
    case arith::CmpFPredicate::OEQ: case arith::CmpFPredicate::UEQ: return double(x[0] == x[1]);
    case arith::CmpFPredicate::ONE: case arith::CmpFPredicate::UNE: return double(x[0] != x[1]);
    case arith::CmpFPredicate::OLT: case arith::CmpFPredicate::ULT: return double(x[0] < x[1]);
    case arith::CmpFPredicate::OLE: case arith::CmpFPredicate::ULE: return double(x[0] <= x[1]);
    case arith::CmpFPredicate::OGT: case arith::CmpFPredicate::UGT: return double(x[0] > x[1]);
    case arith::CmpFPredicate::OGE: case arith::CmpFPredicate::UGE: return double(x[0] >= x[1]);
    default: return std::nullopt;
    }
  }
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
