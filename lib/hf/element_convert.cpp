#include "hf/element_convert.h"

#include <cstring>

#include "core/error.h"
#include "core/half.h"

namespace nss::hf {
namespace {

// Converts through float32, which holds every bfloat16/float16 value exactly;
// float64 -> float64 is handled by the identity copy before we get here.
float load_as_float(const unsigned char* p, DType dtype) {
  switch (dtype) {
    case DType::kFloat32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::kFloat64: {
      double v;
      std::memcpy(&v, p, 8);
      return static_cast<float>(v);
    }
    case DType::kBFloat16: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return bf16_to_float(v);
    }
    case DType::kFloat16: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return f16_to_float(v);
    }
    default:
      throw InternalError("hf", std::string("cannot convert from ") + dtype_name(dtype));
  }
}

void store_float(float value, unsigned char* p, DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      std::memcpy(p, &value, 4);
      return;
    case DType::kFloat64: {
      const double v = value;
      std::memcpy(p, &v, 8);
      return;
    }
    case DType::kBFloat16: {
      const std::uint16_t v = float_to_bf16(value);
      std::memcpy(p, &v, 2);
      return;
    }
    case DType::kFloat16: {
      const std::uint16_t v = float_to_f16(value);
      std::memcpy(p, &v, 2);
      return;
    }
    default:
      throw InternalError("hf", std::string("cannot convert to ") + dtype_name(dtype));
  }
}

}  // namespace

bool is_convertible_float(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kBFloat16 ||
         dtype == DType::kFloat16;
}

void convert_elements(const void* src, DType src_dtype, void* dst, DType dst_dtype,
                      std::int64_t count) {
  if (src_dtype == dst_dtype) {
    std::memcpy(dst, src, static_cast<std::size_t>(count) * dtype_size(src_dtype));
    return;
  }
  NSS_ASSERT(is_convertible_float(src_dtype) && is_convertible_float(dst_dtype), "hf",
             std::string("conversion ") + dtype_name(src_dtype) + " -> " + dtype_name(dst_dtype));
  const auto* in = static_cast<const unsigned char*>(src);
  auto* out = static_cast<unsigned char*>(dst);
  const std::size_t in_size = dtype_size(src_dtype);
  const std::size_t out_size = dtype_size(dst_dtype);
  for (std::int64_t i = 0; i < count; ++i)
    store_float(load_as_float(in + i * in_size, src_dtype), out + i * out_size, dst_dtype);
}

}  // namespace nss::hf
