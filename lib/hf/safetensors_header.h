// The safetensors container: an 8-byte little-endian header length N, N bytes
// of JSON {"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
// "__metadata__": {str: str}}, then the data section, which the tensors tile
// exactly (no holes, no overlaps; https://github.com/huggingface/safetensors).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace nss::hf {

/// One tensor of a safetensors file.
struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0;  // byte offsets inside the data section
  std::uint64_t end = 0;

  /// Number of elements (product of the shape; 1 for a scalar).
  std::int64_t numel() const;
};

/// A parsed and validated header.
struct SafetensorsHeader {
  std::vector<SafetensorsTensor> tensors;  // in data order
  std::map<std::string, std::string> metadata;
  std::uint64_t data_start = 0;  // file offset of the data section (8 + N)
};

/// The safetensors name of a dtype ("F32", "BF16", ...).
const char* safetensors_dtype_name(DType dtype);

/// The largest JSON header accepted (the reference implementation's limit).
constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

/// Parses and validates the header of a whole file held at `bytes` (e.g. a
/// mapping). Throws DataError (exit 4) naming `path` and the problem: too
/// short, header length out of range, invalid JSON, unknown dtype, bad shape,
/// offsets out of range, unaligned, overlapping or leaving holes, a size that
/// does not match shape x dtype, a truncated or over-long data section.
SafetensorsHeader parse_safetensors_header(const unsigned char* bytes, std::uint64_t file_size,
                                           const std::string& path);

/// Orders `tensors` for the data section (wider element types first, the given
/// order otherwise, so every tensor is aligned), assigns their offsets and
/// returns the file prefix: the 8-byte length plus the JSON header, padded with
/// spaces so the data section starts 8-byte aligned.
std::string build_safetensors_header(std::vector<SafetensorsTensor>& tensors,
                                     const std::map<std::string, std::string>& metadata);

}  // namespace nss::hf
