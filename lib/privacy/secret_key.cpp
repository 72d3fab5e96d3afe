#include "privacy/secret_key.h"

#include "core/error.h"
#include "core/secret_bytes.h"

namespace nss::privacy {
namespace {

constexpr const char* kComponent = "privacy";

// Fixed nonces, one per purpose ("nss noise\0\0\0", "nss poisson\0" as
// little-endian words): the subkeys are outputs of the ChaCha20 PRF on
// distinct inputs, hence independent keys whose streams share no block.
constexpr ChaChaNonce kNoiseNonce = {0x2073736e, 0x73696f6e, 0x00000065};
constexpr ChaChaNonce kPoissonNonce = {0x2073736e, 0x73696f70, 0x006e6f73};

}  // namespace

SecretKey SecretKey::from_random_device(const std::string& device) {
  return SecretKey(read_secret_bytes(
      device, kComponent,
      "DP-SGD draws its secret key from the kernel's random device; run where " + device +
          " is a readable character device (check the container's /dev)"));
}

SecretKey SecretKey::from_hex(std::string_view hex) {
  const ParsedSecret parsed = parse_secret_hex(hex);
  if (!parsed.bytes)
    throw CheckpointError(kComponent, "DP secret key " + parsed.problem,
                          "the checkpoint's DP secret key is damaged; resume from an intact "
                          "checkpoint (a new key cannot continue a run)");
  return SecretKey(*parsed.bytes);
}

std::string SecretKey::to_hex() const {
  return secret_bytes_hex(bytes_);
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
