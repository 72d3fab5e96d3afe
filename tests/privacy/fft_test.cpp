#include "privacy/fft.h"

#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::privacy {
namespace {

std::vector<double> random_values(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  std::vector<double> x(n);
  for (auto& v : x) v = dist(gen);
  return x;
}

TEST(FftTest, RealFftEqualsTheDefinition) {
  const std::vector<double> x = random_values(64, 1);
  const auto spectrum = RealFft(x.size()).forward(x);
  ASSERT_EQ(spectrum.size(), 33u);
  for (std::size_t j = 0; j < spectrum.size(); ++j) {
    std::complex<double> want = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i)
      want += x[i] * std::polar(1.0, -2.0 * M_PI * double(i * j) / double(x.size()));
    EXPECT_NEAR(std::abs(spectrum[j] - want), 0.0, 1e-12) << "bin " << j;
  }
}

TEST(FftTest, InverseRecoversTheSequence) {
  for (std::size_t n : {4u, 8u, 1024u, 1u << 16}) {
    const std::vector<double> x = random_values(n, unsigned(n));
    const RealFft fft(n);
    const std::vector<double> back = fft.inverse(fft.forward(x));
    ASSERT_EQ(back.size(), n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(back[i], x[i], 1e-13) << n << " at " << i;
  }
}

TEST(FftTest, SquaredSpectrumIsTheCircularConvolution) {
  const std::vector<double> x = random_values(128, 7);
  const RealFft fft(x.size());
  auto spectrum = fft.forward(x);
  for (auto& z : spectrum) z *= z;
  const std::vector<double> got = fft.inverse(spectrum);
  for (std::size_t k = 0; k < x.size(); ++k) {
    double want = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) want += x[i] * x[(k + x.size() - i) % x.size()];
    EXPECT_NEAR(got[k], want, 1e-11);
  }
}

TEST(FftTest, RejectsLengthsThatAreNotPowersOfTwo) {
  EXPECT_THROW(RealFft(12), InternalError);
  EXPECT_THROW(RealFft(2), InternalError);
  EXPECT_THROW(RealFft(16).forward(std::vector<double>(8)), InternalError);
}

}  // namespace
}  // namespace nss::privacy
