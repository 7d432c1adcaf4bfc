//===- RaiseAttention.cpp - attention from generic IR to pe.attention -----===//
//
// A contraction O = sum_j P[.., i, j] V[.., j, e] is attention when the
// evaluation of its elements (TensorExpr.h) proves
//
//   P[.., i, j] = exp(x_j - max_j' x_j') / sum_j'' exp(x_j'' - max x)
//                 (or linalg.softmax, or without the max), the sum over the
//                 contraction's own index j;
//   x_j         = c * sum_d Q[b, h, i, d] K[b, h / n, j, d] + bias[b, h, i, j]
//
// with Q, K, V tensors in any dim order (transposes and reshapes are
// followed; repeat_kv's broadcast of KV heads appears as the index h / n),
// c the softmax scale, and every bias term either a mask tensor indexed by
// (b | -, h | -, i, j) or ALiBi: c' slope[h] k_pos[j] (- c' slope[h]
// q_pos[i]), the query term optional because it is constant along each
// softmax row. Then O = pe.attention(Q, K, V) with the scale, mask and
// alibi, reshaped to O's dims.
//
//===----------------------------------------------------------------------===//
#include "TensorExpr.h"
#include "pe/Conversion/LinalgToPE/LinalgToPE.h"

#include "pe/Dialect/PE/IR/PE.h"
#include "pe/Math/PositionalMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

using namespace mlir;
using namespace mlir::pe;
using namespace mlir::pe::raising;

namespace {
/// A tensor read at a point: one of Q, K, V, the mask or a positions vector.
/// Q, K and V may be views of `value`: the dims in `fixed` read at one
/// index (a fused QKV tensor's slot), the others merged by `groups` (a
/// head dim split into pairs); `point` and `shape` are then the view's.
struct Read {
  Value value;
  Point point;
  SmallVector<int64_t> shape;
  SmallVector<std::pair<int64_t, int64_t>> fixed; // (dim of value, index)
  SmallVector<ReassociationIndices> groups;       // of the dims not fixed

  static Read whole(Value value, Point point) {
    auto shape = cast<RankedTensorType>(value.getType()).getShape();
    return Read{value, std::move(point), SmallVector<int64_t>(shape), {}, {}};
  }
};

/// The roles of the atoms and what the proof found.
struct AttentionProof {
  /// A softmax over scores, masks and ALiBi takes a few hundred nodes; the
  /// budget keeps a projection matmul, whose operand is the whole model
  /// before it, from being followed far.
  Evaluator ev{20000};
  Point outPoint;                  // fresh atoms of O
  int i = -1, j = -1, d = -1, e = -1; // query, key, head-dim, value-dim atoms
  Index batch, head;               // of the query (b, h)
  Read q, k, v;
  double scale = 0;
  std::optional<Read> mask;
  bool maskIsCondition = false;    // an i1 tensor: keys where it is false are masked
  /// What a masked score becomes (select(c, s, fill)): -inf, or HF's
  /// finfo.min, which the raised additive mask keeps (a fully masked row
  /// then averages V in both forms instead of giving 0).
  double maskFill = -std::numeric_limits<double>::infinity();
  bool causal = false;
  std::optional<int64_t> window;
  std::optional<double> alibi;
  ExprRef qPositions, kPositions;  // ALiBi's, when not iota
  /// Whether P is a softmax over the contraction index (an attention shape),
  /// and the first step of the proof that failed after that.
  bool shaped = false;
  std::string why;
};

/// Records why the proof stops here.
static LogicalResult fail(AttentionProof &proof, const Twine &why) {
  proof.why = why.str();
  return failure();
}
} // namespace

/// The position of the dim of `read` indexed by `index`, or -1.
static int64_t dimOf(const Read &read, const Index &index) {
  for (auto [n, i] : llvm::enumerate(read.point))
    if (i == index)
      return n;
  return -1;
}

static bool isPlain(const Index &i) { return !i.isConst && i.div == 1 && i.mod == 0; }

