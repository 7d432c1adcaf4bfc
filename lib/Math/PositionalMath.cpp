//===- PositionalMath.cpp - the formulas of every positional encoding -----===//
#include "pe/Math/PositionalMath.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace mlir::pe::formula {

bool dependsOnSequenceLength(const RopeConfig &config) {
  return config.kind == ScalingKind::DynamicNtk ||
         (config.kind == ScalingKind::LongRope &&
          config.longRopeChoice == LongRopeChoice::Dynamic);
}

int64_t sequenceLength(int64_t maxPosition) {
  return maxPosition == std::numeric_limits<int64_t>::max() ? maxPosition
                                                            : maxPosition + 1;
}

double dynamicNtkTheta(const RopeConfig &config, int64_t seqLen) {
  const double r = double(config.rotaryDim), s = config.factor;
  const double lMax = double(config.originalMaxPositions);
  const double l = std::max(double(seqLen), lMax);
  return config.theta * std::pow(s * l / lMax - (s - 1.0), r / (r - 2.0));
}

bool longRopeUsesLong(const RopeConfig &config, std::optional<int64_t> seqLen) {
  switch (config.longRopeChoice) {
  case LongRopeChoice::Short:
    return false;
  case LongRopeChoice::Long:
    return true;
  case LongRopeChoice::Dynamic:
    return seqLen && *seqLen > config.originalMaxPositions;
  }
  return false;
}

// theta^(-2i/r) / freq_factors[i] for i < r/2: the frequencies every
// scaling starts from (ggml divides by its freq_factors before the YaRN ramp).
//
// Vision and Axes restart the ladder in every section: pair k, the k'-th of
// section j, gets theta^(-2k'/(r/2)) (Vision: ggml's VISION, one ratio for
// the whole block) or theta^(-2k'/(2 s_j)) (Axes: every section the RoPE of
// its own 2 s_j channels, as FLUX's n-axis embedding).
static std::vector<double> baseFrequencies(double theta, const RopeConfig &config) {
  const int64_t rotaryDim = config.rotaryDim;
  std::vector<double> invFreq(rotaryDim / 2);
  const bool restarts = !config.sections.empty() &&
                        (config.sectionMode == SectionMode::Vision ||
                         config.sectionMode == SectionMode::Axes);
  int64_t section = 0, sectionStart = 0;
  for (int64_t i = 0; i < rotaryDim / 2; ++i) {
    double exponent = -2.0 * double(i) / double(rotaryDim);
    if (restarts) {
      while (i >= sectionStart + config.sections[section])
        sectionStart += config.sections[section++];
      double width = config.sectionMode == SectionMode::Vision
                         ? double(rotaryDim / 2)
                         : 2.0 * double(config.sections[section]);
      exponent = -2.0 * double(i - sectionStart) / width;
    }
    invFreq[i] = std::pow(theta, exponent);
    if (!config.freqFactors.empty())
      invFreq[i] /= config.freqFactors[i];
  }
  return invFreq;
}

double queryTemperature(int64_t position, int64_t floorScale, double attnScale) {
  // floor((p + 1) / F) without forming p + 1 (p may be INT64_MAX).
  int64_t quotient = position / floorScale, remainder = position % floorScale;
  if (remainder < 0) {
    quotient -= 1;
    remainder += floorScale;
  }
  if (remainder == floorScale - 1)
    quotient += 1;
  // A position below -1 (none in a cache) is tuned as position 0.
  return 1.0 + attnScale * std::log1p(double(std::max<int64_t>(quotient, 0)));
}

std::vector<int64_t> pairStreams(const RopeConfig &config) {
  const int64_t half = config.rotaryDim / 2;
  const std::vector<int64_t> &sections = config.sections;
  std::vector<int64_t> streams(half, 0);
  if (sections.empty())
    return streams;
  if (config.sectionMode == SectionMode::Interleaved) {
    const int64_t fallback = sections.size() == 4 ? 3 : 0;
    for (int64_t k = 0; k < half; ++k) {
      int64_t j = k % 3;
      streams[k] = k < 3 * sections[j] ? j : fallback;
    }
    return streams;
  }
  int64_t k = 0;
  for (int64_t j = 0; j < int64_t(sections.size()); ++j)
    for (int64_t n = 0; n < sections[j] && k < half; ++n)
      streams[k++] = j;
  return streams;
}

