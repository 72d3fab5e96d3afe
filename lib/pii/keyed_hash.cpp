#include "pii/keyed_hash.h"

#include <limits>

namespace nss::pii {
namespace {

void append_be32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(value >> shift));
}

std::string tagged(std::string_view purpose, std::string_view entity, std::string_view canonical) {
  std::string message = "nss-pii/v1/";
  message.append(purpose).push_back('\0');
  message.append(entity).push_back('\0');
  message.append(canonical);
  return message;
}

}  // namespace

std::string keyed_hash(const PiiKey& key, std::string_view entity, std::string_view canonical) {
  return secret_bytes_hex(key.mac(tagged("hash", entity, canonical))).substr(0, kHashHexDigits);
}

KeyedStream::KeyedStream(const PiiKey& key, std::string_view entity, std::string_view canonical,
                         std::uint32_t attempt)
    : key_(key), prefix_(tagged("surrogate", entity, canonical)) {
  prefix_.push_back('\0');
  append_be32(prefix_, attempt);
}

void KeyedStream::refill() {
  std::string message = prefix_;
  append_be32(message, block_index_++);
  block_ = key_.mac(message);
  used_ = 0;
}

std::uint64_t KeyedStream::next_u64() {
  if (used_ + 8 > block_.size()) refill();
  std::uint64_t word = 0;
  for (int k = 0; k < 8; ++k) word = word << 8 | block_[used_++];
  return word;
}

std::uint64_t KeyedStream::uniform(std::uint64_t n) {
  // The largest multiple of n that fits: words at or above it are drawn again.
  const std::uint64_t limit =
      std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % n;
  for (;;) {
    const std::uint64_t word = next_u64();
    if (word < limit) return word % n;
  }
}

double KeyedStream::unit() {
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

}  // namespace nss::pii
