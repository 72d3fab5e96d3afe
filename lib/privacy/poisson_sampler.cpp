#include "privacy/poisson_sampler.h"

#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"

namespace nss::privacy {
namespace {

constexpr const char* kComponent = "privacy";
constexpr int kUniformsPerBlock = 8;  // 16 words = 8 uniforms of 64 bits, top 53 used
constexpr std::int64_t kUnitsPerGroup = kUniformsPerBlock * kChaChaLanes;

void check_rate(double q) {
  if (!(q >= 0.0 && q <= 1.0))  // also rejects NaN
    throw UsageError(kComponent, "Poisson sampling rate q = " + std::to_string(q),
                     "q is the expected batch size over the number of privacy units and must "
                     "lie in [0, 1]: lower the batch size or add units");
}

void check_units(std::int64_t units) {
  NSS_ASSERT(units >= 0 && units <= kMaxPoissonUnits, kComponent,
             std::to_string(units) + " privacy units, beyond the 2^35 the sampler covers");
}

// log P(X = k), X ~ Binomial(n, q), 0 < q < 1.
double log_pmf(std::int64_t n, double q, std::int64_t k) {
  const double nd = static_cast<double>(n);
  const double kd = static_cast<double>(k);
  return std::lgamma(nd + 1.0) - std::lgamma(kd + 1.0) - std::lgamma(nd - kd + 1.0) +
         kd * std::log(q) + (nd - kd) * std::log1p(-q);
}

// log P(X > k) for k + 1 >= floor(n q): the terms from k + 1 up, relative to
// the first, by the ratio P(j + 1) / P(j) = (n - j) / (j + 1) * q / (1 - q).
// Starting near the mode they stay below a few, so nothing overflows; past the
// mode the ratio only falls, so once a term adds less than 1e-17 of the sum
// (some 9 standard deviations out) the rest is below double rounding too.
double log_upper_tail(std::int64_t n, double q, std::int64_t k) {
  if (k >= n) return -std::numeric_limits<double>::infinity();
  const double odds = q / (1.0 - q);
  const double mode = std::floor((static_cast<double>(n) + 1.0) * q);
  double term = 1.0;
  double sum = 1.0;
  for (std::int64_t j = k + 1; j < n; ++j) {
    term *= static_cast<double>(n - j) / static_cast<double>(j + 1) * odds;
    sum += term;
    if (static_cast<double>(j) >= mode && term < 1e-17 * sum) break;
  }
  return log_pmf(n, q, k + 1) + std::log(sum);
}

}  // namespace

std::vector<std::int64_t> poisson_batch(const PoissonKey& key, std::uint64_t step,
                                        std::int64_t units, double q) {
  check_rate(q);
  check_units(units);
  // u < q for u = x 2^-53 is x < q 2^53 (exact: a power-of-two scaling), so
  // the inclusion probability is ceil(q 2^53) / 2^53: q = 1 takes every unit.
  const auto threshold = static_cast<std::uint64_t>(std::ceil(std::ldexp(q, 53)));
  const ChaChaNonce nonce = {static_cast<std::uint32_t>(step),
                             static_cast<std::uint32_t>(step >> 32), 0};
  std::vector<std::int64_t> batch;
  batch.reserve(static_cast<std::size_t>(poisson_expected_batch(units, q) * 1.01) + 64);
  ChaChaWords words;
  for (std::int64_t base = 0; base < units; base += kUnitsPerGroup) {
    chacha20_blocks(key.chacha_key(), static_cast<std::uint32_t>(base / kUniformsPerBlock), nonce,
                    words);
    std::int64_t chosen[kUnitsPerGroup];
    int count = 0;
    for (int lane = 0; lane < kChaChaLanes; ++lane)
      for (int k = 0; k < kUniformsPerBlock; ++k) {
        const std::uint64_t x =
            (std::uint64_t{words[2 * k][lane]} | std::uint64_t{words[2 * k + 1][lane]} << 32) >> 11;
        chosen[count] = base + lane * kUniformsPerBlock + k;
        count += x < threshold;  // branch-free: the outcome is random
      }
    for (int i = 0; i < count && chosen[i] < units; ++i) batch.push_back(chosen[i]);
  }
  return batch;
}

double poisson_expected_batch(std::int64_t units, double q) {
  check_rate(q);
  return q * static_cast<double>(units);
}

std::int64_t poisson_batch_bound(std::int64_t units, double q, double p) {
  check_rate(q);
  check_units(units);
  NSS_ASSERT(p > 0.0 && p < 0.5, kComponent, "overflow probability " + std::to_string(p));
  if (q == 0.0 || units == 0) return 0;
  if (q == 1.0) return units;
  // Binary search on k: P(X > k) > p at lo, <= p at hi. P(X >= floor(n q))
  // >= 1/2 > p, as the median is floor(n q) or ceil(n q).
  const double log_p = std::log(p);
  std::int64_t lo = static_cast<std::int64_t>(std::floor(static_cast<double>(units) * q)) - 1;
  std::int64_t hi = units;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (log_upper_tail(units, q, mid) <= log_p)
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

}  // namespace nss::privacy