double yarnGetMscale(double scale, double k) {
  return scale <= 1.0 ? 1.0 : 0.1 * k * std::log(scale) + 1.0;
}

double yarnCorrectionDim(double numRotations, int64_t rotaryDim, double theta,
                         int64_t originalMaxPositions) {
  return double(rotaryDim) *
         std::log(double(originalMaxPositions) / (numRotations * 2.0 * kPi)) /
         (2.0 * std::log(theta));
}

std::vector<double> inverseFrequencies(const RopeConfig &config,
                                       std::optional<int64_t> seqLen) {
  const double r = double(config.rotaryDim);
  const double s = config.factor;
  switch (config.kind) {
  case ScalingKind::None:
    return baseFrequencies(config.theta, config);

  case ScalingKind::Linear: {
    // Position interpolation: theta(p) = (p / s) inv_freq.
    std::vector<double> invFreq = baseFrequencies(config.theta, config);
    for (double &f : invFreq)
      f /= s;
    return invFreq;
  }

  case ScalingKind::Ntk:
    // theta' = theta s^(r/(r-2)).
    return baseFrequencies(config.theta * std::pow(s, r / (r - 2.0)), config);

  case ScalingKind::DynamicNtk:
    if (!seqLen || *seqLen <= config.originalMaxPositions)
      return baseFrequencies(config.theta, config);
    return baseFrequencies(dynamicNtkTheta(config, *seqLen), config);

  case ScalingKind::Yarn: {
    const int64_t half = config.rotaryDim / 2;
    double low = yarnCorrectionDim(config.betaFast, config.rotaryDim,
                                   config.theta, config.originalMaxPositions);
    double high = yarnCorrectionDim(config.betaSlow, config.rotaryDim,
                                    config.theta, config.originalMaxPositions);
    if (config.truncate) {
      low = std::floor(low);
      high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, r - 1.0);
    if (low == high)
      high += 0.001; // Hugging Face's guard against a zero-width ramp.
    std::vector<double> invFreq = baseFrequencies(config.theta, config);
    for (int64_t i = 0; i < half; ++i) {
      // ramp = 0 keeps the frequency (extrapolation), ramp = 1 divides by s.
      // A partial ramp (ggml ext_factor, vLLM extrapolation_factor e) keeps
      // the share e of the extrapolation.
      double ramp = std::clamp((double(i) - low) / (high - low), 0.0, 1.0);
      double extrapolationWeight = (1.0 - ramp) * config.extrapolationFactor;
      invFreq[i] = invFreq[i] / s * (1.0 - extrapolationWeight) +
                   invFreq[i] * extrapolationWeight;
    }
    return invFreq;
  }

  case ScalingKind::Llama3: {
    const double l0 = double(config.originalMaxPositions);
    const double lowWavelen = l0 / config.lowFreqFactor;
    const double highWavelen = l0 / config.highFreqFactor;
    std::vector<double> invFreq = baseFrequencies(config.theta, config);
    for (double &f : invFreq) {
      double wavelen = 2.0 * kPi / f;
      if (wavelen < highWavelen)
        continue;
      if (wavelen > lowWavelen) {
        f /= s;
        continue;
      }
      // Equal factors (Llama 4's): no blend band; the one wavelength L0 /
      // low_freq_factor itself is kept (transformers computes 0 / 0 there).
      if (config.highFreqFactor == config.lowFreqFactor)
        continue;
      double smooth = (l0 / wavelen - config.lowFreqFactor) /
                      (config.highFreqFactor - config.lowFreqFactor);
      f = (1.0 - smooth) * f / s + smooth * f;
    }
    return invFreq;
  }

  case ScalingKind::Proportional: {
    // Hugging Face `proportional`: theta^(-2i/r) / s for the first
    // k = floor(prf r / 2) pairs, 0 (no rotation) for the others.
    const int64_t rotated = int64_t(std::floor(config.partialRotaryFactor * r / 2.0));
    std::vector<double> invFreq = baseFrequencies(config.theta, config);
    for (int64_t i = 0; i < int64_t(invFreq.size()); ++i)
      invFreq[i] = i < rotated ? invFreq[i] / s : 0.0;
    return invFreq;
  }

  case ScalingKind::LongRope: {
    const std::vector<double> &ext = longRopeUsesLong(config, seqLen)
                                         ? config.longFactor
                                         : config.shortFactor;
    std::vector<double> invFreq(config.rotaryDim / 2);
    for (int64_t i = 0; i < config.rotaryDim / 2; ++i)
      invFreq[i] = 1.0 / (ext[i] * std::pow(config.theta, 2.0 * double(i) / r) *
                          (config.freqFactors.empty() ? 1.0 : config.freqFactors[i]));
    return invFreq;
  }
  }
  return {};
}

