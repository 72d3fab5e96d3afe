// The keyed functions of PII replacement: a value's keyed hash (the `hash`
// transform) and the keyed random stream its surrogate is drawn from. Both
// are pure functions of (key, entity, canonical value), so a value maps to
// the same output in every row, column and table prepared with the key, and
// without the key nothing can be inverted or guessed.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "pii/pii_key.h"

namespace nss::pii {

/// Hex digits of a keyed hash: 64 bits, so that a million distinct values
/// collide with probability about 3e-8.
inline constexpr std::size_t kHashHexDigits = 16;

/// The first kHashHexDigits hex digits of
/// HMAC-SHA-256(key, "nss-pii/v1/hash\0" + entity + "\0" + canonical).
std::string keyed_hash(const PiiKey& key, std::string_view entity, std::string_view canonical);

/// Uniform draws for one surrogate: block i of the stream is
/// HMAC-SHA-256(key, "nss-pii/v1/surrogate\0" + entity + "\0" + canonical
/// + "\0" + be32(attempt) + be32(i)); a collision is drawn again with the
/// next attempt.
class KeyedStream {
 public:
  KeyedStream(const PiiKey& key, std::string_view entity, std::string_view canonical,
              std::uint32_t attempt);
  /// The next 64 bits (big-endian words of the blocks in order).
  std::uint64_t next_u64();
  /// Uniform in [0, n), n > 0, without modulo bias (rejection).
  std::uint64_t uniform(std::uint64_t n);
  /// Uniform in [0, 1) with 53 random bits.
  double unit();

 private:
  void refill();

  const PiiKey& key_;
  std::string prefix_;  // the message before the block counter
  std::uint32_t block_index_ = 0;
  std::array<std::uint8_t, 32> block_{};
  std::size_t used_ = 32;  // bytes of block_ consumed
};

}  // namespace nss::pii
