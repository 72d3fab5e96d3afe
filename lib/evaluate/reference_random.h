// The random draws and roundings of NeMo Safe Synthesizer's evaluation
// (numpy's legacy RandomState, pandas' sample, Python's and numpy's round),
// reproduced so that nss_evaluate samples the same rows and rounds the same
// scores as the reference for the same seeds.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace nss::evaluate {

/// numpy's legacy RandomState: MT19937 seeded with init_genrand(seed).
class LegacyRandom {
 public:
  explicit LegacyRandom(std::uint32_t seed) : engine_(seed) {}
  /// Uniform in [0, max] by masked rejection (numpy's random_interval).
  std::uint64_t interval(std::uint64_t max);
  /// Fisher-Yates from the last element down (numpy's shuffle/permutation).
  template <class T>
  void shuffle(std::vector<T>& values) {
    for (std::size_t i = values.size(); i > 1; --i) {
      const std::size_t j = static_cast<std::size_t>(interval(i - 1));
      std::swap(values[i - 1], values[j]);
    }
  }
  /// RandomState(seed).permutation(n).
  std::vector<std::size_t> permutation(std::size_t n);

 private:
  std::mt19937 engine_;
};

/// The rows DataFrame.sample(n=count, random_state=seed) takes of `rows`
/// rows, in that order (count <= rows).
std::vector<std::size_t> sample_rows(std::size_t rows, std::size_t count, std::uint32_t seed);

/// Python's round(x, digits) of a float: the exact binary value rounded half
/// to even.
double python_round(double x, int digits);

/// The same call on a numpy float64: rint(x * 10^digits) / 10^digits.
double numpy_round(double x, int digits);

}  // namespace nss::evaluate