double attentionFactor(const RopeConfig &config) {
  return config.magnitude * scalingMagnitude(config);
}

double scalingMagnitude(const RopeConfig &config) {
  switch (config.kind) {
  case ScalingKind::Yarn:
    if (config.attentionFactor)
      return *config.attentionFactor;
    // Python truthiness: both given and non-zero.
    if (config.mscale && config.mscaleAllDim && *config.mscale != 0.0 &&
        *config.mscaleAllDim != 0.0)
      return yarnGetMscale(config.factor, *config.mscale) /
             yarnGetMscale(config.factor, *config.mscaleAllDim);
    return yarnGetMscale(config.factor);
  case ScalingKind::LongRope:
    if (config.attentionFactor)
      return *config.attentionFactor;
    if (config.factor <= 1.0)
      return 1.0;
    return std::sqrt(1.0 + std::log(config.factor) /
                               std::log(double(config.originalMaxPositions)));
  default:
    return 1.0;
  }
}

double reducedAngle(int64_t position, double invFreq) {
  // a = p * f held exactly as hi + lo (p is exact in double below 2^53).
  const double p = double(position);
  const double hi = p * invFreq;
  const double lo = std::fma(p, invFreq, -hi);
  // fma(-k, kTwoPiHi, hi) is rounded once on a result of size <= pi, so the
  // reduction adds an error of about |k| 2^-106 * 8 + ulp(pi), far below
  // float precision.
  const double k = std::nearbyint(hi / kTwoPiHi);
  double reduced = std::fma(-k, kTwoPiHi, hi) - k * kTwoPiLo + lo;
  if (reduced > kPi)
    reduced -= kTwoPiHi;
  else if (reduced < -kPi)
    reduced += kTwoPiHi;
  return reduced;
}

int64_t alibiPowerOfTwoHeads(int64_t numHeads) {
  int64_t n = 1;
  while (n <= numHeads / 2)
    n *= 2;
  return n;
}

std::pair<double, double> rotationTableEntry(int64_t position, double invFreq,
                                             double magnitude) {
  const double angle = reducedAngle(position, invFreq);
  return {magnitude * std::cos(angle), magnitude * std::sin(angle)};
}

double defaultAttentionScale(int64_t headDim) {
  return 1.0 / std::sqrt(double(headDim));
}

std::vector<double> alibiSlopes(int64_t numHeads, double maxBias) {
  std::vector<double> slopes(numHeads);
  const int64_t n = alibiPowerOfTwoHeads(numHeads);
  for (int64_t h = 0; h < numHeads; ++h)
    slopes[h] = h < n ? std::exp2(-maxBias * double(h + 1) / double(n))
                      : std::exp2(-maxBias / 2.0 * double(2 * (h - n) + 1) /
                                  double(n));
  return slopes;
}

