// nf4_probe IN.f32 OUT_PREFIX: quantises a raw little-endian float32 tensor
// with lib/quant and writes OUT_PREFIX.{packed,absmax,deq,dq_codes,dq_groups,
// dq_offset,dq_deq} (raw bytes / float32) for test_nf4_bitsandbytes.py.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/error.h"
#include "quant/double_quant.h"
#include "quant/nf4.h"

namespace {

template <typename T>
void write_raw(const std::string& path, const std::vector<T>& v) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(v.data()),
            static_cast<std::streamsize>(v.size() * sizeof(T)));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace nss::quant;
  if (argc != 3) {
    std::fprintf(stderr, "usage: nf4_probe IN.f32 OUT_PREFIX\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  std::vector<float> x(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.begin() + x.size() * sizeof(float),
            reinterpret_cast<char*>(x.data()));
  const std::string prefix = argv[2];
  const Nf4Layout layout{static_cast<std::int64_t>(x.size())};
  std::vector<std::uint8_t> packed(layout.packed_bytes());
  std::vector<float> absmax(layout.blocks()), deq(x.size());
  try {
    quantize_nf4(x.data(), layout.elements, packed.data(), absmax.data());
  } catch (const nss::Error& e) {
    std::fprintf(stderr, "[%s] %s\n", e.component().c_str(), e.message().c_str());
    return 4;
  }
  dequantize_nf4(packed.data(), absmax.data(), layout.elements, deq.data());
  write_raw(prefix + ".packed", packed);
  write_raw(prefix + ".absmax", absmax);
  write_raw(prefix + ".deq", deq);

  const std::int64_t blocks = layout.blocks();
  const float offset = absmax_offset(absmax_partial_sum(absmax.data(), blocks), blocks);
  std::vector<std::uint8_t> codes(blocks);
  std::vector<float> groups((blocks + kAbsmaxGroupSize - 1) / kAbsmaxGroupSize), back(blocks);
  quantize_absmax(absmax.data(), blocks, offset, codes.data(), groups.data());
  dequantize_absmax(codes.data(), groups.data(), blocks, offset, back.data());
  std::vector<float> dq_deq(x.size());
  dequantize_nf4(packed.data(), back.data(), layout.elements, dq_deq.data());
  write_raw(prefix + ".dq_codes", codes);
  write_raw(prefix + ".dq_groups", groups);
  write_raw(prefix + ".dq_offset", std::vector<float>{offset});
  write_raw(prefix + ".dq_deq", dq_deq);
  return 0;
}
