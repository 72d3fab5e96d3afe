#include "privacy/secret_key.h"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fs.h"

namespace nss::privacy {
namespace {

constexpr const char* kComponent = "privacy";
constexpr std::size_t kKeyBytes = 32;

// Fixed nonces, one per purpose ("nss noise\0\0\0", "nss poisson\0" as
// little-endian words): the subkeys are outputs of the ChaCha20 PRF on
// distinct inputs, hence independent keys whose streams share no block.
constexpr ChaChaNonce kNoiseNonce = {0x2073736e, 0x73696f6e, 0x00000065};
constexpr ChaChaNonce kPoissonNonce = {0x2073736e, 0x73696f70, 0x006e6f73};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

SecretKey SecretKey::from_random_device(const std::string& device) {
  const std::string hint =
      "DP-SGD draws its secret key from the kernel's random device; run where " + device +
      " is a readable character device (check the container's /dev)";
  FileDescriptor fd(::open(device.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    throw InternalError(kComponent, "cannot open " + device + ": " + errno_text(errno), hint);
  std::array<std::uint8_t, kKeyBytes> bytes{};
  std::size_t got = 0;
  while (got < kKeyBytes) {
    const ssize_t n = ::read(fd.get(), bytes.data() + got, kKeyBytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw InternalError(kComponent, "cannot read " + device + ": " + errno_text(errno), hint);
    if (n == 0)
      throw InternalError(kComponent,
                          device + " ended after " + std::to_string(got) + " of " +
                              std::to_string(kKeyBytes) + " bytes",
                          hint);
    got += static_cast<std::size_t>(n);
  }
  return SecretKey(bytes);
}

SecretKey SecretKey::from_hex(std::string_view hex) {
  const std::string hint =
      "the checkpoint's DP secret key is damaged; resume from an intact checkpoint (a new key "
      "cannot continue a run)";
  if (hex.size() != 2 * kKeyBytes)
    throw CheckpointError(kComponent,
                          "DP secret key has " + std::to_string(hex.size()) +
                              " characters, expected 64 lowercase hex digits",
                          hint);
  std::array<std::uint8_t, kKeyBytes> bytes{};
  for (std::size_t i = 0; i < kKeyBytes; ++i) {
    const int hi = hex_value(hex[2 * i]);
    const int lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0)  // the position only: the text is (nearly) the secret
      throw CheckpointError(
          kComponent,
          "DP secret key has a character other than 0-9a-f near position " + std::to_string(2 * i),
          hint);
    bytes[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return SecretKey(bytes);
}

std::string SecretKey::to_hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(2 * kKeyBytes, '0');
  for (std::size_t i = 0; i < kKeyBytes; ++i) {
    hex[2 * i] = kDigits[bytes_[i] >> 4];
    hex[2 * i + 1] = kDigits[bytes_[i] & 0xf];
  }
  return hex;
}

ChaChaKey SecretKey::derive(KeyPurpose purpose) const {
  const ChaChaNonce& nonce = purpose == KeyPurpose::kNoise ? kNoiseNonce : kPoissonNonce;
  const ChaChaBlock block = chacha20_block(chacha_key_from_bytes(bytes_), 0, nonce);
  ChaChaKey key;
  for (int w = 0; w < 8; ++w) key[w] = block[w];
  return key;
}

NoiseKey SecretKey::noise_key() const {
  return NoiseKey(derive(KeyPurpose::kNoise));
}

PoissonKey SecretKey::poisson_key() const {
  return PoissonKey(derive(KeyPurpose::kPoisson));
}

}  // namespace nss::privacy
