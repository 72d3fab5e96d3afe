#include "quant/nf4.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "core/half.h"

namespace nss::quant {
namespace {

// QLoRA's NormalFloat levels (Dettmers et al. 2023, appendix E), as fp32.
constexpr std::array<float, 16> kLevels = {-1.0f,
                                           -0.6961928009986877f,
                                           -0.5250730514526367f,
                                           -0.39491748809814453f,
                                           -0.28444138169288635f,
                                           -0.18477343022823334f,
                                           -0.09105003625154495f,
                                           0.0f,
                                           0.07958029955625534f,
                                           0.16093020141124725f,
                                           0.24611230194568634f,
                                           0.33791524171829224f,
                                           0.44070982933044434f,
                                           0.5626170039176941f,
                                           0.7229568362236023f,
                                           1.0f};

// Midpoints between adjacent levels, computed in fp32 like bitsandbytes does.
std::array<float, 15> make_midpoints() {
  std::array<float, 15> mid{};
  for (int i = 0; i < 15; ++i) mid[i] = (kLevels[i] + kLevels[i + 1]) / 2.0f;
  return mid;
}

const std::array<float, 15> kMidpoints = make_midpoints();

// Byte -> (level of high nibble, level of low nibble).
struct PairTable {
  alignas(64) float pair[256][2];
  PairTable() {
    for (int b = 0; b < 256; ++b) {
      pair[b][0] = kLevels[b >> 4];
      pair[b][1] = kLevels[b & 15];
    }
  }
};

const PairTable kPairs;

void require_finite_block(const float* in, std::int64_t count, std::int64_t first) {
  for (std::int64_t i = 0; i < count; ++i)
    if (!std::isfinite(in[i]))
      throw DataError("quant",
                      "NF4 input holds a non-finite value at element " + std::to_string(first + i),
                      "check the source weights; NF4 cannot represent NaN or Inf");
}

// The codes of `count` scaled values: how many midpoints lie strictly below
// each (nf4_code's rule), one midpoint at a time over the whole block so the
// comparisons vectorise; a binary search per value mispredicts about every
// other step (tests/quant/nf4_quantize_bench.cpp times both).
void block_codes(const float* x, std::int64_t count, float scale, std::uint8_t* codes) {
  float scaled[kNf4BlockSize] = {};  // a short block's rest: zeros, never read back
  if (count == kNf4BlockSize) {
    const float inverse = 1.0f / scale;
    for (std::int64_t i = 0; i < kNf4BlockSize; ++i)
      scaled[i] = std::clamp(x[i] * inverse, -1.0f, 1.0f);
  } else {
    for (std::int64_t i = 0; i < count; ++i) scaled[i] = std::clamp(x[i] / scale, -1.0f, 1.0f);
  }
  int code[kNf4BlockSize] = {};
  for (const float m : kMidpoints)
    for (std::int64_t i = 0; i < kNf4BlockSize; ++i) code[i] += m < scaled[i] ? 1 : 0;
  for (std::int64_t i = 0; i < count; ++i) codes[i] = static_cast<std::uint8_t>(code[i]);
}

float block_absmax(const float* in, std::int64_t count) {
  float m = 0.0f;
  for (std::int64_t i = 0; i < count; ++i) m = std::max(m, std::fabs(in[i]));
  return m;
}

}  // namespace

const std::array<float, 16>& nf4_levels() {
  return kLevels;
}

std::uint8_t nf4_code(float normalized) {
  // Number of midpoints strictly below the value: ties go to the lower level.
  return static_cast<std::uint8_t>(
      std::lower_bound(kMidpoints.begin(), kMidpoints.end(), normalized) - kMidpoints.begin());
}

void nf4_block_absmax(const float* in, std::int64_t n, float* absmax) {
  for (std::int64_t b = 0; b * kNf4BlockSize < n; ++b) {
    const std::int64_t first = b * kNf4BlockSize;
    const std::int64_t count = std::min(kNf4BlockSize, n - first);
    require_finite_block(in + first, count, first);
    absmax[b] = block_absmax(in + first, count);
  }
}

void quantize_nf4(const float* in, std::int64_t n, std::uint8_t* packed, float* absmax) {
  // bitsandbytes scales a full block by the reciprocal of its absmax and the
  // short last block by division; both clamp the absmax at 1e-38 (so an
  // all-zero block codes to the zero level) and the scaled value to [-1, 1].
  constexpr float kTiny = 1e-38f;
  for (std::int64_t b = 0; b * kNf4BlockSize < n; ++b) {
    const std::int64_t first = b * kNf4BlockSize;
    const std::int64_t count = std::min(kNf4BlockSize, n - first);
    const float* x = in + first;
    require_finite_block(x, count, first);
    const float amax = block_absmax(x, count);
    absmax[b] = amax;
    std::uint8_t codes[kNf4BlockSize + 1];
    block_codes(x, count, std::max(amax, kTiny), codes);
    codes[count] = nf4_code(0.0f);  // the pad nibble of an odd tensor length
    std::uint8_t* out = packed + first / 2;
    for (std::int64_t i = 0; i < count; i += 2)
      out[i / 2] = static_cast<std::uint8_t>(codes[i] << 4 | codes[i + 1]);
  }
}

void dequantize_nf4_scalar(const std::uint8_t* packed, const float* absmax, std::int64_t n,
                           float* out) {
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint8_t byte = packed[i / 2];
    const int code = (i % 2 == 0) ? byte >> 4 : byte & 15;
    out[i] = kLevels[code] * absmax[i / kNf4BlockSize];
  }
}

void dequantize_nf4(const std::uint8_t* packed, const float* absmax, std::int64_t n, float* out) {
  const std::int64_t full_blocks = n / kNf4BlockSize;
  for (std::int64_t b = 0; b < full_blocks; ++b) {
    const std::uint8_t* bytes = packed + b * (kNf4BlockSize / 2);
    float* o = out + b * kNf4BlockSize;
    const float scale = absmax[b];
    float levels[kNf4BlockSize];
    for (int j = 0; j < kNf4BlockSize / 2; ++j) {
      levels[2 * j] = kPairs.pair[bytes[j]][0];
      levels[2 * j + 1] = kPairs.pair[bytes[j]][1];
    }
    for (int j = 0; j < kNf4BlockSize; ++j) o[j] = levels[j] * scale;
  }
  const std::int64_t done = full_blocks * kNf4BlockSize;
  if (done < n)
    dequantize_nf4_scalar(packed + done / 2, absmax + full_blocks, n - done, out + done);
}

void dequantize_nf4_bf16(const std::uint8_t* packed, const float* absmax, std::int64_t n,
                         std::uint16_t* out) {
  float block[kNf4BlockSize];
  for (std::int64_t first = 0; first < n; first += kNf4BlockSize) {
    const std::int64_t count = std::min(kNf4BlockSize, n - first);
    dequantize_nf4(packed + first / 2, absmax + first / kNf4BlockSize, count, block);
    for (std::int64_t j = 0; j < count; ++j) out[first + j] = float_to_bf16(block[j]);
  }
}

}  // namespace nss::quant
