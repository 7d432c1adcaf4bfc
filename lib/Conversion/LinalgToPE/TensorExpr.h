//===- TensorExpr.h - tensor elements as symbolic expressions ---*- C++ -*-===//
//
// The proof engine of pe-raise-positional-encodings. An element of a tensor
// value, at a point whose indices are constants or named loop variables
// ("atoms"), is rewritten into an expression over elements of other tensors:
// through linalg ops (their indexing maps and scalar bodies, named or
// generic, one op per generic or fused), reductions (sums, maxima, matmuls),
// linalg.softmax, slices, concatenations, reshapes, transposes and
// broadcasts. Two differently spelled computations that compute the same
// element end as the same expression; the matchers then reason on
// expressions (a sum of products in normal form), never on op spellings.
//
// An index of a point is a constant or `(atom / div) mod mod`: reshapes
// that split a loop variable (repeat_kv's head index, a batch x heads index
// collapsed for batch_matmul) stay exact. What cannot be followed (an
// unsupported op or index) ends as a leaf: the tensor and its point.
//
//===----------------------------------------------------------------------===//
#ifndef PE_CONVERSION_LINALGTOPE_TENSOREXPR_H
#define PE_CONVERSION_LINALGTOPE_TENSOREXPR_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <optional>

namespace mlir::pe::raising {

/// One index of a point: a constant, or (atom / div) mod mod (mod 0: none).
struct Index {
  bool isConst = true;
  int64_t value = 0;
  int atom = -1;
  int64_t div = 1, mod = 0;

  static Index constant(int64_t c) { return Index{true, c, -1, 1, 0}; }
  static Index variable(int a) { return Index{false, 0, a, 1, 0}; }
  bool isPlainAtom(int a) const { return !isConst && atom == a && div == 1 && mod == 0; }
  bool operator==(const Index &o) const {
    return isConst == o.isConst &&
           (isConst ? value == o.value : atom == o.atom && div == o.div && mod == o.mod);
  }
  bool operator!=(const Index &o) const { return !(*this == o); }
};
using Point = SmallVector<Index, 4>;

struct Expr;
using ExprRef = std::shared_ptr<const Expr>;

enum class ExprKind {
  Leaf,     // element `point` of tensor (or scalar) `value`
  Constant, // a number
  Iota,     // the value of loop variable `atom` (linalg.index)
  Add, Mul, Neg, Recip, Max,
  Exp, Cos, Sin,
  Cast,     // extf, truncf, sitofp, extsi, widening index_cast: the value
            // kept (floats to the rounding of `type`); proofs look through it
  Convert,  // trunci, extui, uitofp, fptosi, fptoui, index_castui, narrowing
            // index_cast: may change the value (wraps, reinterprets the
            // sign); evaluated exactly from `fromType` to `type`, never
            // looked through
  IndexOf,  // the loop index `point[0]`, (atom / div) mod mod
  Sum,      // sum over atom `atom` of operand 0
  MaxOver,  // maximum over atom `atom` of operand 0
  Softmax,  // exp(x) / sum over `atom` exp(x), x = operand 0
  Gather,   // element of tensor `value` at the computed indices `operands`
  Opaque,   // any other scalar op `op` (with its predicate), compared
            // structurally
};

struct Expr {
  ExprKind kind;
  Value value;      // Leaf, Gather
  Point point;      // Leaf; IndexOf: the index
  double number = 0; // Constant: its value (integers: exact below 2^53)
  int64_t integer = 0; // Constant of an integer `type`: its value, sign-extended
  int atom = -1;    // Iota, Sum, MaxOver, Softmax
  /// The result type where it matters: a Constant's (integer or float), a
  /// Cast's and Convert's, and of integer Add/Mul/Neg (which wrap to it).
  Type type;
  Type fromType;    // Convert: the operand's type
  std::optional<OperationName> op;               // Opaque
  std::optional<arith::CmpIPredicate> cmpi;      // Opaque arith.cmpi
  std::optional<arith::CmpFPredicate> cmpf;      // Opaque arith.cmpf
  SmallVector<ExprRef, 2> operands;
  /// Where the evaluator found this node first: a tensor (or scalar) and
  /// the point whose element it is (for a mask that must become an operand).
  mutable Value origin;
  mutable Point originPoint;
};

/// Which ops the evaluator looks through.
enum class Depth {
  /// Data movement only: reshapes, transposes, broadcasts, copies, slices.
  Structure,
  /// Element-wise arithmetic, slices, concatenations and broadcasts, but not
  /// transposes or reshapes that move data between dims: the leaves keep the
  /// layout of the expression's root.
  Elementwise,
  /// Everything the evaluator knows, reductions and contractions included;
  /// the operands of a contraction are followed with `Structure`.
  Everything,
};

/// Evaluates elements of tensors. Atoms are numbered by the evaluator; their
/// extents are recorded for reshapes.
class Evaluator {
public:
  /// `budget`: the nodes one evaluator builds before it stops following
  /// producers (what is not followed stays a leaf).
  explicit Evaluator(int64_t budget = 400000) : budget(budget) {}

