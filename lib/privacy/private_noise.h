// DP-SGD's Gaussian noise, N(0, stddev^2) per element (stddev = sigma * C),
// addressed by (tensor name, step, element index within the tensor): element
// i's value depends on nothing else, so ranks that own any split of a
// tensor's elements add exactly the noise one rank would add to the whole,
// at every world size, with no element noised twice or correlated with
// another. Flat shard positions are not used: their padding depends on the
// world size.
#pragma once

#include <cstdint>
#include <string_view>

#include "privacy/secret_key.h"

namespace nss::privacy {

/// Elements per tensor the stream covers: 2^32 ChaCha20 blocks of 8 normals.
inline constexpr std::int64_t kMaxNoiseElements = std::int64_t{1} << 35;

/// out[k] = noise of element first + k of `tensor_name` at `step`, k < count.
/// Throws InternalError when the range leaves [0, kMaxNoiseElements) or when
/// stddev is negative or not finite.
void private_noise(const NoiseKey& key, std::string_view tensor_name, std::uint64_t step,
                   std::int64_t first, std::int64_t count, double stddev, float* out);

/// The same values before rounding to float.
void private_noise(const NoiseKey& key, std::string_view tensor_name, std::uint64_t step,
                   std::int64_t first, std::int64_t count, double stddev, double* out);

}  // namespace nss::privacy
