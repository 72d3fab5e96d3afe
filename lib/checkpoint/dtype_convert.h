// Element-type conversion of windows of floating-point values for
// consolidation (float32 <-> bfloat16/float16, float64 -> float32, ...).
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace nss::checkpoint {

/// The type a tensor of type `stored` takes in an output of floating type
/// `requested`: integer tensors keep their type, floating tensors take `requested`.
DType output_dtype(DType stored, DType requested);

/// Converts `count` elements from `in` (type `from`) to `out` (type `to`);
/// identical types are copied. Rounds to nearest even.
void convert_elements(DType from, const void* in, DType to, void* out, std::uint64_t count);

/// Elements of `dtype` at index `i` of `data` as float (floating types only).
float element_as_float(DType dtype, const void* data, std::uint64_t i);

/// Stores `value` as element `i` of `data` in `dtype` (floating types only).
void store_float(DType dtype, void* data, std::uint64_t i, float value);

}  // namespace nss::checkpoint