/// x = sum of `terms`; P = softmax over atom j of x. Returns x's terms.
static FailureOr<SmallVector<Term>> softmaxArgument(const ExprRef &p, int j) {
  ExprRef s = stripCasts(p);
  if (s->kind == ExprKind::Softmax && s->atom == j)
    return expand(s->operands[0]);
  SmallVector<Term> terms = expand(s);
  if (terms.size() != 1 || terms[0].coefficient != 1 || terms[0].factors.size() != 2)
    return failure();
  ExprRef num = stripCasts(terms[0].factors[0]), den = stripCasts(terms[0].factors[1]);
  if (num->kind == ExprKind::Recip)
    std::swap(num, den);
  if (num->kind != ExprKind::Exp || den->kind != ExprKind::Recip ||
      !equal(stripCasts(den->operands[0]), node(ExprKind::Sum, {num}, j)))
    return failure();
  // exp(x - max_j x): drop the max term after checking it is the row max.
  SmallVector<Term> x = expand(num->operands[0]);
  for (auto it = x.begin(); it != x.end(); ++it) {
    if (it->coefficient != -1 || it->factors.size() != 1)
      continue;
    ExprRef m = stripCasts(it->factors[0]);
    if (m->kind != ExprKind::MaxOver)
      continue;
    SmallVector<Term> rest(x.begin(), it);
    rest.append(std::next(it), x.end());
    if (!sameSum(expand(renameAtom(m->operands[0], m->atom, j)), rest))
      return failure();
    return rest;
  }
  return x;
}

/// The single-leaf read of a factor list, by stripping casts.
static std::optional<Read> asRead(const ExprRef &f) {
  ExprRef s = stripCasts(f);
  if (s->kind != ExprKind::Leaf || !isa<RankedTensorType>(s->value.getType()))
    return std::nullopt;
  return Read::whole(s->value, s->point);
}

/// `read` seen without the dims it reads at one index (of more than one
/// element) and with each run of dims whose indices are the pieces of one
/// index merged: what Q, K and V are in a fused QKV tensor or in pairs.
static std::optional<Read> view(Evaluator &ev, const Read &read) {
  Read result{read.value, {}, {}, {}, {}};
  Point kept;
  SmallVector<int64_t> keptShape;
  for (auto [n, index] : llvm::enumerate(read.point)) {
    if (index.isConst && read.shape[n] != 1) {
      result.fixed.push_back({int64_t(n), index.value});
      continue;
    }
    kept.push_back(index);
    keptShape.push_back(read.shape[n]);
  }
  for (int64_t n = 0, e = kept.size(); n < e;) {
    // The longest run starting at n that is one index split over its dims.
    int64_t end = n + 1;
    Index merged = kept[n];
    for (int64_t m = n + 2; m <= e; ++m) {
      std::optional<Index> whole =
          ev.linearize(ArrayRef(kept).slice(n, m - n), ArrayRef(keptShape).slice(n, m - n));
      if (!whole || whole->isConst)
        break;
      // A unit dim next to a dim is not a split index: keep it (batch 1).
      if (llvm::count_if(ArrayRef(keptShape).slice(n, m - n), [](int64_t s) { return s != 1; }) <
          m - n)
        break;
      end = m;
      merged = *whole;
    }
    ReassociationIndices group;
    int64_t size = 1;
    for (int64_t m = n; m < end; ++m) {
      group.push_back(m);
      size *= keptShape[m];
    }
    result.groups.push_back(group);
    result.point.push_back(merged);
    result.shape.push_back(size);
    n = end;
  }
  return result;
}

/// Whether every dim of `read` has its own index and the (batch | -, head)
/// dims are all that remain besides `seq` and `inner`: a 3-d or 4-d tensor
/// read without diagonals.
static bool wellFormed(const Read &read, int seq, int inner) {
  int64_t rank = read.point.size();
  if (rank != 3 && rank != 4)
    return false;
  for (int64_t a = 0; a < rank; ++a)
    for (int64_t b = a + 1; b < rank; ++b)
      if (!read.point[a].isConst && read.point[a] == read.point[b])
        return false;
  int64_t rest = llvm::count_if(read.point, [&](const Index &x) {
    return !x.isPlainAtom(seq) && !x.isPlainAtom(inner);
  });
  return rest == rank - 2;
}

/// Checks K or V: its dims are (batch | -, kv head | -, j, `inner`) in any
/// order, with the KV head h / n of the query head. Sets `kvHead`.
static bool checkKeyValue(AttentionProof &proof, const Read &read, int inner,
                          Index &kvHead) {
  if (dimOf(read, Index::variable(proof.j)) < 0 || dimOf(read, Index::variable(inner)) < 0 ||
      !wellFormed(read, proof.j, inner))
    return false;
  SmallVector<int64_t> rest;
  for (auto [n, index] : llvm::enumerate(read.point))
    if (!index.isPlainAtom(proof.j) && !index.isPlainAtom(inner))
      rest.push_back(n);
  int64_t queryHeads = proof.ev.extent(proof.head);
  Index batch = Index::constant(0), head = Index::constant(0);
  int64_t heads = 1;
  if (rest.size() == 2) {
    batch = read.point[rest[0]];
    head = read.point[rest[1]];
    heads = read.shape[rest[1]];
  } else if (rest.size() == 1) {
    head = read.point[rest[0]];
    heads = read.shape[rest[0]];
  } else {
    return false;
  }
  if (batch != proof.batch || ShapedType::isDynamic(heads) || queryHeads % heads)
    return false;
  if (head != proof.ev.divide(proof.head, queryHeads / heads))
    return false;
  kvHead = head;
  return true;
}

