#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>

#include "core/dtype.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/half.h"
#include "core/secret_bytes.h"
#include "core/sha256.h"
#include "core/units.h"
#include "support/test_paths.h"

namespace nss {
namespace {

TEST(Error, MessageCarriesComponentAndHint) {
  const DataError error("data", "cannot open x.h5", "check data.path");
  EXPECT_EQ(error.code(), ExitCode::kData);
  EXPECT_STREQ(error.what(), "[data] cannot open x.h5\n  hint: check data.path");
  EXPECT_EQ(std::string(InternalError("comm", "boom").what()), "[comm] boom");
}

TEST(Error, ExitCodesMatchTheContract) {
  EXPECT_EQ(static_cast<int>(ExitCode::kUsage), 2);
  EXPECT_EQ(static_cast<int>(ExitCode::kResources), 3);
  EXPECT_EQ(static_cast<int>(ExitCode::kData), 4);
  EXPECT_EQ(static_cast<int>(ExitCode::kCheckpoint), 5);
  EXPECT_EQ(static_cast<int>(ExitCode::kCollectiveTimeout), 6);
  EXPECT_EQ(static_cast<int>(ExitCode::kStopped), 7);
  EXPECT_EQ(static_cast<int>(ExitCode::kRequeue), 75);
  EXPECT_EQ(UsageError("c", "m").code(), ExitCode::kUsage);
  EXPECT_EQ(ResourceError("c", "m").code(), ExitCode::kResources);
  EXPECT_EQ(CheckpointError("c", "m").code(), ExitCode::kCheckpoint);
}

TEST(Error, AssertNamesFileAndLine) {
  try {
    NSS_ASSERT(1 + 1 == 3, "test", "arithmetic");
    FAIL() << "NSS_ASSERT did not throw";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("core_test.cpp:"), std::string::npos) << e.what();
  }
}

TEST(DType, SizesAndNames) {
  EXPECT_EQ(dtype_size(DType::kFloat32), 4u);
  EXPECT_EQ(dtype_size(DType::kBFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kUInt64), 8u);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::kBFloat16);
  EXPECT_STREQ(dtype_name(DType::kFloat16), "float16");
  EXPECT_THROW(parse_dtype("fp33"), UsageError);
  static_assert(dtype_of<std::int64_t>() == DType::kInt64);
}

TEST(Half, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
  // 1 + 2^-8 is exactly halfway between 1 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3 * 2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6: ties to even (up).
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Half, Float16RoundTripsAndRounds) {
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f})
    EXPECT_EQ(f16_to_float(float_to_f16(v)), v) << v;
  EXPECT_EQ(float_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_f16(65520.0f), 0x7c00);  // rounds to infinity
  EXPECT_EQ(float_to_f16(1e-9f), 0x0000);
  EXPECT_EQ(float_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie to even
  EXPECT_EQ(float_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie to even
  // Every half value converts to float and back unchanged.
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float f = f16_to_float(h);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_f16(f), h) << std::hex << bits;
  }
}

TEST(Units, ParsesAndFormatsByteSizes) {
  EXPECT_EQ(parse_bytes("4194304"), 4194304u);
  EXPECT_EQ(parse_bytes("256MiB"), 256u << 20);
  EXPECT_EQ(parse_bytes("1.5 GiB"), 3u << 29);
  EXPECT_EQ(parse_bytes("2GB"), 2000000000u);
  EXPECT_THROW(parse_bytes("lots"), UsageError);
  EXPECT_THROW(parse_bytes("4 parsecs"), UsageError);
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536.0 * 1024 * 1024), "1.50 GiB");
  EXPECT_EQ(format_bytes(std::uint64_t{3} << 30), "3.00 GiB");
  EXPECT_EQ(format_bytes(std::int64_t{-2048}), "-2.00 KiB");
}

TEST(Units, FormatsSharesSecondsAndDurations) {
  EXPECT_EQ(format_percent(0.125), "12.5%");
  EXPECT_EQ(format_percent(0.125, 0), "12%");
  EXPECT_EQ(format_percent(0.012, 1, true), "+1.2%");
  EXPECT_EQ(format_percent(-0.036, 1, true), "-3.6%");
  EXPECT_EQ(format_seconds(0.12345), "0.123 s");
  EXPECT_EQ(format_seconds(42), "42 s");
  EXPECT_EQ(format_seconds(60, 1), "60.0 s");
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(7620), "2h07m");
  EXPECT_EQ(format_duration(-5), "0m00s");
}

