//===- RopeBuilders.h - RoPE as IR ------------------------------*- C++ -*-===//
//
// The one home of every RoPE formula that the compiler emits as IR: inverse
// frequencies (constant, or computed at run time for the scalings that
// depend on the sequence length), the exact angle reduction, cos/sin tables
// and the rotation of a pair, on scalars and on vectors. The same formulas
// evaluated in C++ (folds, constants) live in pe/Math/PositionalMath.h.
//
//===----------------------------------------------------------------------===//
#ifndef PE_DIALECT_PE_UTILS_ROPEBUILDERS_H
#define PE_DIALECT_PE_UTILS_ROPEBUILDERS_H

#include "pe/Dialect/PE/IR/PE.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <utility>

namespace mlir::pe {

/// The angle p * f reduced into [-pi, pi] and rounded once to f32, for an
/// integer position p (i32/i64), or a float one (a diffusion timestep, exact
/// in f64), and an f64 frequency f (scalars). p * f is
/// held exactly as hi + lo (an FMA recovers the product's rounding error),
/// k = round(hi / 2pi) turns are removed with a two-part 2pi, and the result
/// is wrapped into [-pi, pi]: the arithmetic of formula::reducedAngle, so
/// run-time tables equal folded ones.
Value buildReducedAngle(ImplicitLocOpBuilder &b, Value position, Value invFreq);

/// (m cos(a), m sin(a)) in f32 for the reduced angle of (position, invFreq),
/// m = the attention factor of `rope`.
std::pair<Value, Value> buildRopeTableEntry(ImplicitLocOpBuilder &b,
                                            RopeAttr rope, Value position,
                                            Value invFreq);

/// The rotation of one pair (f32 scalars or vectors):
/// x0' = x0 cos - x1 sin, x1' = x1 cos + x0 sin (one product and one FMA
/// each).
std::pair<Value, Value> buildPairRotation(ImplicitLocOpBuilder &b, Value x0,
                                          Value x1, Value cos, Value sin);

/// Which channels of a head a rotation touches: the block
/// [offset, offset + rotaryDim), paired by `style`; the others pass through.
struct RotatedChannels {
  RopeStyle style = RopeStyle::half;
  int64_t rotaryDim = 0, offset = 0;

  static RotatedChannels of(RopeAttr rope) {
    return {rope.getStyle(), rope.getRotaryDim(), rope.getRotaryOffset()};
  }
  int64_t end() const { return offset + rotaryDim; }
  /// The pass-through channel ranges [begin, end) of a head of `headDim`
  /// channels: [0, offset) and [offset + rotaryDim, headDim), the empty ones
  /// left out.
  SmallVector<std::pair<int64_t, int64_t>, 2> passThrough(int64_t headDim) const {
    SmallVector<std::pair<int64_t, int64_t>, 2> ranges;
    if (offset > 0)
      ranges.push_back({0, offset});
    if (end() < headDim)
      ranges.push_back({end(), headDim});
    return ranges;
  }
  /// passThrough(headDim) with a range that spans channel `split` cut there
  /// (keys whose channels from `split` on are another tensor's).
  SmallVector<std::pair<int64_t, int64_t>, 3> passThroughSplitAt(int64_t headDim,
                                                                 int64_t split) const {
    SmallVector<std::pair<int64_t, int64_t>, 3> ranges;
    for (auto [begin, end] : passThrough(headDim)) {
      if (begin < split && split < end) {
        ranges.push_back({begin, split});
        ranges.push_back({split, end});
      } else {
        ranges.push_back({begin, end});
      }
    }
    return ranges;
  }
  /// Whether every pass-through range starts and ends at a multiple of `n`.
  bool passThroughAligned(int64_t headDim, int64_t n) const {
    return offset % n == 0 && (headDim - end()) % n == 0;
  }
};

/// The channels of pair i: offset + (i, i + r/2) for `half`, offset +
/// (2i, 2i + 1) for `interleaved`.
std::pair<int64_t, int64_t> getPairChannels(const RotatedChannels &rotation, int64_t pair);
std::pair<Value, Value> buildPairChannels(ImplicitLocOpBuilder &b,
                                          const RotatedChannels &rotation, Value pair);

/// Lanes 0..n-1 of `a` and `c` zipped: a0 c0 a1 c1 ... (2n lanes).
Value buildZip(ImplicitLocOpBuilder &b, Value a, Value c);

/// Rotates the n pairs starting at pair `firstPair` (an index) of one row
/// with the f32 table vectors `cos`, `sin` (n lanes each).
/// `load(channel, lanes)` reads `lanes` channels of the row from index
/// `channel` as f32, `store(v, channel)` writes n of them. Half pairs read
/// both members as vectors; interleaved pairs read 2n channels, split them
/// into even and odd members and zip the results back.
void buildVectorPairRotation(ImplicitLocOpBuilder &b, Value cos, Value sin,
                             Value firstPair, const RotatedChannels &rotation,
                             function_ref<Value(Value, int64_t)> load,
                             function_ref<void(Value, Value)> store);

/// The i64 sequence length that a sequence-length dependent `rope` sees for
/// the integer tensor `positions`: max(positions) + 1, saturating at
/// INT64_MAX (formula::sequenceLength). Null when the frequencies of `rope`
/// do not depend on it.
Value buildSequenceLength(ImplicitLocOpBuilder &b, RopeAttr rope, Value positions);

/// The inverse frequencies of `rope` as a tensor<r/2 x f64>: a constant, or
/// for dynamic NTK and a dynamic LongRoPE choice a function of the i64
/// `seqLen` (null: not known, formula::inverseFrequencies without a length).
Value buildInverseFrequencies(ImplicitLocOpBuilder &b, RopeAttr rope, Value seqLen);

/// The tables m cos(p f), m sin(p f) of shape P + [r/2] and element type
/// `element` for integer positions of shape P, computed once per (position,
/// frequency).
std::pair<Value, Value> buildRopeTables(ImplicitLocOpBuilder &b, RopeAttr rope,
                                        Value positions, Type element);

} // namespace mlir::pe

#endif // PE_DIALECT_PE_UTILS_ROPEBUILDERS_H
