// bfloat16 / float16 <-> float32 conversions on raw 16-bit patterns, for code
// that must not link libtorch (consolidation, safetensors, communication).
#pragma once

#include <cstdint>
#include <cstring>

namespace nss {

/// float32 -> bfloat16 with round-to-nearest-even; NaN stays NaN.
inline std::uint16_t float_to_bf16(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

/// bfloat16 -> float32 (exact).
inline float bf16_to_float(std::uint16_t value) {
  const std::uint32_t bits = static_cast<std::uint32_t>(value) << 16;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

/// float32 -> IEEE float16 with round-to-nearest-even, overflow to infinity.
std::uint16_t float_to_f16(float value);

/// IEEE float16 -> float32 (exact).
float f16_to_float(std::uint16_t value);

}  // namespace nss
