// Double quantisation of NF4 block absmax values, as bitsandbytes'
// quantize_4bit(compress_statistics=True) does it: subtract the tensor's mean
// absmax (fp32), quantise the rest with the signed 8-bit dynamic map in groups
// of 256 absmax values, one fp32 absmax per group.
//
// The mean is per tensor, so sharded callers compute it in two steps:
// absmax_partial_sum() over each rank's own block-aligned slice, combined in
// block order (rank order, each rank's slice being contiguous) as an fp64 sum,
// then absmax_offset(total, blocks). Slices of the absmax array handed to
// quantize_absmax() must start on a multiple of 256 blocks (64 x 256 tensor
// elements); then any slicing gives the bytes of the whole.
#pragma once

#include <array>
#include <cstdint>

namespace nss::quant {

inline constexpr std::int64_t kAbsmaxGroupSize = 256;

/// bitsandbytes' create_dynamic_map(signed=True): 256 ascending fp32 values, -0.993 ... 1.
const std::array<float, 256>& dynamic_map();

/// Code of `normalized` in the dynamic map as bitsandbytes' CPU quantiser picks
/// it (nearest entry, ties to the lower, entry 0 taken as -1 for the search).
std::uint8_t dynamic_code(float normalized);

/// fp64 sum of absmax[0..blocks) in order: one rank's share of the mean.
double absmax_partial_sum(const float* absmax, std::int64_t blocks);

/// The tensor's offset: (float)(sum / blocks), with sum over all its blocks in
/// block order (the fp64 sum of the partial sums in rank order).
float absmax_offset(double sum, std::int64_t blocks);

/// Quantises absmax[0..blocks) - offset into codes[blocks] and
/// group_absmax[ceil(blocks / 256)].
void quantize_absmax(const float* absmax, std::int64_t blocks, float offset, std::uint8_t* codes,
                     float* group_absmax);

/// absmax[i] = map[codes[i]] * group_absmax[i / 256] + offset, in fp32.
void dequantize_absmax(const std::uint8_t* codes, const float* group_absmax, std::int64_t blocks,
                       float offset, float* absmax);

}  // namespace nss::quant
