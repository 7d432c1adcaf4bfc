//===- AttentionBuilders.h - attention's positional math as IR --*- C++ -*-===//
//
// The one home of the attention formulas that the compiler emits as IR:
// which keys a query sees (causal, sliding window; per element and per tile),
// the distance between positions, the ALiBi bias, and the steps of the online
// softmax (as in IREE's attention decomposition, one step per builder):
//
//   m' = max(m, max_j s_j)                 buildRowMax, buildRunningRowMax
//   base = m' == -inf ? 0 : m'              buildExponentBase
//   p_j = exp(s_j - base), alpha = exp(m - base)   buildExpOfDifference
//   l' = alpha l + sum_j p_j                buildRescaledSum
//   acc' = alpha acc + sum_j p_j v_j        buildRescale, buildWeightedSum
//                                           (buildWeightedTerm)
//   out = l == 0 ? 0 : acc / l              buildNormalize
//
// Every builder works on scalars and on vectors alike.
//
// NaN and inf follow IEEE arithmetic on the visible keys: a NaN score (or a
// +inf score, whose weight becomes inf - inf) makes its row NaN. A masked key
// has weight exactly 0 and contributes nothing, whatever its key, value or
// mask entry holds; a row without a visible key is 0. (A visible key whose
// weight underflows to 0 and whose value is inf or NaN may add nothing or
// NaN: kernels guard only where keys can be masked.)
//
//===----------------------------------------------------------------------===//
#ifndef PE_DIALECT_PE_UTILS_ATTENTIONBUILDERS_H
#define PE_DIALECT_PE_UTILS_ATTENTIONBUILDERS_H

#include "pe/Dialect/PE/IR/PE.h"

#include "pe/Dialect/PE/Utils/MathBuilders.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <optional>

namespace mlir::pe {

//===----------------------------------------------------------------------===//
// Which keys a query sees
//===----------------------------------------------------------------------===//

/// The position-dependent masks of an attention: causal hides keys after the
/// query (k > q); a window of W hides keys W or more positions before the
/// query (q - k >= W) and, without causal, as far after it (k - q >= W); a
/// chunk of C hides keys of another chunk (floor(k / C) != floor(q / C)).
struct PositionMask {
  bool causal = false;
  std::optional<int64_t> window;
  std::optional<int64_t> chunk;

