#include "core/finite_values.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/half.h"

namespace nss {
namespace {

// A value is not finite when all exponent bits are set. Whole blocks of a
// fixed size are scanned branch-free first (the common, all-finite case), which
// the compiler vectorises at -O2; the scalar loop finds the exact element.
template <class Bits>
std::optional<std::uint64_t> scan_exponent(const void* data, std::uint64_t count, Bits mask) {
  const auto* p = static_cast<const Bits*>(data);
  constexpr std::uint64_t kBlock = 4096;
  std::uint64_t begin = 0;
  for (; begin + kBlock <= count; begin += kBlock) {
    Bits hits = 0;
    for (std::uint64_t i = 0; i < kBlock; ++i)
      hits |= static_cast<Bits>((p[begin + i] & mask) == mask ? ~Bits(0) : Bits(0));
    if (hits) break;
  }
  for (std::uint64_t i = begin; i < count; ++i)
    if ((p[i] & mask) == mask) return i;
  return std::nullopt;
}

// Element `index` of a floating buffer, widened for printing.
double element_value(DType dtype, const void* data, std::uint64_t index) {
  const auto* bytes = static_cast<const unsigned char*>(data) + index * dtype_size(dtype);
  switch (dtype) {
    case DType::kFloat32: {
      float value;
      std::memcpy(&value, bytes, sizeof value);
      return value;
    }
    case DType::kFloat64: {
      double value;
      std::memcpy(&value, bytes, sizeof value);
      return value;
    }
    default: {
      std::uint16_t bits;
      std::memcpy(&bits, bytes, sizeof bits);
      return dtype == DType::kBFloat16 ? bf16_to_float(bits) : f16_to_float(bits);
    }
  }
}

}  // namespace

std::optional<std::uint64_t> first_non_finite(DType dtype, const void* data, std::uint64_t count) {
  switch (dtype) {
    case DType::kFloat32:
      return scan_exponent<std::uint32_t>(data, count, 0x7f800000u);
    case DType::kFloat64:
      return scan_exponent<std::uint64_t>(data, count, 0x7ff0000000000000ull);
    case DType::kBFloat16:
      return scan_exponent<std::uint16_t>(data, count, 0x7f80u);
    case DType::kFloat16:
      return scan_exponent<std::uint16_t>(data, count, 0x7c00u);
    default:
      return std::nullopt;
  }
}

void FiniteScan::scan(const void* data, std::uint64_t first, std::uint64_t count) {
  if (element_) return;
  const auto bad = first_non_finite(dtype_, data, count);
  if (!bad) return;
  element_ = first + *bad;
  const double value = element_value(dtype_, data, *bad);
  value_ = std::isnan(value) ? "nan" : value < 0 ? "-inf" : "inf";
}

void FiniteScan::require(const std::string& subject, const std::string& hint) const {
  if (element_)
    throw DataError(
        "weights", subject + " holds " + value_ + " at element " + std::to_string(*element_), hint);
}

void require_finite(DType dtype, const void* data, std::uint64_t first, std::uint64_t count,
                    const std::string& subject, const std::string& hint) {
  FiniteScan scan(dtype);
  scan.scan(data, first, count);
  scan.require(subject, hint);
}

}  // namespace nss
