// The run's DP secret: 32 bytes from /dev/urandom, drawn at the run's first
// start and kept only in the checkpoint. Whoever knows it can recompute and
// subtract the noise, so it has no operator<<, no conversion to a string and
// no comparison; to_hex() exists for the checkpoint writer alone. run.seed is
// public and plays no part here.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "privacy/chacha20.h"

namespace nss::privacy {

enum class KeyPurpose { kNoise, kPoisson };

/// A key derived from the secret for one purpose. Distinct types per purpose
/// make passing the sampling key to the noise a compile error.
template <KeyPurpose P>
class Subkey {
 public:
  const ChaChaKey& chacha_key() const { return key_; }

 private:
  friend class SecretKey;
  explicit Subkey(const ChaChaKey& key) : key_(key) {}
  ChaChaKey key_;
};

using NoiseKey = Subkey<KeyPurpose::kNoise>;
using PoissonKey = Subkey<KeyPurpose::kPoisson>;

class SecretKey {
 public:
  /// 32 fresh bytes from `device` (read fully); throws InternalError naming the
  /// device when it cannot be opened or ends early.
  static SecretKey from_random_device(const std::string& device = "/dev/urandom");
  /// The key a checkpoint stored; throws CheckpointError, without echoing the
  /// text, unless it is exactly 64 lowercase hex digits.
  static SecretKey from_hex(std::string_view hex);
  /// 64 lowercase hex digits, for the checkpoint writer only.
  std::string to_hex() const;

  /// Subkey of the Gaussian noise (private_noise.h).
  NoiseKey noise_key() const;
  /// Subkey of the Poisson sampling (poisson_sampler.h).
  PoissonKey poisson_key() const;

 private:
  explicit SecretKey(const std::array<std::uint8_t, 32>& bytes) : bytes_(bytes) {}
  ChaChaKey derive(KeyPurpose purpose) const;

  std::array<std::uint8_t, 32> bytes_;
};

}  // namespace nss::privacy