  /// Of a pe.attention or pe.paged_attention.
  template <typename AttentionLikeOp>
  static PositionMask of(AttentionLikeOp op) {
    return {op.getCausal(), op.getWindow(), op.getChunk()};
  }
  /// Whether any key can be hidden by position.
  bool any() const { return causal || window || chunk; }
};

/// i1 (or vector of i1): ahead - behind >= distance for i64 positions and
/// distance >= 0, exact for every pair of i64 values: ahead >= behind and
/// (ahead - behind), which fits in 64 unsigned bits then, is at least
/// `distance` as an unsigned number.
Value buildAtLeastApart(ImplicitLocOpBuilder &b, Value ahead, Value behind,
                        Value distance);

/// i1 (or vector of i1): the key at i64 position `k` is hidden from the
/// query at `q` by `mask` (false when it masks nothing).
Value buildIsMasked(ImplicitLocOpBuilder &b, const PositionMask &mask, Value q,
                    Value k);

/// The same from the distance k - q held exactly in f32 (positions within
/// 2^24 of each other), for a mask without chunks (which need the positions
/// themselves).
Value buildIsMaskedByDistance(ImplicitLocOpBuilder &b, const PositionMask &mask,
                              Value kMinusQ);

/// Position `i` of batch row `bi` of a positions buffer ([S] or [B, S],
/// i32 or i64) as i64.
Value buildPositionAt(ImplicitLocOpBuilder &b, Value positions, Value bi, Value i);

/// k - q for i64 positions (scalars or vectors), rounded once to f32,
/// without i64 overflow: the difference is formed as an unsigned magnitude
/// with a sign.
Value buildPositionDistance(ImplicitLocOpBuilder &b, Value k, Value q);

/// Whether a tile of queries at positions [qMin, qMax] and keys at
/// [kMin, kMax] needs masking (i64 scalars in, i1 out): `hidden` when every
/// key is hidden from every query (the tile is skipped), `partial` when some
/// key may be hidden from some query (the tile is masked per element).
struct TileVisibility {
  Value hidden;
  Value partial;
};
TileVisibility buildTileVisibility(ImplicitLocOpBuilder &b, const PositionMask &mask,
                                   Value qMin, Value qMax, Value kMin, Value kMax);

//===----------------------------------------------------------------------===//
// ALiBi
//===----------------------------------------------------------------------===//

/// The slopes of `heads` query heads (formula::alibiSlopes), each rounded
/// once to `element` (f32 by default), as a tensor<heads x element>
/// constant.
Value buildAlibiSlopes(ImplicitLocOpBuilder &b, int64_t heads, double maxBias,
                       Type element = {});

/// score + mask for an entry of an additive mask, and -inf where the entry
/// is -inf: a key the mask hides is masked whatever its score holds (NaN
/// + -inf would be NaN).
Value buildAddMask(ImplicitLocOpBuilder &b, Value score, Value maskEntry);

/// score + slope * distance as one FMA (f32 scalars or vectors), the ALiBi
/// bias -slope (q - k) added to a score: distance is k - q
/// (buildPositionDistance), or -|k - q| for the symmetric bias. A score of 0
/// gives the bias itself.
Value buildAlibiScore(ImplicitLocOpBuilder &b, Value score, Value slope,
                      Value distance);

/// The query temperature t(p) of `temperature` (formula::queryTemperature)
/// in f32 for an i64 position p (scalar or vector): max(0, floor((p + 1) /
/// F)) exactly in i64, ln(1 + x) and one FMA in f32.
Value buildQueryTemperature(ImplicitLocOpBuilder &b, TemperatureAttr temperature,
                            Value position);

/// Logit soft-capping of a scaled score (f32 scalar or vector): cap *
/// tanh(score / cap), as Gemma 2 computes it (division, tanh,
/// multiplication). `cap` is the op's softcap.
Value buildSoftcapScore(ImplicitLocOpBuilder &b, Value score, double cap);

//===----------------------------------------------------------------------===//
// Online softmax
//===----------------------------------------------------------------------===//

/// The exponential the softmax steps use: math.exp, or buildExpNonPositive
/// (MathBuilders.h).
using ExpBuilder = function_ref<Value(ImplicitLocOpBuilder &, Value)>;
Value buildMathExp(ImplicitLocOpBuilder &b, Value x);

/// m' = max(m, s), ignoring NaN: a NaN score makes its row NaN through its
/// weight exp(NaN - base) = NaN (the exponentials must propagate NaN).
/// arith.maxnumf, a combiner linalg's vectorizer recognizes.
Value buildRowMax(ImplicitLocOpBuilder &b, Value m, Value s);
/// The same for a running maximum m that is never NaN (it starts at -inf):
/// s > m ? s : m, which x86 computes in one vmaxps (maxnumf needs a NaN
/// fix-up there).
Value buildRunningRowMax(ImplicitLocOpBuilder &b, Value m, Value s);

/// base = m' == -inf ? 0 : m': what the exponents subtract. A row without a
/// visible key yet has m' = -inf; subtracting 0 gives p = exp(-inf) = 0 and
/// alpha = exp(-inf) = 0, never exp(-inf - -inf) = NaN.
Value buildExponentBase(ImplicitLocOpBuilder &b, Value rowMax);

/// exp(x - base): a key's weight p = exp(s - base), or the correction of the
/// running sums alpha = exp(m_old - base).
Value buildExpOfDifference(ImplicitLocOpBuilder &b, Value x, Value base,
                           ExpBuilder exp);

/// l' = alpha l + sum_j p_j.
Value buildRescaledSum(ImplicitLocOpBuilder &b, Value l, Value alpha, Value rowSum);

/// acc' = alpha acc.
Value buildRescale(ImplicitLocOpBuilder &b, Value acc, Value alpha);

/// acc + p v, where a key of weight p = 0 (every masked key) adds nothing,
/// even when its value is NaN or inf: one FMA merged into acc under p != 0
/// (a masked FMA on AVX-512). Where no key can be masked, a plain FMA
/// p v + acc is the same sum.
Value buildWeightedSum(ImplicitLocOpBuilder &b, Value acc, Value p, Value v);

/// The term p v of that sum on its own, 0 for p = 0, for a reduction whose
/// combiner must be a plain add (linalg's vectorizer).
Value buildWeightedTerm(ImplicitLocOpBuilder &b, Value p, Value v);

/// out = l == 0 ? 0 : acc / l (a row without a visible key is 0).
Value buildNormalize(ImplicitLocOpBuilder &b, Value acc, Value l);

} // namespace mlir::pe

#endif // PE_DIALECT_PE_UTILS_ATTENTIONBUILDERS_H
