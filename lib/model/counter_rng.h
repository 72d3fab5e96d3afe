// Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11): the
// value at a counter depends only on (key, counter), so any slice of a random
// tensor can be produced without generating what comes before it, on any rank,
// at any world size, and a recomputation replays it exactly.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace nss::model {

/// A 64-bit Philox key.
struct PhiloxKey {
  std::uint32_t lo = 0, hi = 0;
};

/// Philox4x32-10 of a 128-bit counter (four words) under `key`.
std::array<std::uint32_t, 4> philox4x32(std::array<std::uint32_t, 4> counter, PhiloxKey key);

/// The key of a named stream: a hash of `name` seeded with `seed`.
PhiloxKey stream_key(std::uint64_t seed, const std::string& name);

/// Uniform in (0, 1) from one 32-bit word.
inline double unit_uniform(std::uint32_t word) {
  return (static_cast<double>(word) + 0.5) * (1.0 / 4294967296.0);
}

/// Standard normals for elements [offset, offset + count) of the stream
/// `key`: element i comes from Philox block i / 4 (Box-Muller on word pairs).
void fill_normal(PhiloxKey key, std::int64_t offset, std::int64_t count, float mean, float stddev,
                 float* out);

/// Uniform values in (low, high) for elements [offset, offset + count).
void fill_uniform(PhiloxKey key, std::int64_t offset, std::int64_t count, float low, float high,
                  float* out);

/// Dropout keep flags (1 = keep, probability 1 - drop_probability) for
/// elements [0, count) of sub-stream `stream` of `key` (the stream fills the
/// counter's upper 64 bits, the element block the lower ones).
void fill_keep_mask(PhiloxKey key, std::uint64_t stream, std::int64_t count,
                    double drop_probability, std::uint8_t* out);

}  // namespace nss::model
