// ChaCha20 block function (RFC 8439, section 2.3): the keyed pseudorandom
// function behind DP-SGD's secret randomness. Statistical generators
// (mt19937, Philox) are not enough there: whoever predicts the noise can
// subtract it, so the stream must be unpredictable without the key.
#pragma once

#include <array>
#include <cstdint>

namespace nss::privacy {

/// The 256-bit key as eight little-endian 32-bit words (RFC 8439 byte order).
using ChaChaKey = std::array<std::uint32_t, 8>;
/// The 96-bit nonce as three little-endian 32-bit words.
using ChaChaNonce = std::array<std::uint32_t, 3>;
/// One 64-byte output block as sixteen little-endian 32-bit words.
using ChaChaBlock = std::array<std::uint32_t, 16>;

/// Blocks computed side by side by chacha20_blocks().
inline constexpr int kChaChaLanes = 8;

/// Output words of kChaChaLanes consecutive blocks: words[w][b] is word w of block b.
using ChaChaWords = std::uint32_t[16][kChaChaLanes];

/// The block for `counter` (RFC 8439's serialised block, read as little-endian words).
ChaChaBlock chacha20_block(const ChaChaKey& key, std::uint32_t counter, const ChaChaNonce& nonce);

/// Blocks counter, counter + 1, ..., counter + kChaChaLanes - 1 at once (the
/// lanes vectorise). Counters past 2^32 - 1 wrap; callers must not use them.
void chacha20_blocks(const ChaChaKey& key, std::uint32_t counter, const ChaChaNonce& nonce,
                     ChaChaWords& words);

/// 32 bytes as a key: byte 4i is the low byte of word i.
ChaChaKey chacha_key_from_bytes(const std::array<std::uint8_t, 32>& bytes);

}  // namespace nss::privacy
