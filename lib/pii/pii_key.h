// The PII key: 32 secret bytes that make replacement and hashing consistent
// across a table, its holdout and later tables prepared with the same key
// (joins hold), and that nobody without it can reverse or test guesses
// against. Kept in a key file of its own: 64 lowercase hex digits and a
// newline, mode 0600. Like the DP key it cannot be printed or compared; only
// its id (a keyed hash of a fixed text) ever leaves the process.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/secret_bytes.h"
#include "core/sha256.h"

namespace nss::pii {

class PiiKey {
 public:
  /// 32 fresh bytes from the kernel's random device.
  static PiiKey from_random_device(const std::string& device = "/dev/urandom");
  /// A key from its 64 hex digits; DataError naming `origin` (never the text).
  static PiiKey from_hex(std::string_view hex, const std::string& origin);

  /// HMAC-SHA-256 of `message` under the key.
  std::array<std::uint8_t, 32> mac(std::string_view message) const;
  /// 16 hex digits that tell two reports made with the same key, and
  /// nothing of the key.
  std::string id() const;
  /// The key file's text, for the key file writer alone.
  std::string file_text() const;

 private:
  explicit PiiKey(const SecretBytes& bytes);
  SecretBytes bytes_;
  HmacSha256 hmac_;  // the key's padded blocks, hashed once
};

/// Reads the key file `path`. DataError (exit 4) naming it when it is not a
/// regular file, is readable or writable by others than its owner (anyone
/// could then test guesses against hashed values: chmod 600), or does not
/// hold exactly 64 lowercase hex digits and an optional newline.
PiiKey read_key_file(const std::string& path);

/// The key at `path`, created there first (mode 0600, fresh random bytes,
/// written atomically) when nothing is there; `created` says which.
PiiKey read_or_create_key_file(const std::string& path, bool& created);

}  // namespace nss::pii
