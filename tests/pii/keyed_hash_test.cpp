// The PII key and its keyed functions: values computed independently with
// Python's hmac and hashlib, the key file's rules (regular file, owner-only,
// 64 hex digits), creation at first use, and the draws' uniformity.
#include "pii/keyed_hash.h"

#include <cmath>
#include <fstream>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/fs.h"
#include "pii/pii_key.h"
#include "support/test_paths.h"

namespace nss::pii {
namespace {

const char* const kHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

PiiKey test_key() {
  return PiiKey::from_hex(kHex, "test");
}

TEST(KeyedHash, MatchesPythonsHmac) {
  const PiiKey key = test_key();
  // hmac.new(key, b"nss-pii/v1/hash\0email\0a@b.com", sha256).hexdigest()[:16]
  EXPECT_EQ(keyed_hash(key, "email", "a@b.com"), "0e6428dc151c9c00");
  EXPECT_EQ(key.id(), "190650476e1d0eb3");
  EXPECT_NE(keyed_hash(key, "email", "a@b.com"), keyed_hash(key, "name", "a@b.com"));
  std::string other_hex = kHex;
  other_hex[63] = '0';
  EXPECT_NE(keyed_hash(PiiKey::from_hex(other_hex, "test"), "email", "a@b.com"),
            keyed_hash(key, "email", "a@b.com"));
}

TEST(KeyedStream, BlocksAndAttemptsAsSpecified) {
  const PiiKey key = test_key();
  KeyedStream stream(key, "ssn", "123456789", 0);
  EXPECT_EQ(stream.next_u64(), 0x24b380c485b63103ULL);
  stream.next_u64();
  stream.next_u64();
  EXPECT_EQ(stream.next_u64(), 0xf6078bdc6c7c4c93ULL);  // the block's last word
  EXPECT_EQ(stream.next_u64(), 0x432ea5554468263cULL);  // the next block's first
  EXPECT_EQ(KeyedStream(key, "ssn", "123456789", 1).next_u64(), 0x07e76be0f4177ce9ULL);
}

TEST(KeyedStream, UniformDrawsAreUniform) {
  const PiiKey key = test_key();
  KeyedStream stream(key, "phone_number", "5551234567", 0);
  constexpr int kBins = 10, kDraws = 20000;
  int counts[kBins] = {};
  for (int i = 0; i < kDraws; ++i) ++counts[stream.uniform(kBins)];
  double chi2 = 0;
  for (int count : counts) chi2 += std::pow(count - kDraws / kBins, 2) / (kDraws / kBins);
  EXPECT_LT(chi2, 27.9);  // chi-square, 9 degrees of freedom, p = 0.001
  for (int i = 0; i < 1000; ++i) {
    const double u = stream.unit();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
  EXPECT_EQ(stream.uniform(1), 0u);
}

class KeyFileTest : public ::testing::Test {
 protected:
  std::string dir = testing::scratch_dir("pii_key");
  std::string write(const std::string& name, const std::string& text, mode_t mode) {
    const std::string path = dir + "/" + name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }
};

TEST_F(KeyFileTest, CreatedOnceOwnerOnlyThenReadBack) {
  const std::string path = dir + "/data.pii.key";
  bool created = false;
  const PiiKey first = read_or_create_key_file(path, created);
  EXPECT_TRUE(created);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const PiiKey again = read_or_create_key_file(path, created);
  EXPECT_FALSE(created);
  EXPECT_EQ(first.id(), again.id());
  EXPECT_EQ(read_key_file(path).id(), first.id());
  bool other_created = false;
  EXPECT_NE(read_or_create_key_file(dir + "/other.key", other_created).id(), first.id());
}

TEST_F(KeyFileTest, RefusesWhatIsNotAPrivateKeyFile) {
  const std::string good = std::string(kHex) + "\n";
  EXPECT_EQ(read_key_file(write("ok", good, 0600)).id(), test_key().id());
  EXPECT_EQ(read_key_file(write("ok_no_newline", kHex, 0400)).id(), test_key().id());
  const auto message_of = [](const std::string& path) {
    try {
      read_key_file(path);
    } catch (const DataError& e) {
      return e.message() + " | " + e.hint();
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of(write("open", good, 0644)).find("chmod 600"), std::string::npos);
  EXPECT_NE(message_of(write("group", good, 0640)).find("mode 640"), std::string::npos);
  EXPECT_NE(message_of(write("short", "abc\n", 0600)).find("has 3 characters"), std::string::npos);
  EXPECT_NE(message_of(write("long", good + "00", 0600)).find("longer than a key file"),
            std::string::npos);
  const std::string upper = message_of(write("upper", "A" + good.substr(1), 0600));
  EXPECT_NE(upper.find("near position 0"), std::string::npos);
  EXPECT_EQ(upper.find(kHex + 1), std::string::npos) << "the key's text is never echoed";
  EXPECT_NE(message_of(dir).find("not a regular file"), std::string::npos);
  EXPECT_NE(message_of(dir + "/missing").find("cannot read"), std::string::npos);
  bool created = false;
  EXPECT_THROW(read_or_create_key_file(dir, created), DataError);
  EXPECT_THROW(read_or_create_key_file(dir + "/no/such/dir/key", created), UsageError);
}

}  // namespace
}  // namespace nss::pii
