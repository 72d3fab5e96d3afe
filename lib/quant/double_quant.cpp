#include "quant/double_quant.h"

#include <algorithm>
#include <cmath>

namespace nss::quant {
namespace {

// create_dynamic_map(signed=True, max_exponent_bits=7, total_bits=8) exactly
// as bitsandbytes 0.50.2 over torch 2.5.1 returns it (fp32 linspace midpoints
// scaled by 10^-6 ... 10^0, both signs, plus 0 and 1, sorted). Older torch
// linspace gives some entries 1 ulp apart, hence a table, not the formula.
constexpr std::array<float, 256> kDynamicMap = {
    -0x1.fc6666p-1f,  -0x1.f53334p-1f,  -0x1.eep-1f,      -0x1.e6ccccp-1f,  -0x1.df999ap-1f,
    -0x1.d86666p-1f,  -0x1.d13334p-1f,  -0x1.cap-1f,      -0x1.c2ccccp-1f,  -0x1.bb999ap-1f,
    -0x1.b46666p-1f,  -0x1.ad3334p-1f,  -0x1.a6p-1f,      -0x1.9eccccp-1f,  -0x1.97999ap-1f,
    -0x1.906666p-1f,  -0x1.893334p-1f,  -0x1.82p-1f,      -0x1.7accccp-1f,  -0x1.73999ap-1f,
    -0x1.6c6668p-1f,  -0x1.653334p-1f,  -0x1.5ep-1f,      -0x1.56ccccp-1f,  -0x1.4f999ap-1f,
    -0x1.486668p-1f,  -0x1.413334p-1f,  -0x1.3ap-1f,      -0x1.32ccccp-1f,  -0x1.2b999ap-1f,
    -0x1.246668p-1f,  -0x1.1d3334p-1f,  -0x1.16p-1f,      -0x1.0eccccp-1f,  -0x1.079998p-1f,
    -0x1.006666p-1f,  -0x1.f26664p-2f,  -0x1.e4p-2f,      -0x1.d59998p-2f,  -0x1.c73334p-2f,
    -0x1.b8ccccp-2f,  -0x1.aa6666p-2f,  -0x1.9cp-2f,      -0x1.8d9998p-2f,  -0x1.7f3334p-2f,
    -0x1.70ccccp-2f,  -0x1.626666p-2f,  -0x1.54p-2f,      -0x1.459998p-2f,  -0x1.373334p-2f,
    -0x1.28ccccp-2f,  -0x1.1a6668p-2f,  -0x1.0cp-2f,      -0x1.fb3332p-3f,  -0x1.de6666p-3f,
    -0x1.c1999ap-3f,  -0x1.a4ccccp-3f,  -0x1.88p-3f,      -0x1.6b3334p-3f,  -0x1.4e6666p-3f,
    -0x1.31999ap-3f,  -0x1.14ccccp-3f,  -0x1.fp-4f,       -0x1.b66668p-4f,  -0x1.93d70ap-4f,
    -0x1.8851eep-4f,  -0x1.7ccccep-4f,  -0x1.7147aep-4f,  -0x1.65c29p-4f,   -0x1.5a3d7p-4f,
    -0x1.4eb854p-4f,  -0x1.433334p-4f,  -0x1.37ae14p-4f,  -0x1.2c28f6p-4f,  -0x1.20a3d6p-4f,
    -0x1.151ebap-4f,  -0x1.09999ap-4f,  -0x1.fc28f6p-5f,  -0x1.e51ebap-5f,  -0x1.ce147ap-5f,
    -0x1.b70a3ep-5f,  -0x1.ap-5f,       -0x1.88f5c2p-5f,  -0x1.71eb86p-5f,  -0x1.5ae146p-5f,
    -0x1.43d70ap-5f,  -0x1.2ccccep-5f,  -0x1.15c29p-5f,   -0x1.fd70a4p-6f,  -0x1.cf5c2ap-6f,
    -0x1.a147aep-6f,  -0x1.733334p-6f,  -0x1.451ebap-6f,  -0x1.170a3ep-6f,  -0x1.d1eb86p-7f,
    -0x1.75c29p-7f,   -0x1.3e76c8p-7f,  -0x1.2c083p-7f,   -0x1.19999ap-7f,  -0x1.072b02p-7f,
    -0x1.e978d4p-8f,  -0x1.c49ba6p-8f,  -0x1.9fbe76p-8f,  -0x1.7ae148p-8f,  -0x1.56041ap-8f,
    -0x1.3126e8p-8f,  -0x1.0c49bap-8f,  -0x1.ced914p-9f,  -0x1.851eb8p-9f,  -0x1.3b645ap-9f,
    -0x1.e353f8p-10f, -0x1.4fdf3ap-10f, -0x1.eecbfep-11f, -0x1.b3d07cp-11f, -0x1.78d5p-11f,
    -0x1.3dd982p-11f, -0x1.02de02p-11f, -0x1.8fc506p-12f, -0x1.19ce0ap-12f, -0x1.47ae16p-13f,
    -0x1.743e96p-14f, -0x1.15df66p-14f, -0x1.6f0068p-15f, -0x1.64840cp-16f, -0x1.040bfep-17f,
    -0x1.b43528p-19f, -0x1.27476ep-21f, 0x0p+0f,          0x1.27476ep-21f,  0x1.b43528p-19f,
    0x1.040bfep-17f,  0x1.64840cp-16f,  0x1.6f0068p-15f,  0x1.15df66p-14f,  0x1.743e96p-14f,
    0x1.47ae16p-13f,  0x1.19ce0ap-12f,  0x1.8fc506p-12f,  0x1.02de02p-11f,  0x1.3dd982p-11f,
    0x1.78d5p-11f,    0x1.b3d07cp-11f,  0x1.eecbfep-11f,  0x1.4fdf3ap-10f,  0x1.e353f8p-10f,
    0x1.3b645ap-9f,   0x1.851eb8p-9f,   0x1.ced914p-9f,   0x1.0c49bap-8f,   0x1.3126e8p-8f,
    0x1.56041ap-8f,   0x1.7ae148p-8f,   0x1.9fbe76p-8f,   0x1.c49ba6p-8f,   0x1.e978d4p-8f,
    0x1.072b02p-7f,   0x1.19999ap-7f,   0x1.2c083p-7f,    0x1.3e76c8p-7f,   0x1.75c29p-7f,
    0x1.d1eb86p-7f,   0x1.170a3ep-6f,   0x1.451ebap-6f,   0x1.733334p-6f,   0x1.a147aep-6f,
    0x1.cf5c2ap-6f,   0x1.fd70a4p-6f,   0x1.15c29p-5f,    0x1.2ccccep-5f,   0x1.43d70ap-5f,
    0x1.5ae146p-5f,   0x1.71eb86p-5f,   0x1.88f5c2p-5f,   0x1.ap-5f,        0x1.b70a3ep-5f,
    0x1.ce147ap-5f,   0x1.e51ebap-5f,   0x1.fc28f6p-5f,   0x1.09999ap-4f,   0x1.151ebap-4f,
    0x1.20a3d6p-4f,   0x1.2c28f6p-4f,   0x1.37ae14p-4f,   0x1.433334p-4f,   0x1.4eb854p-4f,
    0x1.5a3d7p-4f,    0x1.65c29p-4f,    0x1.7147aep-4f,   0x1.7ccccep-4f,   0x1.8851eep-4f,
    0x1.93d70ap-4f,   0x1.b66668p-4f,   0x1.fp-4f,        0x1.14ccccp-3f,   0x1.31999ap-3f,
    0x1.4e6666p-3f,   0x1.6b3334p-3f,   0x1.88p-3f,       0x1.a4ccccp-3f,   0x1.c1999ap-3f,
    0x1.de6666p-3f,   0x1.fb3332p-3f,   0x1.0cp-2f,       0x1.1a6668p-2f,   0x1.28ccccp-2f,
    0x1.373334p-2f,   0x1.459998p-2f,   0x1.54p-2f,       0x1.626666p-2f,   0x1.70ccccp-2f,
    0x1.7f3334p-2f,   0x1.8d9998p-2f,   0x1.9cp-2f,       0x1.aa6666p-2f,   0x1.b8ccccp-2f,
    0x1.c73334p-2f,   0x1.d59998p-2f,   0x1.e4p-2f,       0x1.f26664p-2f,   0x1.006666p-1f,
    0x1.079998p-1f,   0x1.0eccccp-1f,   0x1.16p-1f,       0x1.1d3334p-1f,   0x1.246668p-1f,
    0x1.2b999ap-1f,   0x1.32ccccp-1f,   0x1.3ap-1f,       0x1.413334p-1f,   0x1.486668p-1f,
    0x1.4f999ap-1f,   0x1.56ccccp-1f,   0x1.5ep-1f,       0x1.653334p-1f,   0x1.6c6668p-1f,
    0x1.73999ap-1f,   0x1.7accccp-1f,   0x1.82p-1f,       0x1.893334p-1f,   0x1.906666p-1f,
    0x1.97999ap-1f,   0x1.9eccccp-1f,   0x1.a6p-1f,       0x1.ad3334p-1f,   0x1.b46666p-1f,
    0x1.bb999ap-1f,   0x1.c2ccccp-1f,   0x1.cap-1f,       0x1.d13334p-1f,   0x1.d86666p-1f,
    0x1.df999ap-1f,   0x1.e6ccccp-1f,   0x1.eep-1f,       0x1.f53334p-1f,   0x1.fc6666p-1f,
    0x1p+0f};

}  // namespace

const std::array<float, 256>& dynamic_map() {
  return kDynamicMap;
}

std::uint8_t dynamic_code(float normalized) {
  // bitsandbytes' CPU quantiser searches a copy of the map whose entry 0 is -1
  // (it says the binary search needs the full [-1, 1] range): the last entry
  // not above the value, moved up one only when the next one is strictly closer.
  auto entry = [](std::int64_t i) { return i == 0 ? -1.0f : kDynamicMap[i]; };
  auto it = std::upper_bound(kDynamicMap.begin() + 1, kDynamicMap.end(), normalized);
  std::int64_t idx = std::max<std::int64_t>(0, (it - kDynamicMap.begin()) - 1);
  if (idx < 255 && std::fabs(normalized - entry(idx + 1)) < std::fabs(normalized - entry(idx)))
    ++idx;
  return static_cast<std::uint8_t>(idx);
}

double absmax_partial_sum(const float* absmax, std::int64_t blocks) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < blocks; ++i) sum += absmax[i];
  return sum;
}

