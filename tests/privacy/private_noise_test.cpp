#include "privacy/private_noise.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::privacy {
namespace {

constexpr const char* kHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
constexpr const char* kName = "layers.3.self_attn.q_proj.weight";

NoiseKey test_key() {
  return SecretKey::from_hex(kHex).noise_key();
}

std::vector<double> noise(const NoiseKey& key, const char* name, std::uint64_t step,
                          std::int64_t first, std::int64_t count, double stddev = 1.0) {
  std::vector<double> out(count);
  private_noise(key, name, step, first, count, stddev, out.data());
  return out;
}

double correlation(const std::vector<double>& a, const std::vector<double>& b) {
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += a[i] * b[i];
    saa += a[i] * a[i];
    sbb += b[i] * b[i];
  }
  return sab / std::sqrt(saa * sbb);  // the means are 0
}

TEST(PrivateNoiseTest, AnySplitOfATensorGivesTheWhole) {
  const NoiseKey key = test_key();
  const std::int64_t n = 1001;  // not a multiple of the 64-element groups
  const std::vector<double> whole = noise(key, kName, 5, 0, n);
  // Splits as ranks of different world sizes own them, odd offsets included.
  for (const std::vector<std::int64_t>& cuts :
       {std::vector<std::int64_t>{0, 1, 63, 64, 65, 500, 1001},
        std::vector<std::int64_t>{0, 7, 8, 9, 127, 129, 999, 1001},
        std::vector<std::int64_t>{0, 501, 1001},
        std::vector<std::int64_t>{0, 251, 502, 753, 1001}}) {
    std::vector<double> pieces;
    for (std::size_t r = 0; r + 1 < cuts.size(); ++r) {
      const std::vector<double> piece = noise(key, kName, 5, cuts[r], cuts[r + 1] - cuts[r]);
      pieces.insert(pieces.end(), piece.begin(), piece.end());
    }
    EXPECT_EQ(pieces, whole);
  }
  for (std::int64_t i = 0; i < n; i += 37) EXPECT_EQ(noise(key, kName, 5, i, 1)[0], whole[i]);
}

TEST(PrivateNoiseTest, FloatIsTheRoundedDouble) {
  const NoiseKey key = test_key();
  const std::vector<double> exact = noise(key, kName, 2, 3, 300, 0.7);
  std::vector<float> rounded(300);
  private_noise(key, kName, 2, 3, 300, 0.7, rounded.data());
  for (std::size_t i = 0; i < rounded.size(); ++i)
    EXPECT_EQ(rounded[i], static_cast<float>(exact[i]));
}

TEST(PrivateNoiseTest, StandardDeviationScalesTheSameNormals) {
  const NoiseKey key = test_key();
  const std::vector<double> unit = noise(key, kName, 4, 0, 200, 1.0);
  const std::vector<double> scaled = noise(key, kName, 4, 0, 200, 3.0);
  for (std::size_t i = 0; i < unit.size(); ++i) EXPECT_EQ(scaled[i], 3.0 * unit[i]);
  for (double z : noise(key, kName, 4, 0, 200, 0.0)) EXPECT_EQ(z, 0.0);
}

TEST(PrivateNoiseTest, KeysNamesAndStepsGiveIndependentStreams) {
  const std::int64_t n = 200000;
  const double bound = 5.0 / std::sqrt(static_cast<double>(n));  // 5 sigma of a null correlation
  const NoiseKey key = test_key();
  const std::vector<double> base = noise(key, kName, 9, 0, n);
  std::string other_hex = kHex;
  other_hex[63] = 'e';
  const std::vector<std::vector<double>> others = {
      noise(SecretKey::from_hex(other_hex).noise_key(), kName, 9, 0, n),
      noise(key, "layers.3.self_attn.k_proj.weight", 9, 0, n),
      noise(key, "layers.3.self_attn.q_proj.weight.", 9, 0, n),
      noise(key, kName, 10, 0, n),
      noise(key, kName, 9 + (std::uint64_t{1} << 32), 0, n),  // the step's high bits count
      noise(key, kName, 9, 1, n)};                            // neighbouring elements
  for (std::size_t k = 0; k < others.size(); ++k) {
    EXPECT_LT(std::fabs(correlation(base, others[k])), bound) << "stream " << k;
    std::int64_t equal = 0;
    for (std::int64_t i = 0; i < n; ++i) equal += base[i] == others[k][i];
    EXPECT_EQ(equal, 0) << "stream " << k;
  }
}