/// ALiBi terms: c slope[h] k[j] and optionally -c slope[h] q[i].
static LogicalResult proveAlibi(AttentionProof &proof, ArrayRef<Term> terms) {
  ExprRef slopeFactor, kPos, qPos;
  double c = 0;
  for (const Term &t : terms) {
    if (t.factors.size() != 2)
      return fail(proof, "a bias term is neither a mask (a tensor read at the query and key "
                         "indices, or computed from them) nor slope x position");
    ExprRef a = stripCasts(t.factors[0]), b = stripCasts(t.factors[1]);
    // A slope: a function of the head alone (a constant table read at h, or
    // computed from h).
    auto isSlope = [&](const ExprRef &f) {
      return !proof.head.isConst && mentionsAtom(f, proof.head.atom) &&
             onlyAtoms(f, {proof.head.atom});
    };
    if (!isSlope(a))
      std::swap(a, b);
    if (!isSlope(a) || (slopeFactor && !equal(slopeFactor, a)))
      return fail(proof, "a bias term has no per-head slope (a constant table read at the "
                         "head, or a function of the head alone)");
    slopeFactor = a;
    bool key = mentionsAtom(b, proof.j) && !mentionsAtom(b, proof.i);
    bool query = mentionsAtom(b, proof.i) && !mentionsAtom(b, proof.j);
    if (key && !kPos) {
      kPos = b;
      c = t.coefficient;
    } else if (query && !qPos) {
      qPos = b;
    } else {
      return fail(proof, "an ALiBi term is a function of neither the key alone nor the "
                         "query alone");
    }
  }
  if (!kPos)
    return fail(proof, "ALiBi without the key position term");
  if (qPos) {
    const Term &qTerm = *llvm::find_if(terms, [&](const Term &t) {
      return llvm::any_of(t.factors, [&](const ExprRef &f) { return equal(stripCasts(f), qPos); });
    });
    if (qTerm.coefficient != -c)
      return fail(proof, "the ALiBi query and key terms are not opposite (not slope x "
                         "(k_pos - q_pos))");
  }
  // Positions: iota over the key (query) atom, or integer vectors.
  auto position = [&](const ExprRef &f, int atom) -> bool {
    if (f->kind == ExprKind::Iota)
      return f->atom == atom;
    return f->kind == ExprKind::Leaf && f->point.size() == 1 && f->point[0].isPlainAtom(atom) &&
           getElementTypeOrSelf(f->value.getType()).isSignlessInteger();
  };
  if (!position(kPos, proof.j) || (qPos && !position(qPos, proof.i)))
    return fail(proof, "ALiBi positions are neither the key/query index nor an integer "
                       "vector read at it");
  for (const ExprRef &pos : {kPos, qPos})
    if (pos && pos->kind == ExprKind::Leaf && !proof.ev.coversShape(pos->value, pos->point))
      return failure();
  if (kPos->kind == ExprKind::Leaf) {
    if (!qPos || qPos->kind != ExprKind::Leaf)
      return failure(); // pe needs both positions or neither
    proof.kPositions = kPos;
    proof.qPositions = qPos;
  } else if (qPos && qPos->kind == ExprKind::Leaf) {
    return failure();
  }
  // slope[h] for every head, scaled by c.
  int64_t heads = proof.ev.extent(proof.head);
  if (heads <= 0)
    return failure();
  std::vector<double> slopes;
  for (int64_t h = 0; h < heads; ++h) {
    // The head index is (atom / div) mod mod: atom = h div gives head h.
    std::optional<double> s =
        evaluateAt(slopeFactor, {{proof.head.atom, h * proof.head.div}});
    if (!s)
      return fail(proof, "the slope of head " + Twine(h) + " cannot be evaluated");
    slopes.push_back(c * *s);
  }
  proof.alibi = formula::alibiMaxBias(slopes);
  if (!proof.alibi)
    return fail(proof, "the per-head slopes are not ALiBi slopes for any max_bias");
  return success();
}

/// Values at most this are a masked key (HF masks add finfo.min or -inf).
static constexpr double kMasked = -1e30;

