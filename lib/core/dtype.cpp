#include "core/dtype.h"

#include "core/error.h"

namespace nss {
namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  std::size_t size;
  bool floating;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::kFloat32, "float32", 4, true},   {DType::kFloat64, "float64", 8, true},
    {DType::kBFloat16, "bfloat16", 2, true}, {DType::kFloat16, "float16", 2, true},
    {DType::kInt8, "int8", 1, false},        {DType::kUInt8, "uint8", 1, false},
    {DType::kInt16, "int16", 2, false},      {DType::kUInt16, "uint16", 2, false},
    {DType::kInt32, "int32", 4, false},      {DType::kUInt32, "uint32", 4, false},
    {DType::kInt64, "int64", 8, false},      {DType::kUInt64, "uint64", 8, false},
};

const DTypeInfo& info(DType dtype) {
  for (const auto& entry : kDTypes)
    if (entry.dtype == dtype) return entry;
  throw InternalError("core", "unknown DType value " + std::to_string(static_cast<int>(dtype)));
}

}  // namespace

std::size_t dtype_size(DType dtype) {
  return info(dtype).size;
}
const char* dtype_name(DType dtype) {
  return info(dtype).name;
}
bool dtype_is_floating(DType dtype) {
  return info(dtype).floating;
}

DType parse_dtype(const std::string& name) {
  std::string valid;
  for (const auto& entry : kDTypes) {
    if (name == entry.name) return entry.dtype;
    valid += valid.empty() ? entry.name : std::string(", ") + entry.name;
  }
  throw UsageError("core", "unknown dtype '" + name + "'", "use one of: " + valid);
}

}  // namespace nss