TEST(PrivateNoiseTest, MomentsTailsAndDistributionAreGaussian) {
  const std::int64_t n = 1 << 20;
  const double sigma = 2.5;
  const double nd = static_cast<double>(n);
  std::vector<double> x = noise(test_key(), kName, 1, 12345, n, sigma);
  double m1 = 0, m2 = 0, m3 = 0, m4 = 0;
  std::int64_t beyond4 = 0;
  for (double v : x) {
    const double z = v / sigma;
    m1 += z;
    m2 += z * z;
    m3 += z * z * z;
    m4 += z * z * z * z;
    beyond4 += std::fabs(z) > 4.0;
  }
  m1 /= nd;
  m2 /= nd;
  m3 /= nd;
  m4 /= nd;
  // 5-sigma bounds of the sample moments of n standard normals.
  EXPECT_LT(std::fabs(m1), 5.0 / std::sqrt(nd));
  EXPECT_LT(std::fabs(m2 - 1.0), 5.0 * std::sqrt(2.0 / nd));
  EXPECT_LT(std::fabs(m3), 5.0 * std::sqrt(15.0 / nd));
  EXPECT_LT(std::fabs(m4 - 3.0), 5.0 * std::sqrt(96.0 / nd));
  // P(|Z| > 4) = 6.334e-5: about 66 of 2^20, Poisson spread.
  const double expected = 6.334e-5 * nd;
  EXPECT_LT(std::fabs(static_cast<double>(beyond4) - expected), 5.0 * std::sqrt(expected));

  // Kolmogorov-Smirnov against N(0, sigma^2): sqrt(n) D > 2.7 has probability ~1e-6.
  std::sort(x.begin(), x.end());
  double d = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double cdf = 0.5 * std::erfc(-x[i] / (sigma * std::sqrt(2.0)));
    d = std::max({d, cdf - static_cast<double>(i) / nd, static_cast<double>(i + 1) / nd - cdf});
  }
  EXPECT_LT(std::sqrt(nd) * d, 2.7);
}

TEST(PrivateNoiseTest, LastElementsOfTheStreamAreReachable) {
  const NoiseKey key = test_key();
  const std::vector<double> tail = noise(key, kName, 0, kMaxNoiseElements - 100, 100);
  for (double z : tail) EXPECT_TRUE(std::isfinite(z));
  EXPECT_EQ(noise(key, kName, 0, kMaxNoiseElements - 37, 37),
            std::vector<double>(tail.begin() + 63, tail.end()));
}

TEST(PrivateNoiseTest, RangesOutsideTheStreamAndBadDeviationsThrow) {
  const NoiseKey key = test_key();
  double out[4];
  EXPECT_THROW(private_noise(key, kName, 0, kMaxNoiseElements - 2, 4, 1.0, out), InternalError);
  EXPECT_THROW(private_noise(key, kName, 0, -1, 1, 1.0, out), InternalError);
  EXPECT_THROW(private_noise(key, kName, 0, 0, -1, 1.0, out), InternalError);
  EXPECT_THROW(private_noise(key, kName, 0, 0, 4, -1.0, out), InternalError);
  EXPECT_THROW(private_noise(key, kName, 0, 0, 4, std::nan(""), out), InternalError);
  private_noise(key, kName, 0, 0, 0, 1.0, static_cast<double*>(nullptr));  // nothing to write
}

// The trainer noises every trainable element each step; this prints the rate
// (aim: > 50 M elements/s on one core of a release build).
TEST(PrivateNoiseTest, Throughput) {
  const NoiseKey key = test_key();
  std::vector<float> out(1 << 24);
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    private_noise(key, kName, 7, 0, static_cast<std::int64_t>(out.size()), 1.0, out.data());
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    best = std::max(best, static_cast<double>(out.size()) / took.count());
  }
  std::printf("private_noise: %.1f M elements/s (one core, float out)\n", best / 1e6);
  RecordProperty("elements_per_second", std::to_string(static_cast<long long>(best)));
}

}  // namespace
}  // namespace nss::privacy
