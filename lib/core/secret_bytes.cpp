#include "core/secret_bytes.h"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fs.h"

namespace nss {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

SecretBytes read_secret_bytes(const std::string& device, const std::string& component,
                              const std::string& hint) {
  FileDescriptor fd(::open(device.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    throw InternalError(component, "cannot open " + device + ": " + errno_text(errno), hint);
  SecretBytes bytes{};
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd.get(), bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw InternalError(component, "cannot read " + device + ": " + errno_text(errno), hint);
    if (n == 0)
      throw InternalError(component,
                          device + " ended after " + std::to_string(got) + " of " +
                              std::to_string(bytes.size()) + " bytes",
                          hint);
    got += static_cast<std::size_t>(n);
  }
  return bytes;
}

std::string secret_bytes_hex(const SecretBytes& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(2 * bytes.size(), '0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    hex[2 * i] = kDigits[bytes[i] >> 4];
    hex[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return hex;
}

ParsedSecret parse_secret_hex(std::string_view hex) {
  ParsedSecret parsed;
  SecretBytes bytes{};
  if (hex.size() != 2 * bytes.size()) {
    parsed.problem =
        "has " + std::to_string(hex.size()) + " characters, expected 64 lowercase hex digits";
    return parsed;
  }
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const int hi = hex_value(hex[2 * i]);
    const int lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      parsed.problem = "has a character other than 0-9a-f near position " + std::to_string(2 * i);
      return parsed;
    }
    bytes[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  parsed.bytes = bytes;
  return parsed;
}

}  // namespace nss
