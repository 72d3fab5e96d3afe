#include "model/counter_rng.h"

#include <cmath>

#include <xxhash.h>

namespace nss::model {
namespace {

constexpr std::uint32_t kMul0 = 0xD2511F53u;
constexpr std::uint32_t kMul1 = 0xCD9E8D57u;
constexpr std::uint32_t kWeyl0 = 0x9E3779B9u;
constexpr std::uint32_t kWeyl1 = 0xBB67AE85u;

std::array<std::uint32_t, 4> block(PhiloxKey key, std::uint64_t index, std::uint64_t stream = 0) {
  return philox4x32({static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32),
                     static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32)},
                    key);
}

}  // namespace

std::array<std::uint32_t, 4> philox4x32(std::array<std::uint32_t, 4> c, PhiloxKey key) {
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = static_cast<std::uint64_t>(kMul0) * c[0];
    const std::uint64_t p1 = static_cast<std::uint64_t>(kMul1) * c[2];
    c = {static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ key.lo, static_cast<std::uint32_t>(p1),
         static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ key.hi, static_cast<std::uint32_t>(p0)};
    key.lo += kWeyl0;
    key.hi += kWeyl1;
  }
  return c;
}

PhiloxKey stream_key(std::uint64_t seed, const std::string& name) {
  const std::uint64_t h = XXH3_64bits_withSeed(name.data(), name.size(), seed);
  return {static_cast<std::uint32_t>(h), static_cast<std::uint32_t>(h >> 32)};
}

void fill_normal(PhiloxKey key, std::int64_t offset, std::int64_t count, float mean, float stddev,
                 float* out) {
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  std::int64_t i = offset;
  const std::int64_t end = offset + count;
  while (i < end) {
    const auto words = block(key, static_cast<std::uint64_t>(i / 4));
    float normals[4];
    for (int pair = 0; pair < 2; ++pair) {
      const float radius =
          std::sqrt(-2.0f * std::log(static_cast<float>(unit_uniform(words[2 * pair]))));
      const float angle = static_cast<float>(kTwoPi * unit_uniform(words[2 * pair + 1]));
      normals[2 * pair] = radius * std::cos(angle);
      normals[2 * pair + 1] = radius * std::sin(angle);
    }
    for (int lane = static_cast<int>(i % 4); lane < 4 && i < end; ++lane, ++i)
      out[i - offset] = mean + stddev * normals[lane];
  }
}

void fill_uniform(PhiloxKey key, std::int64_t offset, std::int64_t count, float low, float high,
                  float* out) {
  std::int64_t i = offset;
  const std::int64_t end = offset + count;
  while (i < end) {
    const auto words = block(key, static_cast<std::uint64_t>(i / 4));
    for (int lane = static_cast<int>(i % 4); lane < 4 && i < end; ++lane, ++i)
      out[i - offset] = static_cast<float>(low + (high - low) * unit_uniform(words[lane]));
  }
}

void fill_keep_mask(PhiloxKey key, std::uint64_t stream, std::int64_t count,
                    double drop_probability, std::uint8_t* out) {
  // A word below drop_probability * 2^32 drops the element.
  const auto threshold = static_cast<std::uint64_t>(drop_probability * 4294967296.0);
  for (std::int64_t i = 0; i < count; i += 4) {
    const auto words = block(key, static_cast<std::uint64_t>(i / 4), stream);
    for (int lane = 0; lane < 4 && i + lane < count; ++lane)
      out[i + lane] = words[lane] >= threshold ? 1 : 0;
  }
}

}  // namespace nss::model
