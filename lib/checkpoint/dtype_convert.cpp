#include "checkpoint/dtype_convert.h"

#include <cstring>

#include "core/error.h"
#include "core/half.h"

namespace nss::checkpoint {

DType output_dtype(DType stored, DType requested) {
  return dtype_is_floating(stored) ? requested : stored;
}

float element_as_float(DType dtype, const void* data, std::uint64_t i) {
  switch (dtype) {
    case DType::kFloat32:
      return static_cast<const float*>(data)[i];
    case DType::kFloat64:
      return static_cast<float>(static_cast<const double*>(data)[i]);
    case DType::kBFloat16:
      return bf16_to_float(static_cast<const std::uint16_t*>(data)[i]);
    case DType::kFloat16:
      return f16_to_float(static_cast<const std::uint16_t*>(data)[i]);
    default:
      break;
  }
  throw InternalError("checkpoint", std::string("not a floating type: ") + dtype_name(dtype));
}

void store_float(DType dtype, void* data, std::uint64_t i, float value) {
  switch (dtype) {
    case DType::kFloat32:
      static_cast<float*>(data)[i] = value;
      return;
    case DType::kFloat64:
      static_cast<double*>(data)[i] = value;
      return;
    case DType::kBFloat16:
      static_cast<std::uint16_t*>(data)[i] = float_to_bf16(value);
      return;
    case DType::kFloat16:
      static_cast<std::uint16_t*>(data)[i] = float_to_f16(value);
      return;
    default:
      break;
  }
  throw InternalError("checkpoint", std::string("not a floating type: ") + dtype_name(dtype));
}

void convert_elements(DType from, const void* in, DType to, void* out, std::uint64_t count) {
  if (from == to) {
    std::memcpy(out, in, count * dtype_size(from));
    return;
  }
  if (!dtype_is_floating(from) || !dtype_is_floating(to))
    throw InternalError(
        "checkpoint", std::string("cannot convert ") + dtype_name(from) + " to " + dtype_name(to));
  if (from == DType::kFloat64 && to != DType::kFloat32) {
    // Through float32 would round twice; only float32 output is offered for float64.
    throw UsageError("checkpoint", "float64 tensors can only be written as float32 or float64",
                     "use --dtype float32");
  }
  if (to == DType::kFloat64) {
    for (std::uint64_t i = 0; i < count; ++i)
      static_cast<double*>(out)[i] = element_as_float(from, in, i);
    return;
  }
  for (std::uint64_t i = 0; i < count; ++i) store_float(to, out, i, element_as_float(from, in, i));
}

}  // namespace nss::checkpoint
