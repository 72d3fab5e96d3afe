// NF4 quantisation speed on one CPU thread: 16 Mi float32 weights (64 MiB)
// quantised by quantize_nf4 (each block's codes counted midpoint by
// midpoint) and by the reference rule nf4_code per value (a binary search
// over the midpoints, as quantize_nf4 did before), median of 5 runs each.
// Prints one JSON line per version: input GB/s, nanoseconds per element and
// whether the codes are the reference's bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "median_seconds.h"
#include "quant/nf4.h"

namespace {

using nss::quant::bench::median_seconds;

// One code per byte, each value scaled by its block's absmax as quantize_nf4 does.
void reference_codes(const std::vector<float>& x, std::vector<std::uint8_t>& codes) {
  using nss::quant::kNf4BlockSize;
  for (std::size_t first = 0; first < x.size(); first += kNf4BlockSize) {
    float amax = 0.0f;
    for (std::size_t i = first; i < first + kNf4BlockSize; ++i)
      amax = std::max(amax, std::fabs(x[i]));
    const float inverse = 1.0f / std::max(amax, 1e-38f);
    for (std::size_t i = first; i < first + kNf4BlockSize; ++i)
      codes[i] = nss::quant::nf4_code(std::clamp(x[i] * inverse, -1.0f, 1.0f));
  }
}

}  // namespace

int main() {
  using namespace nss::quant;
  const std::int64_t n = std::int64_t{64} << 20 >> 2;
  std::vector<float> x(static_cast<std::size_t>(n));
  std::mt19937 gen(0);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  for (auto& v : x) v = dist(gen);
  const Nf4Layout layout{n};
  std::vector<std::uint8_t> packed(layout.packed_bytes()), reference(x.size());
  std::vector<float> absmax(layout.blocks());
  const double blocks_s =
      median_seconds([&] { quantize_nf4(x.data(), n, packed.data(), absmax.data()); });
  const double search_s = median_seconds([&] { reference_codes(x, reference); });
  bool same = true;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const int code = i % 2 == 0 ? packed[i / 2] >> 4 : packed[i / 2] & 15;
    same = same && code == reference[i];
  }
  const double in_bytes = static_cast<double>(n) * sizeof(float);
  for (const auto& [name, s] :
       {std::pair{"block_codes", blocks_s}, std::pair{"binary_search", search_s}})
    std::printf(
        "{\"version\": \"%s\", \"elements\": %lld, \"median_s\": %.6f, \"gb_per_s\": %.2f, "
        "\"ns_per_element\": %.2f, \"bit_identical\": %s}\n",
        name, static_cast<long long>(n), s, in_bytes / s / 1e9, s * 1e9 / static_cast<double>(n),
        same ? "true" : "false");
  return same ? 0 : 1;
}
