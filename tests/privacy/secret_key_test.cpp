#include "privacy/secret_key.h"

#include <ostream>
#include <string>
#include <type_traits>

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::privacy {
namespace {

constexpr const char* kHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

template <typename T, typename = void>
struct Streamable : std::false_type {};
template <typename T>
struct Streamable<T, std::void_t<decltype(std::declval<std::ostream&>() << std::declval<T>())>>
    : std::true_type {};

// The key must not reach a log or an export by accident.
static_assert(!Streamable<SecretKey>::value);
static_assert(!Streamable<NoiseKey>::value);
static_assert(!std::is_convertible_v<SecretKey, std::string>);
static_assert(!std::is_convertible_v<SecretKey, std::string_view>);
static_assert(!std::is_constructible_v<SecretKey, std::string>);
// The noise cannot be drawn with the sampling key, nor the reverse.
static_assert(!std::is_convertible_v<NoiseKey, PoissonKey>);
static_assert(!std::is_convertible_v<PoissonKey, NoiseKey>);

bool is_lower_hex(const std::string& text) {
  return text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST(SecretKeyTest, RandomDeviceGivesAFreshKeyEachTime) {
  const std::string a = SecretKey::from_random_device().to_hex();
  const std::string b = SecretKey::from_random_device().to_hex();
  EXPECT_EQ(a.size(), 64u);
  EXPECT_TRUE(is_lower_hex(a));
  EXPECT_NE(a, b);
}

TEST(SecretKeyTest, HexRoundTrips) {
  EXPECT_EQ(SecretKey::from_hex(kHex).to_hex(), kHex);
  const std::string fresh = SecretKey::from_random_device().to_hex();
  EXPECT_EQ(SecretKey::from_hex(fresh).to_hex(), fresh);
}

TEST(SecretKeyTest, MalformedHexIsRejectedWithoutEchoingIt) {
  const std::string good = kHex;
  std::string upper = good;
  upper[10] = 'A';
  std::string non_hex = good;
  non_hex[63] = 'g';
  for (const std::string& bad :
       {std::string(), good.substr(0, 63), good + "0", upper, non_hex, " " + good.substr(1)}) {
    try {
      SecretKey::from_hex(bad);
      ADD_FAILURE() << "accepted a malformed key of " << bad.size() << " characters";
    } catch (const CheckpointError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("[privacy]"), std::string::npos) << what;
      EXPECT_NE(what.find("hint:"), std::string::npos) << what;
      EXPECT_EQ(what.find(good.substr(20, 12)), std::string::npos) << what;
    }
  }
}

TEST(SecretKeyTest, UnreadableDeviceNamesItself) {
  try {
    SecretKey::from_random_device("/nonexistent/urandom");
    ADD_FAILURE() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open /nonexistent/urandom"), std::string::npos)
        << e.what();
    EXPECT_NE(e.hint().find("random device"), std::string::npos) << e.hint();
  }
}

TEST(SecretKeyTest, DeviceEndingEarlyIsAnError) {
  try {
    SecretKey::from_random_device("/dev/null");
    ADD_FAILURE() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/null ended after 0 of 32 bytes"), std::string::npos)
        << e.what();
  }
}

TEST(SecretKeyTest, SubkeysAreDeterministicAndDistinctPerPurpose) {
  const SecretKey key = SecretKey::from_hex(kHex);
  const ChaChaKey noise = key.noise_key().chacha_key();
  const ChaChaKey poisson = key.poisson_key().chacha_key();
  EXPECT_EQ(noise, SecretKey::from_hex(kHex).noise_key().chacha_key());
  EXPECT_EQ(poisson, SecretKey::from_hex(kHex).poisson_key().chacha_key());
  EXPECT_NE(noise, poisson);
  std::array<std::uint8_t, 32> raw;
  for (int i = 0; i < 32; ++i) raw[i] = static_cast<std::uint8_t>(i);
  EXPECT_NE(noise, chacha_key_from_bytes(raw));
  EXPECT_NE(poisson, chacha_key_from_bytes(raw));

  std::string other = kHex;
  other[0] = '1';
  EXPECT_NE(SecretKey::from_hex(other).noise_key().chacha_key(), noise);
  EXPECT_NE(SecretKey::from_hex(other).poisson_key().chacha_key(), poisson);
}

}  // namespace
}  // namespace nss::privacy