/// A mask computed from the loop indices alone, checked at every (i, j):
/// causal (key j masked when j > i + Skv - Sq, pe's default positions), and
/// optionally a window W (also masked when i + Skv - Sq - j >= W).
static bool proveCausalWindow(AttentionProof &proof, const ExprRef &f) {
  int64_t sq = proof.ev.extent(Index::variable(proof.i));
  int64_t skv = proof.ev.extent(Index::variable(proof.j));
  if (sq <= 0 || skv <= 0 || sq * skv > (int64_t(1) << 22) || sq > skv ||
      !onlyAtoms(f, {proof.i, proof.j}))
    return false;
  int64_t offset = skv - sq;
  // The window: the keys left unmasked in the last row.
  int64_t window = 0;
  std::vector<char> masked(sq * skv);
  for (int64_t i = 0; i < sq; ++i)
    for (int64_t j = 0; j < skv; ++j) {
      std::optional<double> v = evaluateAt(f, {{proof.i, i}, {proof.j, j}});
      if (!v || !(*v == 0 || *v <= kMasked))
        return false;
      masked[i * skv + j] = *v <= kMasked;
      if (i == sq - 1 && !masked[i * skv + j])
        ++window;
    }
  bool windowed = window < sq + offset;
  for (int64_t i = 0; i < sq; ++i)
    for (int64_t j = 0; j < skv; ++j) {
      bool want = j > i + offset || (windowed && i + offset - j >= window);
      if (bool(masked[i * skv + j]) != want)
        return false;
    }
  proof.causal = true;
  if (windowed)
    proof.window = window;
  return true;
}

/// Bias terms: one mask tensor read at (b | -, h | -, i, j) (or a causal /
/// sliding-window mask computed from the indices), and ALiBi.
static LogicalResult proveBias(AttentionProof &proof, ArrayRef<Term> terms) {
  // A causal mask becomes `causal` only when Q and K are not rotated: RoPE
  // fusion needs the attention's positions to be the rotations', and a mask
  // from indices says nothing of those.
  bool rotated = proof.q.value.getDefiningOp<RopeOp>() || proof.k.value.getDefiningOp<RopeOp>();
  SmallVector<Term> alibi;
  for (const Term &t : terms) {
    if (t.factors.size() == 1 && t.coefficient == 1 && !proof.mask && !proof.causal) {
      const ExprRef &f = t.factors[0];
      if (!rotated && proveCausalWindow(proof, f))
        continue;
      std::optional<Read> read = asRead(f);
      if (!read && f->origin)
        read = Read::whole(f->origin, f->originPoint);
      // select(c, 0, -inf) made from a select on the scores: c is the mask.
      if (!read && isOpaque<arith::SelectOp>(f) &&
          f->operands[0]->origin) {
        read = Read::whole(f->operands[0]->origin, f->operands[0]->originPoint);
        proof.maskIsCondition = true;
      }
      // Every dim exactly its index's range (a broadcast dim: one element).
      if (read && !proof.ev.coversShape(read->value, read->point))
        read.reset();
      if (read && read->point.size() == 4 && read->point[2].isPlainAtom(proof.i) &&
          read->point[3].isPlainAtom(proof.j) &&
          (read->point[0] == proof.batch || read->point[0] == Index::constant(0)) &&
          (read->point[1] == proof.head || read->point[1] == Index::constant(0))) {
        proof.mask = read;
        continue;
      }
      if (read && read->point.size() == 2 && read->point[0].isPlainAtom(proof.i) &&
          read->point[1].isPlainAtom(proof.j)) {
        proof.mask = read;
        continue;
      }
    }
    alibi.push_back(t);
  }
  if (alibi.empty())
    return success();
  return proveAlibi(proof, alibi);
}