  /// A fresh atom ranging over [0, extent).
  int newAtom(int64_t extent);
  int64_t extent(const Index &index) const;
  /// Whether every dim of `value` read at `point` is exactly the range of its
  /// index: one element for a constant index, the atom's extent otherwise
  /// (a read through a prefix slice covers less than the tensor).
  bool coversShape(Value value, const Point &point) const;
  bool coversShape(ArrayRef<int64_t> shape, const Point &point) const;
  /// `index / n` (a head index of GQA: query head h reads KV head h / n).
  Index divide(const Index &index, int64_t n) const;

  /// The element of `value` at `point` (its rank; empty for scalars).
  ExprRef eval(Value value, const Point &point, Depth depth);

  /// A point of fresh atoms over the (static) shape of `value`, or nothing.
  std::optional<Point> freshPoint(Value value);

  /// Index arithmetic of reshapes: the indices of the parts of `index` split
  /// over `sizes`, and the index of `parts` merged.
  std::optional<Point> delinearize(const Index &index, ArrayRef<int64_t> sizes);
  std::optional<Index> linearize(ArrayRef<Index> parts, ArrayRef<int64_t> sizes);

  /// Number of nodes built; evaluation gives up (leaves) beyond the budget.
  int64_t nodes = 0;
  int64_t budget;

private:
  ExprRef evalProducer(Value value, const Point &point, Depth depth);
  Index normalize(Index index) const;
  SmallVector<int64_t> extents;
};

//===----------------------------------------------------------------------===//
// Building and comparing expressions
//===----------------------------------------------------------------------===//

ExprRef leaf(Value value, const Point &point);
ExprRef constant(double number);
/// An integer constant of `type` (its value sign-extended from the width).
ExprRef integerConstant(int64_t value, Type type);
ExprRef node(ExprKind kind, ArrayRef<ExprRef> operands, int atom = -1);

/// Structural equality; bound atoms of Sum/MaxOver/Softmax compare up to
/// renaming.
bool equal(const ExprRef &a, const ExprRef &b);
/// `e` with every use of atom `from` replaced by atom `to`.
ExprRef renameAtom(const ExprRef &e, int from, int to);
/// Whether atom `atom` occurs free in `e`.
bool mentionsAtom(const ExprRef &e, int atom);
/// The number a Leaf stands for when its tensor is a constant (dense or
/// dense_resource) and its point is all constants.
std::optional<double> constantValue(const ExprRef &e);
/// The number `e` stands for when its atoms take the values of `atoms`
/// (loop indices of a mask or of per-head slopes): constants, iota, element
/// arithmetic, exp/pow, comparisons and selects, integer division and
/// remainders, conversions. Integers are computed exactly as MLIR defines
/// them (two's complement of their width; signed and unsigned predicates,
/// division and extension each as spelled), floats in double and rounded
/// to their type at every cast. std::nullopt when `e` reads a tensor that
/// is not constant, uses an op it does not know, or divides by zero.
std::optional<double> evaluateAt(const ExprRef &e, ArrayRef<std::pair<int, int64_t>> atoms);
/// Whether `e` reads no tensor other than constants, and no atom outside
/// `atoms`.
bool onlyAtoms(const ExprRef &e, ArrayRef<int> atoms);
/// `e` without its value-keeping casts (Convert nodes stay).
ExprRef stripCasts(ExprRef e);
/// Whether `e` is the scalar op `OpTy` (an Opaque node).
template <typename OpTy>
bool isOpaque(const ExprRef &e) {
  return e->kind == ExprKind::Opaque && e->op && e->op->getTypeID() == TypeID::get<OpTy>();
}

/// A product `coefficient * factors...` of a sum of products.
struct Term {
  double coefficient = 1;
  SmallVector<ExprRef, 4> factors;
};
/// `e` as a sum of products: Add, Neg, Mul, Constant and Cast are expanded;
/// every other node is a factor. Terms with equal factors are merged.
SmallVector<Term> expand(const ExprRef &e);
/// Whether two sums of products have the same terms (in any order).
bool sameSum(ArrayRef<Term> a, ArrayRef<Term> b);

} // namespace mlir::pe::raising

#endif // PE_CONVERSION_LINALGTOPE_TENSOREXPR_H
