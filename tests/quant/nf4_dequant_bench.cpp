// NF4 dequantisation speed on one CPU thread: a tensor of 64 MiB of float32
// output (16 Mi elements, 8 MiB packed + 1 MiB absmax) dequantised by the
// scalar reference and by the table-driven version, median of 5 runs each.
// Prints one JSON line per version: output GB/s (float32 bytes written per
// second) and elements per second.
#include <cstdio>
#include <random>
#include <vector>

#include "median_seconds.h"
#include "quant/nf4.h"

using nss::quant::bench::median_seconds;

int main() {
  using namespace nss::quant;
  const std::int64_t n = std::int64_t{64} << 20 >> 2;
  std::vector<float> x(n);
  std::mt19937 gen(0);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  for (auto& v : x) v = dist(gen);
  const Nf4Layout layout{n};
  std::vector<std::uint8_t> packed(layout.packed_bytes());
  std::vector<float> absmax(layout.blocks()), out(n), ref(n);
  quantize_nf4(x.data(), n, packed.data(), absmax.data());
  const double scalar_s =
      median_seconds([&] { dequantize_nf4_scalar(packed.data(), absmax.data(), n, ref.data()); });
  const double table_s =
      median_seconds([&] { dequantize_nf4(packed.data(), absmax.data(), n, out.data()); });
  const bool same = out == ref;
  const double out_bytes = static_cast<double>(n) * sizeof(float);
  for (const auto& [name, s] : {std::pair{"scalar", scalar_s}, std::pair{"table", table_s}})
    std::printf(
        "{\"version\": \"%s\", \"elements\": %lld, \"median_s\": %.6f, \"gb_per_s\": %.2f, "
        "\"elements_per_s\": %.3e, \"bit_identical\": %s}\n",
        name, static_cast<long long>(n), s, out_bytes / s / 1e9, n / s, same ? "true" : "false");
  return same ? 0 : 1;
}
