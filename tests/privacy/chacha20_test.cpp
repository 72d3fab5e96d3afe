#include "privacy/chacha20.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace nss::privacy {
namespace {

// RFC 8439's test key, bytes 00 01 02 ... 1f.
ChaChaKey rfc_key() {
  std::array<std::uint8_t, 32> bytes;
  for (int i = 0; i < 32; ++i) bytes[i] = static_cast<std::uint8_t>(i);
  return chacha_key_from_bytes(bytes);
}

std::vector<std::uint8_t> serialise(const ChaChaBlock& block) {
  std::vector<std::uint8_t> bytes;
  for (std::uint32_t word : block)
    for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<std::uint8_t>(word >> (8 * b)));
  return bytes;
}

TEST(ChaCha20Test, BlockFunctionMatchesRfc8439Section232) {
  // Nonce 00:00:00:09:00:00:00:4a:00:00:00:00, block counter 1.
  const ChaChaBlock block = chacha20_block(rfc_key(), 1, {0x09000000, 0x4a000000, 0});
  const ChaChaBlock expected = {0xe4e7f110, 0x15593bd1, 0x1fdd0f50, 0xc47120a3,
                                0xc7f4d1c7, 0x0368c033, 0x9aaa2204, 0x4e6cd4c3,
                                0x466482d2, 0x09aa9f07, 0x05d7c214, 0xa2028bd9,
                                0xd19c12b5, 0xb94e16de, 0xe883d0cb, 0x4e3c50a2};
  EXPECT_EQ(block, expected);
  const std::vector<std::uint8_t> head = {0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15};
  const std::vector<std::uint8_t> bytes = serialise(block);
  EXPECT_EQ(std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + 8), head);
}

TEST(ChaCha20Test, EncryptionMatchesRfc8439Section242) {
  const std::string plaintext =
      "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the "
      "future, sunscreen would be it.";
  const std::vector<std::uint8_t> ciphertext = {
      0x6e, 0x2e, 0x35, 0x9a, 0x25, 0x68, 0xf9, 0x80, 0x41, 0xba, 0x07, 0x28, 0xdd, 0x0d, 0x69,
      0x81, 0xe9, 0x7e, 0x7a, 0xec, 0x1d, 0x43, 0x60, 0xc2, 0x0a, 0x27, 0xaf, 0xcc, 0xfd, 0x9f,
      0xae, 0x0b, 0xf9, 0x1b, 0x65, 0xc5, 0x52, 0x47, 0x33, 0xab, 0x8f, 0x59, 0x3d, 0xab, 0xcd,
      0x62, 0xb3, 0x57, 0x16, 0x39, 0xd6, 0x24, 0xe6, 0x51, 0x52, 0xab, 0x8f, 0x53, 0x0c, 0x35,
      0x9f, 0x08, 0x61, 0xd8, 0x07, 0xca, 0x0d, 0xbf, 0x50, 0x0d, 0x6a, 0x61, 0x56, 0xa3, 0x8e,
      0x08, 0x8a, 0x22, 0xb6, 0x5e, 0x52, 0xbc, 0x51, 0x4d, 0x16, 0xcc, 0xf8, 0x06, 0x81, 0x8c,
      0xe9, 0x1a, 0xb7, 0x79, 0x37, 0x36, 0x5a, 0xf9, 0x0b, 0xbf, 0x74, 0xa3, 0x5b, 0xe6, 0xb4,
      0x0b, 0x8e, 0xed, 0xf2, 0x78, 0x5e, 0x42, 0x87, 0x4d};
  ASSERT_EQ(plaintext.size(), ciphertext.size());
  // Nonce 00:00:00:00:00:00:00:4a:00:00:00:00, initial counter 1.
  const ChaChaNonce nonce = {0, 0x4a000000, 0};
  std::vector<std::uint8_t> keystream;
  for (std::uint32_t counter = 1; keystream.size() < plaintext.size(); ++counter) {
    const std::vector<std::uint8_t> bytes = serialise(chacha20_block(rfc_key(), counter, nonce));
    keystream.insert(keystream.end(), bytes.begin(), bytes.end());
  }
  for (std::size_t i = 0; i < plaintext.size(); ++i)
    EXPECT_EQ(static_cast<std::uint8_t>(plaintext[i]) ^ keystream[i], ciphertext[i])
        << "byte " << i;
}

TEST(ChaCha20Test, LanesAreConsecutiveBlocks) {
  const ChaChaNonce nonce = {1, 2, 3};
  ChaChaWords words;
  chacha20_blocks(rfc_key(), 40, nonce, words);
  for (int lane = 0; lane < kChaChaLanes; ++lane) {
    const ChaChaBlock block = chacha20_block(rfc_key(), 40 + lane, nonce);
    for (int w = 0; w < 16; ++w) EXPECT_EQ(words[w][lane], block[w]) << lane << " " << w;
  }
}

TEST(ChaCha20Test, KeyBytesAreLittleEndianWords) {
  std::array<std::uint8_t, 32> bytes{};
  bytes[0] = 0x01;
  bytes[3] = 0x80;
  bytes[31] = 0xff;
  const ChaChaKey key = chacha_key_from_bytes(bytes);
  EXPECT_EQ(key[0], 0x80000001u);
  EXPECT_EQ(key[7], 0xff000000u);
}

}  // namespace
}  // namespace nss::privacy