/// Proves O = attention from the contraction `root`, with P and V the two
/// factors of its body in the order given.
static LogicalResult proveAttention(AttentionProof &proof, ExprRef pFactor,
                                    ExprRef vFactor, int j) {
  proof.j = j;
  std::optional<Read> v = asRead(vFactor);
  if (v)
    v = view(proof.ev, *v);
  if (!v)
    return failure();
  // P through everything: the softmax, the scores and the Q K contraction.
  ExprRef p = stripCasts(pFactor);
  if (p->kind == ExprKind::Leaf)
    p = proof.ev.eval(p->value, p->point, Depth::Everything);
  FailureOr<SmallVector<Term>> x = softmaxArgument(p, j);
  if (failed(x))
    return failure();
  proof.shaped = true;
  // softmax(select(c, s, -inf)): the scores s, masked where c is false.
  if (x->size() == 1 && x->front().coefficient == 1 && x->front().factors.size() == 1) {
    ExprRef f = stripCasts(x->front().factors[0]);
    if (isOpaque<arith::SelectOp>(f) &&
        f->operands[2]->kind == ExprKind::Constant && f->operands[2]->number <= kMasked) {
      auto select = std::make_shared<Expr>(*f);
      proof.maskFill = f->operands[2]->number;
      select->operands = {f->operands[0], constant(0.0), constant(proof.maskFill)};
      select->origin = Value();
      *x = expand(f->operands[1]);
      x->push_back(Term{1, {select}});
    }
  }
  const Term *qk = nullptr;
  SmallVector<Term> bias;
  for (const Term &t : *x) {
    if (t.factors.size() == 1 && stripCasts(t.factors[0])->kind == ExprKind::Sum && !qk)
      qk = &t;
    else
      bias.push_back(t);
  }
  if (!qk)
    return fail(proof, "the softmax argument has no scaled Q K contraction");
  proof.scale = qk->coefficient;
  ExprRef sum = stripCasts(qk->factors[0]);
  proof.d = sum->atom;
  SmallVector<Term> products = expand(sum->operands[0]);
  if (products.size() != 1 || products[0].coefficient != 1 || products[0].factors.size() != 2)
    return fail(proof, "the scores are not a sum of products of two tensors");
  std::optional<Read> a = asRead(products[0].factors[0]), b = asRead(products[0].factors[1]);
  if (a)
    a = view(proof.ev, *a);
  if (b)
    b = view(proof.ev, *b);
  if (!a || !b)
    return fail(proof, "Q or K is not a tensor read (computed in a way the proof does not "
                       "follow)");
  if (dimOf(*a, Index::variable(j)) >= 0)
    std::swap(a, b);
  proof.q = *a;
  proof.k = *b;
  proof.v = *v;

  // The query: dims (b | -, h, i, d); i is the output atom of Q that K does
  // not mention, e the one of V that Q does not.
  auto mentions = [](const Read &read, int atom) {
    return llvm::any_of(read.point, [&](const Index &x) { return !x.isConst && x.atom == atom; });
  };
  for (const Index &index : proof.q.point)
    if (isPlain(index) && index.atom != proof.d && !mentions(proof.k, index.atom) &&
        llvm::is_contained(proof.outPoint, index))
      proof.i = index.atom;
  if (proof.i < 0 || dimOf(proof.q, Index::variable(proof.d)) < 0 ||
      !wellFormed(proof.q, proof.i, proof.d))
    return fail(proof, "Q has no query dim of its own (the softmax is not over the keys of "
                       "each query)");
  for (const Read *read : {&proof.q, &proof.k, &proof.v})
    if (!proof.ev.coversShape(read->shape, read->point))
      return fail(proof, "Q, K or V is read over part of its shape");
  SmallVector<int64_t> rest;
  for (auto [n, index] : llvm::enumerate(proof.q.point))
    if (!index.isPlainAtom(proof.i) && !index.isPlainAtom(proof.d))
      rest.push_back(n);
  if (rest.size() == 2) {
    proof.batch = proof.q.point[rest[0]];
    proof.head = proof.q.point[rest[1]];
  } else if (rest.size() == 1) {
    proof.batch = Index::constant(0);
    proof.head = proof.q.point[rest[0]];
  } else {
    return fail(proof, "Q has more than batch and head dims besides queries and head dim");
  }
  // e: the output atom of V besides j.
  for (const Index &index : proof.v.point)
    if (isPlain(index) && index.atom != j && !mentions(proof.q, index.atom) &&
        llvm::is_contained(proof.outPoint, index))
      proof.e = index.atom;
  if (proof.e < 0)
    return fail(proof, "V has no value dim of its own");
  Index kHead, vHead;
  if (!checkKeyValue(proof, proof.k, proof.d, kHead) ||
      !checkKeyValue(proof, proof.v, proof.e, vHead) || kHead != vHead)
    return fail(proof, "K and V are not read at the batch and KV head of the query (h / n)");
  return proveBias(proof, bias);
}

//===----------------------------------------------------------------------===//
// Rewriting
//===----------------------------------------------------------------------===//

/// `read.value` as a 4-d [batch, head, seq, inner] tensor: transposed into
/// that order, a missing batch dim added as 1.
/// The tensor a view reads: `read.value` sliced at the fixed dims, its
/// groups of dims merged.
static Value materialize(PatternRewriter &rewriter, Location loc, const Read &read) {
  Value value = read.value;
  auto type = cast<RankedTensorType>(value.getType());
  if (!read.fixed.empty()) {
    SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()),
        strides(type.getRank(), 1), kept;
    for (auto [dim, index] : read.fixed) {
      offsets[dim] = index;
      sizes[dim] = 1;
    }
    for (int64_t n = 0; n < type.getRank(); ++n)
      if (!llvm::any_of(read.fixed, [&](auto &f) { return f.first == n; }))
        kept.push_back(type.getShape()[n]);
    auto sliceType = RankedTensorType::get(kept, type.getElementType());
    value = tensor::ExtractSliceOp::create(rewriter, loc, sliceType, value, ValueRange{},
                                           ValueRange{}, ValueRange{},
                                           rewriter.getDenseI64ArrayAttr(offsets),
                                           rewriter.getDenseI64ArrayAttr(sizes),
                                           rewriter.getDenseI64ArrayAttr(strides));
  }
  if (llvm::any_of(read.groups, [](const ReassociationIndices &g) { return g.size() > 1; }))
    value = tensor::CollapseShapeOp::create(rewriter, loc, value, read.groups);
  return value;
}

