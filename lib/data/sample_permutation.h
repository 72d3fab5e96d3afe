// The shuffled order of an epoch: a bijection on [0, n) chosen by (seed,
// epoch), computed per position in O(1) time and memory (a Feistel network
// with cycle walking), so no rank ever stores an n-element permutation and
// every rank, at any world size, sees the same order.
#pragma once

#include <array>
#include <cstdint>

namespace nss::data {

class SamplePermutation {
 public:
  /// The order of `epoch` for `seed` over `size` samples.
  SamplePermutation(std::uint64_t size, std::uint64_t seed, std::uint64_t epoch);

  /// The sample at `position` (< size) of the shuffled order.
  std::uint64_t operator()(std::uint64_t position) const;

  std::uint64_t size() const { return size_; }

 private:
  static constexpr int kRounds = 6;

  std::uint64_t encrypt(std::uint64_t value) const;

  std::uint64_t size_;
  unsigned half_bits_ = 0;  // the domain is 2^(2 * half_bits) >= size
  std::uint64_t half_mask_ = 0;
  std::array<std::uint64_t, kRounds> keys_{};
};

/// SplitMix64's finaliser: a fast, well-mixed 64-bit hash.
std::uint64_t mix64(std::uint64_t value);

}  // namespace nss::data
