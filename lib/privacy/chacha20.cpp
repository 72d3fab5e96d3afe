#include "privacy/chacha20.h"

namespace nss::privacy {
namespace {

// GCC/Clang vector extension: one ChaCha state word for every lane. The
// compiler maps it onto whatever SIMD the target has (SSE2, AVX2, NEON).
typedef std::uint32_t Lanes __attribute__((vector_size(4 * kChaChaLanes)));

// x86-64's baseline (SSE2) has 16 registers of 4 lanes and no rotate, so the
// 8 lanes spill; an AVX2 clone, chosen when the program loads, holds each word
// in one register and runs ~1.7x faster. Integer arithmetic only: every clone
// gives the same words.
#if defined(__x86_64__)
#define NSS_CHACHA_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NSS_CHACHA_CLONES
#endif

constexpr std::uint32_t kSigma[4] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574};

inline __attribute__((always_inline)) void quarter_round(Lanes* x, int a, int b, int c, int d) {
  // Rotations written as shift pairs: the vector extension has no rotate.
  x[a] += x[b];
  x[d] ^= x[a];
  x[d] = (x[d] << 16) | (x[d] >> 16);
  x[c] += x[d];
  x[b] ^= x[c];
  x[b] = (x[b] << 12) | (x[b] >> 20);
  x[a] += x[b];
  x[d] ^= x[a];
  x[d] = (x[d] << 8) | (x[d] >> 24);
  x[c] += x[d];
  x[b] ^= x[c];
  x[b] = (x[b] << 7) | (x[b] >> 25);
}

}  // namespace

NSS_CHACHA_CLONES void chacha20_blocks(const ChaChaKey& key, std::uint32_t counter,
                                       const ChaChaNonce& nonce, ChaChaWords& words) {
  Lanes input[16];
  for (int w = 0; w < 4; ++w) input[w] = Lanes{} + kSigma[w];
  for (int w = 0; w < 8; ++w) input[4 + w] = Lanes{} + key[w];
  for (int lane = 0; lane < kChaChaLanes; ++lane)
    input[12][lane] = counter + static_cast<std::uint32_t>(lane);
  for (int w = 0; w < 3; ++w) input[13 + w] = Lanes{} + nonce[w];

  Lanes x[16];
  for (int w = 0; w < 16; ++w) x[w] = input[w];
  for (int round = 0; round < 10; ++round) {  // 20 rounds: column then diagonal
    quarter_round(x, 0, 4, 8, 12);
    quarter_round(x, 1, 5, 9, 13);
    quarter_round(x, 2, 6, 10, 14);
    quarter_round(x, 3, 7, 11, 15);
    quarter_round(x, 0, 5, 10, 15);
    quarter_round(x, 1, 6, 11, 12);
    quarter_round(x, 2, 7, 8, 13);
    quarter_round(x, 3, 4, 9, 14);
  }
  for (int w = 0; w < 16; ++w) {
    const Lanes sum = x[w] + input[w];
    for (int lane = 0; lane < kChaChaLanes; ++lane) words[w][lane] = sum[lane];
  }
}

ChaChaBlock chacha20_block(const ChaChaKey& key, std::uint32_t counter, const ChaChaNonce& nonce) {
  ChaChaWords words;
  chacha20_blocks(key, counter, nonce, words);
  ChaChaBlock block;
  for (int w = 0; w < 16; ++w) block[w] = words[w][0];
  return block;
}

ChaChaKey chacha_key_from_bytes(const std::array<std::uint8_t, 32>& bytes) {
  ChaChaKey key;
  for (int w = 0; w < 8; ++w)
    key[w] = std::uint32_t{bytes[4 * w]} | std::uint32_t{bytes[4 * w + 1]} << 8 |
             std::uint32_t{bytes[4 * w + 2]} << 16 | std::uint32_t{bytes[4 * w + 3]} << 24;
  return key;
}

}  // namespace nss::privacy
