// NF4 blockwise 4-bit quantisation, byte-identical to bitsandbytes'
// quantize_4bit(quant_type="nf4", blocksize=64) (docs/model.md, "NF4
// quantisation (lib/quant)"): blocks of 64 elements restarting at each tensor,
// one fp32 absmax per block, two codes per byte with the first element in the
// high nibble. Every function works on a block-aligned slice of a tensor:
// quantising slices separately gives exactly the bytes of the whole tensor.
#pragma once

#include <array>
#include <cstdint>

namespace nss::quant {

inline constexpr std::int64_t kNf4BlockSize = 64;

/// Sizes of one tensor (or one block-aligned slice of it) in NF4.
struct Nf4Layout {
  std::int64_t elements = 0;

  std::int64_t blocks() const { return (elements + kNf4BlockSize - 1) / kNf4BlockSize; }
  std::int64_t packed_bytes() const { return (elements + 1) / 2; }
  std::int64_t absmax_bytes() const { return blocks() * 4; }
};

/// The 16 NormalFloat levels, ascending, -1 ... 1 (code i decodes to level i).
const std::array<float, 16>& nf4_levels();

/// Code of the level nearest to `normalized`; a value exactly halfway between
/// two levels takes the lower one (bitsandbytes' bucketize / CUDA tree).
std::uint8_t nf4_code(float normalized);

/// Quantises `n` finite floats (a whole tensor, or a slice that starts on a
/// block boundary of it) into packed[(n+1)/2] and absmax[ceil(n/64)]. An odd
/// `n` leaves code 7 (level 0) in the low nibble of the last byte. Throws
/// nss::DataError on NaN or Inf.
void quantize_nf4(const float* in, std::int64_t n, std::uint8_t* packed, float* absmax);

/// Per-block absmax only (what quantize_nf4 writes to absmax), for a caller
/// that needs the double-quantisation mean before quantising.
void nf4_block_absmax(const float* in, std::int64_t n, float* absmax);

/// Reference scalar dequantiser: out[i] = level(code_i) * absmax[i / 64].
void dequantize_nf4_scalar(const std::uint8_t* packed, const float* absmax, std::int64_t n,
                           float* out);

/// The same values as dequantize_nf4_scalar, through a 256-entry byte -> two
/// levels table and loops the compiler vectorises (bit-identical).
void dequantize_nf4(const std::uint8_t* packed, const float* absmax, std::int64_t n, float* out);

/// dequantize_nf4 rounded to bfloat16 (round to nearest even), as raw bits.
void dequantize_nf4_bf16(const std::uint8_t* packed, const float* absmax, std::int64_t n,
                         std::uint16_t* out);

}  // namespace nss::quant