static Value toBhsd(PatternRewriter &rewriter, Location loc, const Read &read,
                    int seq, int inner) {
  auto type = RankedTensorType::get(
      read.shape, cast<RankedTensorType>(read.value.getType()).getElementType());
  int64_t rank = type.getRank();
  // The dims besides seq and inner, in their order: (batch, head) or (head).
  SmallVector<int64_t> order;
  for (auto [n, index] : llvm::enumerate(read.point))
    if (!index.isPlainAtom(seq) && !index.isPlainAtom(inner))
      order.push_back(n);
  order.push_back(dimOf(read, Index::variable(seq)));
  order.push_back(dimOf(read, Index::variable(inner)));
  Value value = materialize(rewriter, loc, read);
  if (!llvm::equal(order, llvm::seq<int64_t>(0, rank))) {
    SmallVector<int64_t> shape;
    for (int64_t n : order)
      shape.push_back(type.getShape()[n]);
    Value init = tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
    value = linalg::TransposeOp::create(rewriter, loc, value, init, order).getResult()[0];
  }
  if (rank == 3) {
    auto t = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape{1};
    llvm::append_range(shape, t.getShape());
    value = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(shape, t.getElementType()), value,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
  }
  return value;
}

/// How the attention result [B, H, Sq, Dv] becomes O: a transpose, a collapse
/// to O's dims of more than one element (each one attention dim, or batch
/// and head merged), an expansion adding O's unit dims.
struct OutputPlan {
  SmallVector<int64_t> perm;
  SmallVector<ReassociationIndices> collapse, expand;
  SmallVector<int64_t> collapsedShape;
};

static std::optional<OutputPlan> planOutput(AttentionProof &proof, ArrayRef<int64_t> shape,
                                            RankedTensorType outType) {
  Index dims[4] = {proof.batch, proof.head, Index::variable(proof.i), Index::variable(proof.e)};
  OutputPlan plan;
  // O a transpose of the result: each dim of O one attention dim, unit dims
  // matched in order.
  if (outType.getRank() == 4) {
    SmallVector<bool> used(4, false);
    for (const Index &out : proof.outPoint)
      for (int a = 0; a < 4; ++a)
        if (!used[a] && (out.isConst ? dims[a].isConst : dims[a] == out)) {
          used[a] = true;
          plan.perm.push_back(a);
          break;
        }
    if (plan.perm.size() == 4) {
      plan.collapsedShape.assign(outType.getShape().begin(), outType.getShape().end());
      for (int64_t n = 0; n < 4; ++n) {
        plan.collapse.push_back({n});
        plan.expand.push_back({n});
      }
      return plan;
    }
    plan.perm.clear();
  }
  // The dim of O each attention dim lands in; unit attention dims go with the
  // next attention dim that is not (the last when they trail), so that dims
  // in order need no transpose.
  SmallVector<int64_t> group(4, -1);
  SmallVector<int64_t> nonUnitOut;
  for (auto [n, out] : llvm::enumerate(proof.outPoint)) {
    if (out.isConst)
      continue;
    for (int a = 0; a < 4; ++a)
      if (!dims[a].isConst && dims[a].atom == out.atom)
        group[a] = nonUnitOut.size();
    nonUnitOut.push_back(n);
  }
  if (nonUnitOut.empty())
    return std::nullopt;
  for (int a = 3, next = int(nonUnitOut.size()) - 1; a >= 0; --a) {
    if (dims[a].isConst)
      group[a] = next;
    else if (group[a] < 0)
      return std::nullopt;
    else
      next = group[a];
  }
  // Within a dim of O: unit dims, then the pieces outer first.
  plan.perm = {0, 1, 2, 3};
  // (The dim itself last: a total order, so that llvm::sort keeps ties in
  // place as a stable sort would.)
  llvm::sort(plan.perm, [&](int64_t a, int64_t b) {
    auto key = [&](int64_t x) {
      return std::tuple(group[x], !dims[x].isConst, dims[x].isConst ? 0 : -dims[x].div, x);
    };
    return key(a) < key(b);
  });
  plan.collapse.assign(nonUnitOut.size(), {});
  for (auto [slot, a] : llvm::enumerate(plan.perm))
    plan.collapse[group[a]].push_back(slot);
  for (auto [g, n] : llvm::enumerate(nonUnitOut)) {
    SmallVector<Index> parts;
    SmallVector<int64_t> sizes;
    for (int64_t slot : plan.collapse[g]) {
      parts.push_back(dims[plan.perm[slot]]);
      sizes.push_back(shape[plan.perm[slot]]);
    }
    std::optional<Index> merged = proof.ev.linearize(parts, sizes);
    if (!merged || *merged != proof.outPoint[n])
      return std::nullopt;
    plan.collapsedShape.push_back(outType.getShape()[n]);
  }
  // O's unit dims join the next dim of more than one element (the last one
  // when they trail).
  ReassociationIndices pending;
  for (int64_t n = 0; n < outType.getRank(); ++n) {
    pending.push_back(n);
    if (!proof.outPoint[n].isConst) {
      plan.expand.push_back(pending);
      pending.clear();
    }
  }
  llvm::append_range(plan.expand.back(), pending);
  return plan;
}

