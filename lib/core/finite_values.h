// The one check that values are finite, over typed buffers (no libtorch): a
// save refuses to write a NaN or an infinity, and every tool that loads
// weights (nss_hpc's model.from_pretrained, nss_eval, nss_consolidate) refuses
// to read one, naming the tensor and the element.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/dtype.h"

namespace nss {

/// Index of the first NaN or infinity among `count` elements of `dtype` at
/// `data`, or nullopt (always nullopt for integer types).
std::optional<std::uint64_t> first_non_finite(DType dtype, const void* data, std::uint64_t count);

/// The first NaN or infinity of one tensor read window by window. The error is
/// raised by require(), once the caller has read (and verified) everything, so
/// that a damaged checksum block is reported as damage, not as a bad value.
class FiniteScan {
 public:
  explicit FiniteScan(DType dtype) : dtype_(dtype) {}

  /// Scans `count` elements at `data`, the tensor's elements [first, first + count).
  void scan(const void* data, std::uint64_t first, std::uint64_t count);

  /// Throws DataError (exit 4) "<subject> holds <nan|inf|-inf> at element N"
  /// with `hint` when scan() met a value that is not finite.
  void require(const std::string& subject, const std::string& hint) const;

 private:
  DType dtype_;
  std::optional<std::uint64_t> element_;
  std::string value_;  // "nan", "inf" or "-inf"
};

/// Scans and requires in one step, for a buffer that is already verified.
void require_finite(DType dtype, const void* data, std::uint64_t first, std::uint64_t count,
                    const std::string& subject, const std::string& hint);

}  // namespace nss
