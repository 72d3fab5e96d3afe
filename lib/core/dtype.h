// Element types of plain buffers (communication, checkpoints, datasets).
// Libraries below libtorch describe memory as (pointer, element count, DType).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace nss {

enum class DType : std::uint8_t {
  kFloat32,
  kFloat64,
  kBFloat16,
  kFloat16,
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
};

/// Bytes per element.
std::size_t dtype_size(DType dtype);

/// Canonical lower-case name as used in metadata.json ("float32", "bfloat16", ...).
const char* dtype_name(DType dtype);

/// Parses a canonical name; throws UsageError naming the valid names otherwise.
DType parse_dtype(const std::string& name);

/// True for the floating-point types.
bool dtype_is_floating(DType dtype);

}  // namespace nss

namespace nss {

/// The DType of a C++ element type, for typed wrappers over raw-buffer APIs.
template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::kFloat32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::kFloat64;
}
template <>
constexpr DType dtype_of<std::int8_t>() {
  return DType::kInt8;
}
template <>
constexpr DType dtype_of<std::uint8_t>() {
  return DType::kUInt8;
}
template <>
constexpr DType dtype_of<std::int16_t>() {
  return DType::kInt16;
}
template <>
constexpr DType dtype_of<std::uint16_t>() {
  return DType::kUInt16;
}
template <>
constexpr DType dtype_of<std::int32_t>() {
  return DType::kInt32;
}
template <>
constexpr DType dtype_of<std::uint32_t>() {
  return DType::kUInt32;
}
template <>
constexpr DType dtype_of<std::int64_t>() {
  return DType::kInt64;
}
template <>
constexpr DType dtype_of<std::uint64_t>() {
  return DType::kUInt64;
}

}  // namespace nss
