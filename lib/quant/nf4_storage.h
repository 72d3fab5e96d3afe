// What a run of elements costs stored in NF4, and the whole-tensor round
// trip dequant(quant(W)). The sizes are counted in one place for the trainer's
// shards, its all-gathers, the preflight's memory model and the traffic
// formula; the round trip is what a QLoRA run computes with, for the tools
// that score, sample or export "the model as it was trained".
#pragma once

#include <cstdint>

namespace nss::quant {

/// Bytes of `elements` (a whole number of 64 x 256 groups, or one tensor)
/// stored in NF4: the packed codes, the block scales (fp32 absmax, or with
/// double quantisation one 8-bit code per block plus one fp32 absmax per
/// group of 256 blocks). The per-tensor fp32 offset of double quantisation
/// is not counted (4 bytes per tensor, held by every rank).
struct Nf4Storage {
  std::int64_t codes = 0;
  std::int64_t block_scales = 0;
  std::int64_t group_scales = 0;

  std::int64_t total() const { return codes + block_scales + group_scales; }
};

Nf4Storage nf4_storage(std::int64_t elements, bool double_quant);

/// out[0..n) = dequant(quant(in[0..n))) for one whole tensor, exactly what
/// the sharded trainer's gathered base holds (any world size); `in` and
/// `out` may be the same buffer. Throws nss::DataError on NaN or Inf.
void nf4_round_trip(const float* in, std::int64_t n, bool double_quant, float* out);

}  // namespace nss::quant
