// SHA-256 (FIPS 180-4), for the configuration hash and the LoRA base-model
// file hashes recorded in checkpoints, and HMAC-SHA-256 for keyed hashing
// (the PII key). Small and dependency-free.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nss {

class Sha256 {
 public:
  Sha256();
  /// Feeds more bytes.
  void update(const void* data, std::size_t size);
  /// The digest; the object is spent afterwards.
  std::array<std::uint8_t, 32> digest();
  /// The digest as 64 lowercase hex digits; the object is spent afterwards.
  std::string hex_digest();

 private:
  void compress(const std::uint8_t* block);

  std::uint32_t state_[8];
  std::uint8_t buffer_[64];
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  // bytes
};

/// HMAC-SHA-256 (RFC 2104) under one key (any length), the key's two padded
/// blocks hashed once: each mac() then costs the message's blocks and two.
class HmacSha256 {
 public:
  explicit HmacSha256(std::string_view key);
  std::array<std::uint8_t, 32> mac(std::string_view message) const;

 private:
  Sha256 inner_, outer_;  // after the inner and the outer padded key
};

/// HMAC-SHA-256 of `message` under `key`.
std::array<std::uint8_t, 32> hmac_sha256(std::string_view key, std::string_view message);

/// SHA-256 of a string, hex.
std::string sha256_hex(const std::string& text);

/// SHA-256 of a file's contents, hex; throws DataError naming the file when unreadable.
std::string sha256_file_hex(const std::string& path);

}  // namespace nss
