//===- PositionalMath.h - the formulas of every positional encoding -------===//
//
// The one home of the positional math: inverse frequencies of RoPE under every
// scaling, the RoPE magnitude factor, ALiBi slopes, sinusoidal frequencies and
// the reduction of rotation angles. Folds, lowerings and runtimes call these;
// nothing else restates a formula. Everything is evaluated in double precision
// so that callers round exactly once to their storage type.
//
// Formulas follow Hugging Face transformers (modeling_rope_utils.py); the
// differences to ggml, vLLM and FlashInfer are listed in docs/variants.md.
//
//===----------------------------------------------------------------------===//
#ifndef PE_MATH_POSITIONALMATH_H
#define PE_MATH_POSITIONALMATH_H

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace mlir::pe::formula {

/// pi, and 2 pi split into two doubles (kTwoPiHi + kTwoPiLo = 2 pi to about
/// 2^-106) for the exact angle reduction; the IR builders use the same.
inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kTwoPiHi = 6.283185307179586232;
inline constexpr double kTwoPiLo = 2.449293598294706414e-16;

enum class ScalingKind {
  None,
  Linear,
  Ntk,
  DynamicNtk,
  Yarn,
  Llama3,
  LongRope,
  Proportional
};
enum class LongRopeChoice { Dynamic, Short, Long };

/// How the pairs of a multi-stream RoPE take their positions (see
/// pairStreams) and frequencies (see inverseFrequencies).
enum class SectionMode { Contiguous, Interleaved, Vision, Axes };

/// Every parameter of a RoPE configuration; fields a scaling does not use keep
/// their defaults.
struct RopeConfig {
  double theta = 10000.0;
  int64_t rotaryDim = 0;
  ScalingKind kind = ScalingKind::None;
  double factor = 1.0;
  /// L0: original_max_position_embeddings (dynamic NTK: max_position_embeddings).
  int64_t originalMaxPositions = 0;
  // YaRN.
  double betaFast = 32.0;
  double betaSlow = 1.0;
  std::optional<double> mscale, mscaleAllDim, attentionFactor;
  bool truncate = true;
  // Llama 3.1.
  double lowFreqFactor = 1.0;
  double highFreqFactor = 4.0;
  // LongRoPE.
  std::vector<double> shortFactor, longFactor;
  LongRopeChoice longRopeChoice = LongRopeChoice::Dynamic;
  // Proportional: the first floor(partialRotaryFactor * r / 2) pairs rotate.
  double partialRotaryFactor = 1.0;
  // YaRN: the share of the extrapolation kept below the ramp (1: Hugging
  // Face; ggml ext_factor, vLLM extrapolation_factor).
  double extrapolationFactor = 1.0;
  // Any scaling: per-pair divisors of the base frequencies (r/2 of them, or
  // none; ggml freq_factors, llama.cpp's rope_freqs) and a factor on the
  // scaling's magnitude (ggml attn_factor).
  std::vector<double> freqFactors;
  double magnitude = 1.0;
  // Multi-stream RoPE: pairs per position stream (none: one stream).
  std::vector<int64_t> sections;
  SectionMode sectionMode = SectionMode::Contiguous;
};

/// The position stream of each of the r/2 pairs of a multi-stream RoPE (all 0
/// without sections), with s_j = sections[j]:
/// - Contiguous (M-RoPE: Qwen2-VL, ggml MROPE), Vision, Axes: the sections
///   in order, pair k in stream j when s_0 + .. + s_{j-1} <= k < .. + s_j.
/// - Interleaved (Qwen3-VL, ggml IMROPE, vLLM mrope_interleaved): pair k in
///   stream j = k mod 3 when k < 3 s_j, otherwise in the fallback stream: the
///   fourth when there are four sections (ggml), else the first (Hugging
///   Face, vLLM).
std::vector<int64_t> pairStreams(const RopeConfig &config);

/// Whether the frequencies depend on the sequence length of the call
/// (dynamic NTK, and LongRoPE with a dynamic choice of factor list).
bool dependsOnSequenceLength(const RopeConfig &config);

/// The sequence length that the sequence-length dependent scalings see for
/// positions whose largest is `maxPosition`: maxPosition + 1, saturating at
/// INT64_MAX (a position of INT64_MAX has no successor).
int64_t sequenceLength(int64_t maxPosition);

/// Dynamic NTK's base for a call of `seqLen` positions (Hugging Face
/// `_compute_dynamic_ntk_parameters`): theta (s L / L_max - (s - 1))^(r/(r-2))
/// with L = max(seqLen, L_max); theta itself while seqLen <= L_max.
double dynamicNtkTheta(const RopeConfig &config, int64_t seqLen);

/// Whether LongRoPE rotates with its long factors for a call of `seqLen`
/// positions: seqLen > original_max_position_embeddings when the choice is
/// dynamic (an unknown length picks the short factors).
bool longRopeUsesLong(const RopeConfig &config, std::optional<int64_t> seqLen);

/// The rotary_dim/2 inverse frequencies after scaling. `seqLen` is
/// max(position) + 1 of the call; std::nullopt means "not known", which
/// leaves dynamic NTK unscaled and picks LongRoPE's short factors (Hugging
/// Face's behaviour at initialisation).
std::vector<double> inverseFrequencies(const RopeConfig &config,
                                       std::optional<int64_t> seqLen = {});

/// The magnitude factor m that multiplies both cos and sin: the config's
/// `magnitude` times its scaling's (scalingMagnitude).
double attentionFactor(const RopeConfig &config);

/// The scaling's own magnitude factor (YaRN mscale, LongRoPE attention
/// factor; 1 otherwise).
double scalingMagnitude(const RopeConfig &config);

/// Hugging Face get_mscale(s, k) = s <= 1 ? 1 : 0.1 k ln s + 1.
double yarnGetMscale(double scale, double k = 1.0);

/// The pair index where a dimension makes `numRotations` full turns within
/// `originalMaxPositions` positions (YaRN): r ln(L0 / (2 pi n)) / (2 ln theta).
double yarnCorrectionDim(double numRotations, int64_t rotaryDim, double theta,
                         int64_t originalMaxPositions);

/// The angle reduced into [-pi, pi]. `position * invFreq` is formed with an
/// exact product (an FMA recovers its rounding error) and reduced with a
/// three-part 2*pi, so the result is accurate to a few ulp of double for
/// positions up to 2^40.
double reducedAngle(int64_t position, double invFreq);

/// (m cos a, m sin a) of the reduced angle a of (position, invFreq): one
/// entry of a RoPE table (m the attention factor) or, with m = 1, of a
/// sinusoidal table.
std::pair<double, double> rotationTableEntry(int64_t position, double invFreq,
                                             double magnitude = 1.0);

/// The default softmax scale of attention with head dimension `headDim`:
/// 1 / sqrt(D).
double defaultAttentionScale(int64_t headDim);

/// Llama 4's query temperature at position p:
/// 1 + attnScale ln(1 + max(0, floor((p + 1) / floorScale))), floorScale >= 1
/// (the max only matters below position -1, where the logarithm would be
/// undefined).
double queryTemperature(int64_t position, int64_t floorScale, double attnScale);

/// ALiBi slopes for `numHeads` heads (ggml's generalisation with `maxBias`; 8
/// is the paper): with n = 2^floor(log2 H), slope_h = 2^(-maxBias (h+1) / n)
/// for h < n, else 2^(-maxBias/2 (2(h-n)+1) / n).
std::vector<double> alibiSlopes(int64_t numHeads, double maxBias = 8.0);

/// n = 2^floor(log2 H), the largest power of two <= numHeads (>= 1): the
/// ALiBi head group whose slopes form one geometric sequence.
int64_t alibiPowerOfTwoHeads(int64_t numHeads);

/// The max_bias whose slopes for `slopes.size()` heads are `slopes` (each to
/// a relative 1e-6), or std::nullopt. The first slope is 2^(-max_bias / n),
/// so max_bias = -n log2(slope_0); every slope is then checked.
std::optional<double> alibiMaxBias(const std::vector<double> &slopes);

/// A RoPE configuration whose inverse frequencies are `invFreq` (each to a
/// relative `tolerance`) and whose magnitude factor is `magnitude`: the
/// unscaled, linear or Llama 3.1 scaling when one of them matches, else the
/// frequencies themselves as LongRoPE per-pair factors over a fitted theta
/// (`short` factors, magnitude as its attention factor), which reproduces
/// any frequencies. std::nullopt when a frequency is not finite and > 0.
std::optional<RopeConfig> fitRopeConfig(const std::vector<double> &invFreq,
                                        double magnitude,
                                        double tolerance = 2e-6);

/// The (frequency f, magnitude m) of a rotation table column: the samples
/// (p, c_p, s_p) must hold c_p = m cos(p f), s_p = m sin(p f) to float-table
/// accuracy (2e-6 m plus 4 ulp of a float angle p f), with p = 0 and p = 1
/// among them; f is refined along the samples' growing positions and
/// assumed in (-pi, pi). std::nullopt when they do not.
std::optional<std::pair<double, double>>
fitRotationColumn(const std::vector<std::array<double, 3>> &samples);

/// The channels of a sinusoidal table (pe.sinusoidal): `sinCount()` sin
/// channels sin(scale p w_k) and `half()` cos channels, placed interleaved or
/// in two blocks, either series first; an odd `dim` holds one more sin
/// frequency (`oddSin`) or a zero last channel.
struct SinusoidalTable {
  int64_t dim = 0;
  double base = 10000.0;
  /// w_k = base^(-k / d): d = dim / 2 without a shift (the paper's
  /// base^(-2k/dim)), d = floor(dim/2) - shift with one (fairseq: 1).
  std::optional<double> shift;
  double scale = 1.0;
  bool interleaved = true, cosFirst = false, oddSin = false;

  int64_t half() const { return dim / 2; }
  int64_t sinCount() const { return half() + (oddSin && dim % 2 ? 1 : 0); }
  /// scale * w_k for k < sinCount() (the cos series uses the first half()).
  std::vector<double> frequencies() const;
  /// The output channel of sin k (k < sinCount()) and of cos k (k < half()).
  int64_t sinChannel(int64_t k) const;
  int64_t cosChannel(int64_t k) const;
};

} // namespace mlir::pe::formula

#endif // PE_MATH_POSITIONALMATH_H
