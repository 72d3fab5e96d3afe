#include "quant/nf4_storage.h"

#include <vector>

#include "quant/double_quant.h"
#include "quant/nf4.h"

namespace nss::quant {

Nf4Storage nf4_storage(std::int64_t elements, bool double_quant) {
  const Nf4Layout layout{elements};
  Nf4Storage storage;
  storage.codes = layout.packed_bytes();
  if (!double_quant) {
    storage.block_scales = layout.absmax_bytes();
    return storage;
  }
  storage.block_scales = layout.blocks();
  storage.group_scales = (layout.blocks() + kAbsmaxGroupSize - 1) / kAbsmaxGroupSize * 4;
  return storage;
}

void nf4_round_trip(const float* in, std::int64_t n, bool double_quant, float* out) {
  const Nf4Layout layout{n};
  std::vector<std::uint8_t> packed(static_cast<std::size_t>(layout.packed_bytes()));
  std::vector<float> absmax(static_cast<std::size_t>(layout.blocks()));
  quantize_nf4(in, n, packed.data(), absmax.data());
  if (double_quant) {
    const std::int64_t blocks = layout.blocks();
    const float offset = absmax_offset(absmax_partial_sum(absmax.data(), blocks), blocks);
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(blocks));
    std::vector<float> groups(
        static_cast<std::size_t>((blocks + kAbsmaxGroupSize - 1) / kAbsmaxGroupSize));
    quantize_absmax(absmax.data(), blocks, offset, codes.data(), groups.data());
    dequantize_absmax(codes.data(), groups.data(), blocks, offset, absmax.data());
  }
  dequantize_nf4(packed.data(), absmax.data(), n, out);
}

}  // namespace nss::quant
