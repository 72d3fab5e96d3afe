// A read-only, memory-mapped safetensors file. Opening validates the whole
// header; reads copy element ranges straight out of the mapping, so a rank
// touches (and pages in) only the slices it asks for.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "hf/safetensors_header.h"

namespace nss::hf {

class SafetensorsFile {
 public:
  /// Maps and validates `path`; throws DataError (exit 4) naming the file and
  /// the problem (missing, not a regular file, unreadable, malformed header).
  static std::shared_ptr<const SafetensorsFile> open(const std::string& path);

  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  /// Every tensor, in data order.
  const std::vector<SafetensorsTensor>& tensors() const { return header_.tensors; }
  /// The "__metadata__" map (e.g. {"format": "pt"}).
  const std::map<std::string, std::string>& metadata() const { return header_.metadata; }

  /// The tensor called `name`, or nullptr.
  const SafetensorsTensor* find(const std::string& name) const;
  /// The tensor called `name`; throws DataError naming the file when absent.
  const SafetensorsTensor& tensor(const std::string& name) const;

  /// Copies elements [offset, offset + count) of the tensor's row-major
  /// flattening into `out` as float32 (from F32, F64, BF16 or F16; other
  /// dtypes are a DataError). A NaN or infinity among them is a DataError
  /// naming the file, tensor and element. A range outside the tensor is an
  /// InternalError.
  void read_float32(const std::string& name, std::int64_t offset, std::int64_t count,
                    float* out) const;

  /// The tensor's bytes in the file (little-endian, its own dtype).
  const unsigned char* bytes(const SafetensorsTensor& tensor) const;

 private:
  SafetensorsFile() = default;

  std::string path_;
  SafetensorsHeader header_;
  std::unordered_map<std::string, std::size_t> index_;
  void* mapping_ = nullptr;
  std::size_t mapping_bytes_ = 0;
};

}  // namespace nss::hf
