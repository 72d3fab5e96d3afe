// SHA-256 (FIPS 180-4), for the configuration hash and the LoRA base-model
// file hashes recorded in checkpoints. Small and dependency-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace nss {

class Sha256 {
 public:
  Sha256();
  /// Feeds more bytes.
  void update(const void* data, std::size_t size);
  /// The digest as 64 lowercase hex digits; the object is spent afterwards.
  std::string hex_digest();

 private:
  void compress(const std::uint8_t* block);

  std::uint32_t state_[8];
  std::uint8_t buffer_[64];
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  // bytes
};

/// SHA-256 of a string, hex.
std::string sha256_hex(const std::string& text);

/// SHA-256 of a file's contents, hex; throws DataError naming the file when unreadable.
std::string sha256_file_hex(const std::string& path);

}  // namespace nss
