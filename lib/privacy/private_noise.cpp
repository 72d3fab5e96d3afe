#include "privacy/private_noise.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "core/sha256.h"

namespace nss::privacy {
namespace {

constexpr const char* kComponent = "privacy";
constexpr int kNormalsPerBlock = 8;  // 16 words = 4 Box-Muller pairs of two 64-bit uniforms
constexpr std::int64_t kNormalsPerGroup = kNormalsPerBlock * kChaChaLanes;
constexpr double kTwoPi = 6.283185307179586476925286766559;
constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;

// A key per tensor: the noise key's ChaCha20 block at a nonce made of the
// first 96 bits of SHA-256(name). Hashing makes names of any length and
// content equal-sized and collision-free in practice (two of a model's
// thousand-odd names meet with probability ~2^-77); the step then fills the
// element stream's whole nonce, so (tensor, step) pairs never share a block.
ChaChaKey tensor_key(const NoiseKey& key, std::string_view tensor_name) {
  Sha256 sha;
  sha.update(tensor_name.data(), tensor_name.size());
  const std::string digest = sha.hex_digest();
  ChaChaNonce nonce{};
  for (int byte = 0; byte < 12; ++byte) {  // little-endian words, as RFC 8439 reads nonces
    const unsigned long value = std::stoul(digest.substr(2 * byte, 2), nullptr, 16);
    nonce[byte / 4] |= static_cast<std::uint32_t>(value) << (8 * (byte % 4));
  }
  const ChaChaBlock block = chacha20_block(key.chacha_key(), 0, nonce);
  ChaChaKey derived;
  for (int w = 0; w < 8; ++w) derived[w] = block[w];
  return derived;
}

inline std::uint64_t word_pair(const ChaChaWords& words, int w, int lane) {
  return std::uint64_t{words[w][lane]} | std::uint64_t{words[w + 1][lane]} << 32;
}

// Normals of elements 64 g ... 64 g + 63: block 8 g + b holds elements
// 8 (8 g + b) + 2 p and + 1 as the Box-Muller pair p of its words 4p..4p+3.
void normal_group(const ChaChaKey& key, const ChaChaNonce& nonce, std::int64_t group, double* z) {
  ChaChaWords words;
  chacha20_blocks(key, static_cast<std::uint32_t>(group * kChaChaLanes), nonce, words);
  for (int lane = 0; lane < kChaChaLanes; ++lane) {
    for (int p = 0; p < 4; ++p) {
      // Top 53 bits of each word pair: u1 in (0, 1] keeps the log finite.
      const double u1 =
          static_cast<double>((word_pair(words, 4 * p, lane) >> 11) + 1) * kTwoToMinus53;
      const double u2 =
          static_cast<double>(word_pair(words, 4 * p + 2, lane) >> 11) * kTwoToMinus53;
      const double r = std::sqrt(-2.0 * std::log(u1));
      const double theta = kTwoPi * u2;
      z[lane * kNormalsPerBlock + 2 * p] = r * std::cos(theta);
      z[lane * kNormalsPerBlock + 2 * p + 1] = r * std::sin(theta);
    }
  }
}

template <typename T>
void fill_noise(const NoiseKey& key, std::string_view tensor_name, std::uint64_t step,
                std::int64_t first, std::int64_t count, double stddev, T* out) {
  NSS_ASSERT(first >= 0 && count >= 0 && count <= kMaxNoiseElements - first, kComponent,
             "noise range [" + std::to_string(first) + ", +" + std::to_string(count) + ") of " +
                 std::string(tensor_name) + " outside the 2^35 elements a tensor's stream covers");
  NSS_ASSERT(std::isfinite(stddev) && stddev >= 0.0, kComponent,
             "noise standard deviation " + std::to_string(stddev));
  if (count == 0) return;
  const ChaChaKey per_tensor = tensor_key(key, tensor_name);
  const ChaChaNonce nonce = {static_cast<std::uint32_t>(step),
                             static_cast<std::uint32_t>(step >> 32), 0};
  double z[kNormalsPerGroup];
  const std::int64_t end = first + count;
  for (std::int64_t i = first; i < end;) {
    const std::int64_t group = i / kNormalsPerGroup;
    const std::int64_t base = group * kNormalsPerGroup;
    normal_group(per_tensor, nonce, group, z);
    const std::int64_t stop = std::min(end, base + kNormalsPerGroup);
    for (; i < stop; ++i) *out++ = static_cast<T>(stddev * z[i - base]);
  }
}

}  // namespace

void private_noise(const NoiseKey& key, std::string_view tensor_name, std::uint64_t step,
                   std::int64_t first, std::int64_t count, double stddev, float* out) {
  fill_noise(key, tensor_name, step, first, count, stddev, out);
}

void private_noise(const NoiseKey& key, std::string_view tensor_name, std::uint64_t step,
                   std::int64_t first, std::int64_t count, double stddev, double* out) {
  fill_noise(key, tensor_name, step, first, count, stddev, out);
}

}  // namespace nss::privacy