TEST(Fs, AtomicWriteReplacesWholeFile) {
  const std::string dir = testing::scratch_dir("fs");
  const std::string path = dir + "/file.txt";
  write_file_atomic(path, "first");
  write_file_atomic(path, "second version");
  EXPECT_EQ(read_text_file(path, "test"), "second version");
  // No temporary files are left behind.
  int entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) (void)entry, ++entries;
  EXPECT_EQ(entries, 1);
  EXPECT_THROW(read_text_file(dir + "/missing", "test"), DataError);
}

TEST(Fs, RemoveTreeRemovesEverythingBelowButNotLinkTargets) {
  namespace fs = std::filesystem;
  const std::string dir = testing::scratch_dir("remove_tree");
  const std::string outside = dir + "/outside";
  create_directories(outside, "test");
  write_file_atomic(outside + "/keep.txt", "kept");
  const std::string tree = dir + "/tree";
  create_directories(tree + "/a/b/c", "test");
  write_file_atomic(tree + "/a/b/c/deep.h5", "x");
  write_file_atomic(tree + "/top.txt", "y");
  fs::create_directory_symlink(outside, tree + "/a/link");
  EXPECT_EQ(remove_tree(tree), "");
  EXPECT_FALSE(fs::exists(tree));
  EXPECT_EQ(read_text_file(outside + "/keep.txt", "test"), "kept");
  EXPECT_EQ(remove_tree(tree), "");                   // already gone: no error
  EXPECT_EQ(remove_tree(outside + "/keep.txt"), "");  // a plain file
  EXPECT_FALSE(fs::exists(outside + "/keep.txt"));
}

}  // namespace
}  // namespace nss

namespace nss {
namespace {

TEST(Sha256, KnownDigests) {
  // FIPS 180-4 examples.
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 million;
  const std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i) million.update(chunk.data(), chunk.size());
  EXPECT_EQ(million.hex_digest(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  const std::string dir = testing::scratch_dir("sha");
  write_file_atomic(dir + "/f", "abc");
  EXPECT_EQ(sha256_file_hex(dir + "/f"), sha256_hex("abc"));
  EXPECT_THROW(sha256_file_hex(dir + "/missing"), DataError);
}

std::string hex_of(const std::array<std::uint8_t, 32>& bytes) {
  return secret_bytes_hex(bytes);
}

TEST(HmacSha256, Rfc4231Vectors) {
  EXPECT_EQ(hex_of(hmac_sha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hex_of(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  std::string key(25, '\0');
  for (int i = 0; i < 25; ++i) key[i] = static_cast<char>(i + 1);
  EXPECT_EQ(hex_of(hmac_sha256(key, std::string(50, '\xcd'))),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  // A key longer than the 64-byte block is hashed first; one of exactly 64 is not.
  EXPECT_EQ(hex_of(hmac_sha256(std::string(131, '\xaa'),
                               "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(hex_of(hmac_sha256(std::string(64, '\xaa'), "x")),
            "ce3c639dcb9d8baae5d44c3b8b5e233faab4d1860e07489af5c84f213998bd79");
}

TEST(SecretBytes, HexRoundTripAndProblemsWithoutTheText) {
  SecretBytes bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 7 + 3);
  const std::string hex = secret_bytes_hex(bytes);
  EXPECT_EQ(hex.size(), 64u);
  EXPECT_EQ(parse_secret_hex(hex).bytes, bytes);
  EXPECT_EQ(parse_secret_hex(hex.substr(1)).problem,
            "has 63 characters, expected 64 lowercase hex digits");
  std::string upper = hex;
  upper[7] = 'A';
  const ParsedSecret parsed = parse_secret_hex(upper);
  EXPECT_FALSE(parsed.bytes);
  EXPECT_EQ(parsed.problem, "has a character other than 0-9a-f near position 6");
  const std::string dir = testing::scratch_dir("secret");
  write_file_atomic(dir + "/short", "abc");
  EXPECT_THROW(read_secret_bytes(dir + "/short", "test", "hint"), InternalError);
  EXPECT_THROW(read_secret_bytes(dir + "/missing", "test", "hint"), InternalError);
  EXPECT_NE(read_secret_bytes("/dev/urandom", "test", "hint"),
            read_secret_bytes("/dev/urandom", "test", "hint"));
}

}  // namespace
}  // namespace nss
