// NF4 dequantisation on a CUDA device: the kernels of nf4_dequant.cu, giving
// bit for bit what lib/quant's CPU dequantisers give (the same fp32 levels and
// dynamic map, one rounding per operation, no FMA). Without the CUDA toolkit
// the build links nf4_no_cuda.cpp instead, whose functions throw.
//
// Pointers are device pointers; `stream` is a cudaStream_t (nullptr: the
// legacy default stream). The launches are asynchronous; a failed launch
// throws nss::InternalError with the CUDA error string.
#pragma once

#include <cstdint>

namespace nss::quant {

/// True when the kernels were compiled (a build with the CUDA toolkit).
bool nf4_cuda_compiled();

/// out[i] = level(code_i) * absmax[i / 64] for i < n (the layout of
/// quantize_nf4: packed[(n+1)/2], absmax[ceil(n/64)]).
void dequantize_nf4_cuda(const std::uint8_t* packed, const float* absmax, std::int64_t n,
                         float* out, void* stream);

/// dequantize_nf4_cuda rounded to bfloat16 (round to nearest even), as raw
/// bits: equal to dequantize_nf4_bf16.
void dequantize_nf4_cuda_bf16(const std::uint8_t* packed, const float* absmax, std::int64_t n,
                              std::uint16_t* out, void* stream);

/// absmax[b] = dynamic_map()[codes[b]] * group_absmax[b / 256] + offset in
/// fp32 (product, then sum), for b < blocks: equal to dequantize_absmax.
void dequantize_absmax_cuda(const std::uint8_t* codes, const float* group_absmax,
                            std::int64_t blocks, float offset, float* absmax, void* stream);

}  // namespace nss::quant
