// Conversions between the floating-point element types of weight files
// (float32, float64, bfloat16, float16), on raw little-endian buffers.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace nss::hf {

/// True when elements of `dtype` can be converted to and from float32 here.
bool is_convertible_float(DType dtype);

/// Converts `count` elements at `src` (of `src_dtype`) into `dst` (of
/// `dst_dtype`); both must be convertible floats. Unaligned buffers are fine.
void convert_elements(const void* src, DType src_dtype, void* dst, DType dst_dtype,
                      std::int64_t count);

}  // namespace nss::hf