float absmax_offset(double sum, std::int64_t blocks) {
  return blocks > 0 ? static_cast<float>(sum / static_cast<double>(blocks)) : 0.0f;
}

void quantize_absmax(const float* absmax, std::int64_t blocks, float offset, std::uint8_t* codes,
                     float* group_absmax) {
  for (std::int64_t g = 0; g * kAbsmaxGroupSize < blocks; ++g) {
    const std::int64_t first = g * kAbsmaxGroupSize;
    const std::int64_t count = std::min(kAbsmaxGroupSize, blocks - first);
    float centred[kAbsmaxGroupSize];
    float amax = 0.0f;
    for (std::int64_t i = 0; i < count; ++i) {
      centred[i] = absmax[first + i] - offset;
      amax = std::max(amax, std::fabs(centred[i]));
    }
    group_absmax[g] = amax;
    // A group equal to the offset everywhere (amax 0) has no scale:
    // bitsandbytes divides 0 by 0 and its search lands on code 0, which
    // decodes to -1 * 0 + offset, the offset exactly; do the same.
    for (std::int64_t i = 0; i < count; ++i)
      codes[first + i] = amax > 0.0f ? dynamic_code(centred[i] / amax) : 0;
  }
}

void dequantize_absmax(const std::uint8_t* codes, const float* group_absmax, std::int64_t blocks,
                       float offset, float* absmax) {
  for (std::int64_t i = 0; i < blocks; ++i)
    absmax[i] = kDynamicMap[codes[i]] * group_absmax[i / kAbsmaxGroupSize] + offset;
}

}  // namespace nss::quant