std::optional<double> alibiMaxBias(const std::vector<double> &slopes) {
  if (slopes.empty() || !(slopes[0] > 0.0 && slopes[0] < 1.0))
    return std::nullopt;
  const int64_t heads = int64_t(slopes.size());
  const double maxBias =
      -double(alibiPowerOfTwoHeads(heads)) * std::log2(slopes[0]);
  std::vector<double> want = alibiSlopes(heads, maxBias);
  for (int64_t h = 0; h < heads; ++h)
    if (!(std::abs(slopes[h] - want[h]) <= 1e-6 * want[h]))
      return std::nullopt;
  return maxBias;
}

std::vector<double> SinusoidalTable::frequencies() const {
  std::vector<double> freqs(sinCount());
  for (int64_t k = 0; k < sinCount(); ++k) {
    const double w = shift ? std::exp(-double(k) * std::log(base) / (double(half()) - *shift))
                           : std::pow(base, -2.0 * double(k) / double(dim));
    freqs[k] = scale * w;
  }
  return freqs;
}

// interleaved: the first series at even channels 2k, the second at 2k + 1;
// concat: the first series' block, then the second's. An odd table's extra
// sin frequency k = half() is the last channel either way.
int64_t SinusoidalTable::sinChannel(int64_t k) const {
  if (interleaved)
    return k == half() ? 2 * k : 2 * k + (cosFirst ? 1 : 0);
  return cosFirst ? half() + k : k;
}

int64_t SinusoidalTable::cosChannel(int64_t k) const {
  if (interleaved)
    return 2 * k + (cosFirst ? 0 : 1);
  return cosFirst ? k : sinCount() + k;
}

} // namespace mlir::pe::formula

namespace mlir::pe::formula {

static bool matches(const std::vector<double> &want,
                    const std::vector<double> &got, double tolerance) {
  for (size_t i = 0; i < want.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= tolerance * std::abs(want[i])))
      return false;
  return true;
}

/// x rounded to an integer when it is one to a float table's precision.
static double nearInteger(double x) {
  const double rounded = std::nearbyint(x);
  return std::abs(x - rounded) <= 1e-5 * std::abs(x) ? rounded : x;
}

/// theta from the second frequency, theta^(-2/r): rounded to an integer when
/// it is one to the precision a float table carries.
static double fitTheta(const std::vector<double> &invFreq) {
  if (invFreq.size() < 2 || !(invFreq[1] > 0.0 && invFreq[1] < 1.0))
    return 10000.0;
  const double r = 2.0 * double(invFreq.size());
  const double theta = std::pow(invFreq[1], -r / 2.0);
  return nearInteger(theta);
}