static Value applyOutputPlan(PatternRewriter &rewriter, Location loc, const OutputPlan &plan,
                             Value result, RankedTensorType outType) {
  auto type = cast<RankedTensorType>(result.getType());
  Value value = result;
  if (!llvm::equal(plan.perm, llvm::seq<int64_t>(0, 4))) {
    SmallVector<int64_t> shape;
    for (int64_t n : plan.perm)
      shape.push_back(type.getShape()[n]);
    Value init = tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
    value = linalg::TransposeOp::create(rewriter, loc, value, init, plan.perm).getResult()[0];
  }
  auto collapsedType = RankedTensorType::get(plan.collapsedShape, outType.getElementType());
  if (collapsedType != value.getType())
    value = tensor::CollapseShapeOp::create(rewriter, loc, collapsedType, value, plan.collapse);
  if (collapsedType != outType)
    value = tensor::ExpandShapeOp::create(rewriter, loc, outType, value, plan.expand);
  return value;
}

/// select(c, 0, -inf) of an i1 mask tensor: the additive mask pe.attention takes.
static Value additiveMask(PatternRewriter &rewriter, Location loc, Value condition,
                          Type element, double fill) {
  auto type = cast<RankedTensorType>(condition.getType());
  auto maskType = RankedTensorType::get(type.getShape(), element);
  Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(), element);
  AffineMap id = rewriter.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> parallel(type.getRank(), utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, maskType, condition, init, ArrayRef<AffineMap>{id, id}, parallel,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value zero = arith::ConstantOp::create(b, l, b.getFloatAttr(element, 0.0));
        Value masked = arith::ConstantOp::create(b, l, b.getFloatAttr(element, fill));
        Value v = arith::SelectOp::create(b, l, args[0], zero, masked);
        linalg::YieldOp::create(b, l, v);
      });
  return generic.getResult(0);
}

/// The ALiBi positions as [S] vectors.
static Value positionsOperand(const ExprRef &position) {
  return position ? position->value : Value();
}

namespace {
struct RaiseAttention : RewritePattern {
  RaiseAttention(MLIRContext *context, RaisingNotes *notes)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context), notes(notes) {}

  RaisingNotes *notes;

