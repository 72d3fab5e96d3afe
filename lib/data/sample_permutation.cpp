#include "data/sample_permutation.h"

namespace nss::data {

std::uint64_t mix64(std::uint64_t value) {
  value += 0x9e3779b97f4a7c15ULL;
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

SamplePermutation::SamplePermutation(std::uint64_t size, std::uint64_t seed, std::uint64_t epoch)
    : size_(size) {
  unsigned bits = 0;
  while (bits < 64 && (std::uint64_t{1} << bits) < size) ++bits;
  half_bits_ = bits < 2 ? 1 : (bits + 1) / 2;
  half_mask_ = (std::uint64_t{1} << half_bits_) - 1;
  const std::uint64_t stream = mix64(mix64(seed) ^ (epoch * 0xd1b54a32d192ed03ULL));
  for (int r = 0; r < kRounds; ++r) keys_[r] = mix64(stream + static_cast<std::uint64_t>(r));
}

std::uint64_t SamplePermutation::encrypt(std::uint64_t value) const {
  std::uint64_t left = value >> half_bits_;
  std::uint64_t right = value & half_mask_;
  for (const std::uint64_t key : keys_) {
    const std::uint64_t next = left ^ (mix64(right ^ key) & half_mask_);
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

std::uint64_t SamplePermutation::operator()(std::uint64_t position) const {
  if (size_ <= 1) return position;
  // Cycle walking: encrypt until the value lands inside [0, size). The domain
  // is less than 4 * size, so this takes fewer than 4 rounds on average.
  std::uint64_t value = encrypt(position);
  while (value >= size_) value = encrypt(value);
  return value;
}

}  // namespace nss::data
