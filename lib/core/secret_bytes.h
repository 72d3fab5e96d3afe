// 32-byte secret keys (a private run's DP key, the PII key): drawn from the
// kernel's random device and kept as 64 lowercase hex digits. Parsing says
// where the text is wrong, never what it holds: the text is (nearly) the
// secret.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nss {

using SecretBytes = std::array<std::uint8_t, 32>;

/// 32 bytes read fully from `device`; throws InternalError(component, ...,
/// hint) naming the device when it cannot be opened or read, or ends early.
SecretBytes read_secret_bytes(const std::string& device, const std::string& component,
                              const std::string& hint);

/// The 64 lowercase hex digits of `bytes`.
std::string secret_bytes_hex(const SecretBytes& bytes);

/// `hex` read back: the bytes, or what is wrong ("has 12 characters,
/// expected 64 lowercase hex digits", "has a character other than 0-9a-f
/// near position 6") without any of the text.
struct ParsedSecret {
  std::optional<SecretBytes> bytes;
  std::string problem;
};
ParsedSecret parse_secret_hex(std::string_view hex);

}  // namespace nss