std::optional<RopeConfig> fitRopeConfig(const std::vector<double> &invFreq,
                                        double magnitude, double tolerance) {
  if (invFreq.empty() || !(std::isfinite(magnitude) && magnitude > 0.0))
    return std::nullopt;
  for (double f : invFreq)
    if (!(std::isfinite(f) && f > 0.0))
      return std::nullopt;
  const int64_t half = int64_t(invFreq.size());
  RopeConfig config;
  config.rotaryDim = 2 * half;
  auto fits = [&](const RopeConfig &candidate) {
    return candidate.theta > 1.0 &&
           matches(inverseFrequencies(candidate), invFreq, tolerance);
  };

  if (magnitude == 1.0) {
    // Unscaled, or position interpolation: inv_freq[0] = 1 / s.
    const double s = 1.0 / invFreq[0];
    std::vector<double> base(invFreq);
    for (double &f : base)
      f *= s;
    config.theta = fitTheta(base);
    if (std::abs(s - 1.0) <= tolerance && fits(config))
      return config;
    config.kind = ScalingKind::Linear;
    config.factor = nearInteger(s);
    if (fits(config))
      return config;

    // Llama 3.1: the highest frequencies kept, the lowest divided by s, a
    // ramp between that is linear in base frequency:
    // smooth = (L0 f / (2 pi) - low) / (high - low).
    RopeConfig llama3;
    llama3.rotaryDim = 2 * half;
    llama3.theta = fitTheta(invFreq);
    llama3.kind = ScalingKind::Llama3;
    std::vector<double> plain = baseFrequencies(llama3.theta, llama3);
    llama3.factor = nearInteger(plain.back() / invFreq.back());
    if (llama3.factor > 1.0) {
      const double s3 = llama3.factor;
      std::vector<std::pair<double, double>> ramp; // (base f, smooth)
      for (int64_t i = 0; i < half; ++i) {
        double smooth = (invFreq[i] / plain[i] - 1.0 / s3) / (1.0 - 1.0 / s3);
        if (smooth > 1e-3 && smooth < 1.0 - 1e-3)
          ramp.push_back({plain[i], smooth});
      }
      std::vector<std::array<double, 3>> candidates; // low, high, L0
      if (ramp.size() >= 2) {
        const auto &[f0, s0] = ramp.front();
        const auto &[f1, s1] = ramp.back();
        const double a = (s1 - s0) / (f1 - f0), b = s0 - a * f0;
        if (b < 0.0) {
          const double span = -1.0 / b; // high - low with low = 1
          candidates.push_back({1.0, 1.0 + span, std::nearbyint(a * 2.0 * kPi * span)});
        }
      }
      for (double l0 : {8192.0, 4096.0, 2048.0, 16384.0, 32768.0, 65536.0, 131072.0})
        candidates.push_back({1.0, 4.0, l0});
      for (const auto &[low, high, l0] : candidates) {
        llama3.lowFreqFactor = low;
        llama3.highFreqFactor = nearInteger(high);
        llama3.originalMaxPositions = int64_t(l0);
        if (l0 >= 1.0 && fits(llama3))
          return llama3;
      }
    }
  }

  // Any frequencies: inv_freq[i] = 1 / (ext[i] theta^(2i/r)).
  RopeConfig explicitConfig;
  explicitConfig.rotaryDim = 2 * half;
  explicitConfig.theta = fitTheta(invFreq);
  if (!(explicitConfig.theta > 1.0))
    explicitConfig.theta = 10000.0;
  explicitConfig.kind = ScalingKind::LongRope;
  explicitConfig.longRopeChoice = LongRopeChoice::Short;
  explicitConfig.originalMaxPositions = 1;
  if (magnitude != 1.0)
    explicitConfig.attentionFactor = magnitude;
  std::vector<double> plain =
      baseFrequencies(explicitConfig.theta, explicitConfig);
  for (int64_t i = 0; i < half; ++i)
    explicitConfig.shortFactor.push_back(plain[i] / invFreq[i]);
  explicitConfig.longFactor = explicitConfig.shortFactor;
  return explicitConfig;
}

std::optional<std::pair<double, double>>
fitRotationColumn(const std::vector<std::array<double, 3>> &samples) {
  if (samples.size() < 2 || samples[0][0] != 0.0 || samples[1][0] != 1.0)
    return std::nullopt;
  const double m = samples[0][1];
  if (!(m > 0.0) || !(std::abs(samples[0][2]) <= 2e-6 * m))
    return std::nullopt;
  // f from p = 1, refined at each later sample by unwrapping its angle.
  double f = std::atan2(samples[1][2], samples[1][1]);
  for (size_t n = 2; n < samples.size(); ++n) {
    const auto &[p, c, s] = samples[n];
    const double a = std::atan2(s, c);
    const double turns = std::nearbyint((p * f - a) / (2.0 * kPi));
    f = (a + 2.0 * kPi * turns) / p;
  }
  for (const auto &[p, c, s] : samples) {
    const double tolerance = m * (2e-6 + 4.0 * 6e-8 * std::abs(p * f));
    if (!(std::abs(c - m * std::cos(p * f)) <= tolerance &&
          std::abs(s - m * std::sin(p * f)) <= tolerance))
      return std::nullopt;
  }
  return std::pair{f, m};
}

} // namespace mlir::pe::formula
