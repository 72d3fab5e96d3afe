#include "privacy/poisson_sampler.h"

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

PoissonKey test_key() {
  return SecretKey::from_hex(kHex).poisson_key();
}

// 5 standard deviations of a Binomial(n, q) count.
double five_sigma(double n, double q) {
  return 5.0 * std::sqrt(n * q * (1.0 - q));
}

TEST(PoissonSamplerTest, BatchIsAPureFunctionOfKeyStepUnitsAndRate) {
  const std::vector<std::int64_t> batch = poisson_batch(test_key(), 3, 10000, 0.05);
  EXPECT_EQ(poisson_batch(SecretKey::from_hex(kHex).poisson_key(), 3, 10000, 0.05), batch);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    EXPECT_GE(batch[i], 0);
    EXPECT_LT(batch[i], 10000);
    if (i > 0) {
      EXPECT_LT(batch[i - 1], batch[i]);
    }
  }
  EXPECT_NE(poisson_batch(test_key(), 4, 10000, 0.05), batch);
  std::string other_hex = kHex;
  other_hex[0] = 'f';
  EXPECT_NE(poisson_batch(SecretKey::from_hex(other_hex).poisson_key(), 3, 10000, 0.05), batch);
}

TEST(PoissonSamplerTest, AUnitsDecisionDoesNotDependOnHowManyFollow) {
  const std::vector<std::int64_t> many = poisson_batch(test_key(), 8, 5000, 0.1);
  for (std::int64_t units : {1, 63, 64, 65, 1001}) {
    std::vector<std::int64_t> prefix;
    for (std::int64_t u : many)
      if (u < units) prefix.push_back(u);
    EXPECT_EQ(poisson_batch(test_key(), 8, units, 0.1), prefix) << units;
  }
}

TEST(PoissonSamplerTest, InclusionRateIsQAtEveryStreamPosition) {
  const std::int64_t n = 1 << 20;
  const double q = 0.01;
  const std::vector<std::int64_t> batch = poisson_batch(test_key(), 11, n, q);
  const double size = static_cast<double>(batch.size());
  EXPECT_LT(std::fabs(size - n * q), five_sigma(n, q));
  // Every position within a 64-unit group (ChaCha lane and word pair) at rate q.
  std::vector<double> by_position(64, 0.0);
  for (std::int64_t u : batch) by_position[u % 64] += 1.0;
  for (int p = 0; p < 64; ++p)
    EXPECT_LT(std::fabs(by_position[p] - n / 64 * q), five_sigma(n / 64, q)) << "position " << p;
}

TEST(PoissonSamplerTest, StepsAreIndependent) {
  const std::int64_t n = 1 << 20;
  const double q = 0.1;
  std::vector<char> in_first(n, 0);
  for (std::int64_t u : poisson_batch(test_key(), 20, n, q)) in_first[u] = 1;
  double both = 0;
  for (std::int64_t u : poisson_batch(test_key(), 21, n, q)) both += in_first[u];
  EXPECT_LT(std::fabs(both - n * q * q), five_sigma(n, q * q));
}

TEST(PoissonSamplerTest, ExtremeRates) {
  const std::vector<std::int64_t> all = poisson_batch(test_key(), 0, 777, 1.0);
  ASSERT_EQ(all.size(), 777u);
  for (std::int64_t u = 0; u < 777; ++u) EXPECT_EQ(all[u], u);
  EXPECT_TRUE(poisson_batch(test_key(), 0, 777, 0.0).empty());
  EXPECT_TRUE(poisson_batch(test_key(), 0, 0, 0.5).empty());
  // An empty batch is a normal outcome (the step then adds noise only).
  EXPECT_TRUE(poisson_batch(test_key(), 0, 1000, 1e-9).empty());
}

TEST(PoissonSamplerTest, RatesOutsideTheUnitIntervalAreUsageErrors) {
  for (double q : {-0.1, 1.5, std::nan("")}) {
    EXPECT_THROW(poisson_batch(test_key(), 0, 10, q), UsageError) << q;
    EXPECT_THROW(poisson_batch_bound(10, q, 1e-6), UsageError) << q;
  }
  EXPECT_THROW(poisson_batch(test_key(), 0, -1, 0.5), InternalError);
  EXPECT_THROW(poisson_batch(test_key(), 0, kMaxPoissonUnits + 1, 0.5), InternalError);
  EXPECT_THROW(poisson_batch_bound(10, 0.5, 0.5), InternalError);
  EXPECT_THROW(poisson_batch_bound(10, 0.5, 0.0), InternalError);
}

TEST(PoissonSamplerTest, ExpectedBatchIsQTimesUnits) {
  EXPECT_DOUBLE_EQ(poisson_expected_batch(60000, 256.0 / 60000), 256.0);
  EXPECT_EQ(poisson_expected_batch(0, 0.3), 0.0);
}

// Smallest k with P(X > k) <= p, from the whole pmf summed in long double.
std::int64_t brute_force_bound(std::int64_t n, double q, double p) {
  std::vector<long double> pmf(n + 1);
  for (std::int64_t k = 0; k <= n; ++k)
    pmf[k] = std::exp(std::lgamma(n + 1.0L) - std::lgamma(k + 1.0L) - std::lgamma(n - k + 1.0L) +
                      k * std::log(static_cast<long double>(q)) +
                      (n - k) * std::log1p(-static_cast<long double>(q)));
  long double above = 0;  // P(X > k), summed from the top
  std::int64_t k = n;
  while (k > 0 && above + pmf[k] <= p) above += pmf[k--];
  return k;
}

TEST(PoissonSamplerTest, BoundMatchesBruteForceTailSums) {
  for (std::int64_t n : {1, 2, 5, 20, 100, 1000, 5000})
    for (double q : {1e-4, 0.003, 0.1, 0.5, 0.9, 0.999})
      for (double p : {0.4, 0.05, 1e-3, 1e-6, 1e-12})
        EXPECT_EQ(poisson_batch_bound(n, q, p), brute_force_bound(n, q, p))
            << "n " << n << " q " << q << " p " << p;
  EXPECT_EQ(poisson_batch_bound(100, 0.0, 1e-6), 0);
  EXPECT_EQ(poisson_batch_bound(100, 1.0, 1e-6), 100);
  EXPECT_EQ(poisson_batch_bound(0, 0.5, 1e-6), 0);
}

TEST(PoissonSamplerTest, BoundIsRarelyExceededBySampledBatches) {
  const std::int64_t n = 2000;
  const double q = 0.05;
  const std::int64_t bound = poisson_batch_bound(n, q, 0.01);
  int over = 0;
  const int steps = 2000;
  for (int s = 0; s < steps; ++s)
    over += static_cast<std::int64_t>(poisson_batch(test_key(), s, n, q).size()) > bound;
  EXPECT_LT(over, steps * 0.01 + five_sigma(steps, 0.01));
}

// Sampling runs on every rank each step; this prints its cost at n = 1e6.
TEST(PoissonSamplerTest, Timing) {
  double best = 1e9;
  std::size_t size = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    size = poisson_batch(test_key(), rep, 1000000, 0.01).size();
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
  }
  std::printf("poisson_batch: n = 1e6, q = 0.01: %.2f ms (batch %zu)\n", best * 1e3, size);
  RecordProperty("milliseconds_for_1e6_units", std::to_string(best * 1e3));
}

}  // namespace
}  // namespace nss::privacy
