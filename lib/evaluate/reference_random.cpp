#include "evaluate/reference_random.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace nss::evaluate {

std::uint64_t LegacyRandom::interval(std::uint64_t max) {
  if (max == 0) return 0;
  std::uint64_t mask = max;
  for (int shift : {1, 2, 4, 8, 16, 32}) mask |= mask >> shift;
  std::uint64_t value;
  if (max <= 0xffffffffULL) {
    do value = static_cast<std::uint64_t>(engine_()) & mask;
    while (value > max);
  } else {  // numpy draws 64 bits as two words, high first
    do value = ((static_cast<std::uint64_t>(engine_()) << 32) | engine_()) & mask;
    while (value > max);
  }
  return value;
}

std::vector<std::size_t> LegacyRandom::permutation(std::size_t n) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  shuffle(order);
  return order;
}

std::vector<std::size_t> sample_rows(std::size_t rows, std::size_t count, std::uint32_t seed) {
  std::vector<std::size_t> order = LegacyRandom(seed).permutation(rows);
  order.resize(count);
  return order;
}

double python_round(double x, int digits) {
  if (!std::isfinite(x)) return x;
  // glibc prints the exact binary value correctly rounded, half to even.
  char text[512];
  std::snprintf(text, sizeof text, "%.*f", digits, x);
  return std::strtod(text, nullptr);
}

double numpy_round(double x, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::nearbyint(x * scale) / scale;
}

}  // namespace nss::evaluate