  LogicalResult leftAlone(PatternRewriter &rewriter, Operation *op, const Twine &why) const {
    if (notes)
      notes->notRaised[op] = ("not raised as pe.attention: " + why).str();
    return rewriter.notifyMatchFailure(op, why);
  }

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (op->hasAttr(kRaiseRefusedAttr))
      return failure(); // verify refused this rewrite
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || op->getNumResults() != 1 || linalgOp.getNumDpsInputs() != 2 ||
        linalgOp.getNumReductionLoops() != 1 ||
        !linalg::isaContractionOpInterface(linalgOp))
      return failure();
    Value root = op->getResult(0);
    auto outType = dyn_cast<RankedTensorType>(root.getType());
    if (!outType || !outType.hasStaticShape() || outType.getRank() < 3)
      return failure();

    AttentionProof proof;
    std::optional<Point> outPoint = proof.ev.freshPoint(root);
    if (!outPoint)
      return failure();
    proof.outPoint = *outPoint;
    ExprRef o = stripCasts(proof.ev.eval(root, proof.outPoint, Depth::Everything));
    if (o->kind != ExprKind::Sum)
      return rewriter.notifyMatchFailure(op, "not a contraction over one index");
    SmallVector<Term> body = expand(o->operands[0]);
    if (body.size() != 1 || body[0].coefficient != 1 || body[0].factors.size() != 2)
      return rewriter.notifyMatchFailure(op, "not a product of two tensors");
    ExprRef f0 = body[0].factors[0], f1 = body[0].factors[1];
    if (failed(proveAttention(proof, f0, f1, o->atom))) {
      AttentionProof swapped;
      swapped.ev = proof.ev;
      swapped.outPoint = proof.outPoint;
      if (failed(proveAttention(swapped, f1, f0, o->atom))) {
        const AttentionProof &shaped = swapped.shaped ? swapped : proof;
        if (shaped.shaped)
          return leftAlone(rewriter, op, shaped.why);
        return rewriter.notifyMatchFailure(op, "not a proven attention");
      }
      proof = std::move(swapped);
    }
    return rewrite(rewriter, op, proof, outType);
  }

  LogicalResult rewrite(PatternRewriter &rewriter, Operation *op,
                        AttentionProof &proof, RankedTensorType outType) const {
    Location loc = op->getLoc();
    ArrayRef<int64_t> qShape = proof.q.shape, vShape = proof.v.shape;
    int64_t batch = proof.batch.isConst ? 1 : qShape[dimOf(proof.q, proof.batch)];
    SmallVector<int64_t> shape{batch, proof.ev.extent(proof.head),
                               qShape[dimOf(proof.q, Index::variable(proof.i))],
                               vShape[dimOf(proof.v, Index::variable(proof.e))]};
    std::optional<OutputPlan> plan = planOutput(proof, shape, outType);
    if (!plan)
      return leftAlone(rewriter, op, "the output dims are not a layout of [B, H, S, D]");
    Type element = cast<RankedTensorType>(proof.q.value.getType()).getElementType();
    if (element != outType.getElementType() ||
        cast<RankedTensorType>(proof.k.value.getType()).getElementType() != element ||
        cast<RankedTensorType>(proof.v.value.getType()).getElementType() != element)
      return leftAlone(rewriter, op, "Q, K, V and the result differ in element type");
    Type maskElement = proof.maskIsCondition ? Type(rewriter.getI1Type()) : element;
    if (proof.mask &&
        cast<RankedTensorType>(proof.mask->value.getType()).getElementType() != maskElement)
      return leftAlone(rewriter, op, "the mask has another element type");
    Value q = toBhsd(rewriter, loc, proof.q, proof.i, proof.d);
    Value k = toBhsd(rewriter, loc, proof.k, proof.j, proof.d);
    Value v = toBhsd(rewriter, loc, proof.v, proof.j, proof.e);
    Value mask;
    if (proof.mask) {
      mask = proof.mask->value;
      if (proof.maskIsCondition)
        mask = additiveMask(rewriter, loc, mask, element, proof.maskFill);
      auto type = cast<RankedTensorType>(mask.getType());
      if (type.getRank() == 2)
        mask = tensor::ExpandShapeOp::create(
            rewriter, loc,
            RankedTensorType::get({1, 1, type.getShape()[0], type.getShape()[1]}, element),
            mask, ArrayRef<ReassociationIndices>{{0, 1, 2}, {3}});
    }
    auto qType = cast<RankedTensorType>(q.getType());
    auto vType = cast<RankedTensorType>(v.getType());
    auto resultType = RankedTensorType::get(
        {qType.getShape()[0], qType.getShape()[1], qType.getShape()[2], vType.getShape()[3]},
        element);
    FloatAttr alibi = proof.alibi ? rewriter.getF64FloatAttr(*proof.alibi) : FloatAttr();
    auto attention = AttentionOp::create(
        rewriter, loc, resultType, q, k, v, mask, positionsOperand(proof.qPositions),
        positionsOperand(proof.kPositions), /*sinks=*/Value(),
        /*q_rope_positions=*/Value(), /*k_rope_positions=*/Value(), /*shared_key=*/Value(),
        rewriter.getF64FloatAttr(proof.scale),
        proof.causal ? rewriter.getUnitAttr() : UnitAttr(),
        proof.window ? rewriter.getI64IntegerAttr(*proof.window) : IntegerAttr(),
        /*chunk=*/IntegerAttr(),
        /*rope=*/nullptr, alibi, /*softcap=*/FloatAttr(), /*temperature=*/TemperatureAttr());
    if (notes)
      notes->notRaised.remove_if([&](auto &entry) { return entry.first == op; });
    rewriter.replaceOp(op, applyOutputPlan(rewriter, loc, *plan, attention.getResult(), outType));
    return success();
  }
};
} // namespace

void mlir::pe::populateRaiseAttentionPatterns(RewritePatternSet &patterns,
                                              RaisingNotes *notes) {
  patterns.add<RaiseAttention>(patterns.getContext(), notes);
}
