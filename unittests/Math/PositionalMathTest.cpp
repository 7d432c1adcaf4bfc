//===- PositionalMathTest.cpp - the fitting functions of lib/Math ---------===//
//
// fitRopeConfig, fitRotationColumn and alibiMaxBias recover the
// configuration that produced their input, and refuse input that no
// configuration produces.
//
//===----------------------------------------------------------------------===//
#include "pe/Math/PositionalMath.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir::pe::formula;

namespace {

RopeConfig unscaled(double theta, int64_t rotaryDim) {
  RopeConfig config;
  config.theta = theta;
  config.rotaryDim = rotaryDim;
  return config;
}

/// Every frequency of `fitted` within `tolerance` (relative) of `want`.
void expectSameFrequencies(const RopeConfig &fitted, const std::vector<double> &want,
                           double tolerance) {
  std::vector<double> got = inverseFrequencies(fitted);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tolerance * want[i]) << "frequency " << i;
}

TEST(FitRopeConfig, Unscaled) {
  std::vector<double> freq = inverseFrequencies(unscaled(10000.0, 128));
  std::optional<RopeConfig> fit = fitRopeConfig(freq, 1.0);
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->kind, ScalingKind::None);
  EXPECT_EQ(fit->theta, 10000.0);
  EXPECT_EQ(fit->rotaryDim, 128);
}

TEST(FitRopeConfig, Linear) {
  RopeConfig config = unscaled(10000.0, 64);
  config.kind = ScalingKind::Linear;
  config.factor = 4.0;
  std::optional<RopeConfig> fit = fitRopeConfig(inverseFrequencies(config), 1.0);
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->kind, ScalingKind::Linear);
  EXPECT_NEAR(fit->factor, 4.0, 1e-9);
}

TEST(FitRopeConfig, Llama3) {
  RopeConfig config = unscaled(500000.0, 128);
  config.kind = ScalingKind::Llama3;
  config.factor = 8.0;
  config.lowFreqFactor = 1.0;
  config.highFreqFactor = 4.0;
  config.originalMaxPositions = 8192;
  std::optional<RopeConfig> fit = fitRopeConfig(inverseFrequencies(config), 1.0);
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->kind, ScalingKind::Llama3);
  EXPECT_EQ(fit->theta, 500000.0);
  EXPECT_NEAR(fit->factor, 8.0, 1e-6);
  EXPECT_EQ(fit->originalMaxPositions, 8192);
}

TEST(FitRopeConfig, AnyOtherFrequenciesKeptExactly) {
  // One frequency off by 1e-4: no named scaling fits; the explicit form
  // reproduces every frequency.
  std::vector<double> freq = inverseFrequencies(unscaled(10000.0, 16));
  freq[3] *= 1.0001;
  std::optional<RopeConfig> fit = fitRopeConfig(freq, 1.25);
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->kind, ScalingKind::LongRope);
  expectSameFrequencies(*fit, freq, 1e-12);
  EXPECT_NEAR(attentionFactor(*fit), 1.25, 1e-12);
}

TEST(FitRopeConfig, RefusesNonPositiveFrequencies) {
  std::vector<double> freq = inverseFrequencies(unscaled(10000.0, 8));
  freq[2] = 0.0;
  EXPECT_FALSE(fitRopeConfig(freq, 1.0));
  freq[2] = std::nan("");
  EXPECT_FALSE(fitRopeConfig(freq, 1.0));
}

std::vector<std::array<double, 3>> tableColumn(double f, double m, int64_t rows) {
  std::vector<std::array<double, 3>> samples;
  for (int64_t p = 0; p < rows; ++p) {
    auto [c, s] = rotationTableEntry(p, f, m);
    samples.push_back({double(p), double(float(c)), double(float(s))}); // a float table
  }
  return samples;
}

TEST(FitRotationColumn, FrequencyAndMagnitude) {
  std::optional<std::pair<double, double>> fit = fitRotationColumn(tableColumn(0.0316, 1.1, 64));
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->first, 0.0316, 1e-7);
  EXPECT_NEAR(fit->second, 1.1, 1e-6);
}

TEST(FitRotationColumn, RefusesACorruptedEntry) {
  std::vector<std::array<double, 3>> samples = tableColumn(0.5, 1.0, 16);
  samples[7][1] += 1e-3;
  EXPECT_FALSE(fitRotationColumn(samples));
}

TEST(AlibiMaxBias, RecoversMaxBias) {
  for (int64_t heads : {1, 4, 6, 12, 112})
    for (double maxBias : {8.0, 16.0, 5.5}) {
      std::optional<double> fit = alibiMaxBias(alibiSlopes(heads, maxBias));
      ASSERT_TRUE(fit) << heads << " heads, max_bias " << maxBias;
      EXPECT_NEAR(*fit, maxBias, 1e-9);
    }
}

TEST(AlibiMaxBias, RefusesOtherSlopes) {
  std::vector<double> slopes = alibiSlopes(8, 8.0);
  std::swap(slopes[1], slopes[2]);
  EXPECT_FALSE(alibiMaxBias(slopes));
  EXPECT_FALSE(alibiMaxBias({0.5, 0.5, 0.5, 0.5}));
}

} // namespace
