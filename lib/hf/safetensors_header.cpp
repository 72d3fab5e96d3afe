#include "hf/safetensors_header.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace nss::hf {
namespace {

struct DTypeName {
  const char* name;
  DType dtype;
};

constexpr DTypeName kDTypeNames[] = {
    {"F32", DType::kFloat32}, {"F64", DType::kFloat64}, {"BF16", DType::kBFloat16},
    {"F16", DType::kFloat16}, {"I8", DType::kInt8},     {"U8", DType::kUInt8},
    {"I16", DType::kInt16},   {"U16", DType::kUInt16},  {"I32", DType::kInt32},
    {"U32", DType::kUInt32},  {"I64", DType::kInt64},   {"U64", DType::kUInt64},
};

std::string supported_dtypes() {
  std::string list;
  for (const auto& entry : kDTypeNames)
    list += (list.empty() ? "" : ", ") + std::string(entry.name);
  return list;
}

constexpr const char* kRewriteHint =
    "the file is damaged or was not written by a safetensors writer; copy or convert it again "
    "(e.g. save_file from the safetensors package)";

// Every problem with the file is a DataError naming it.
[[noreturn]] void fail(const std::string& path, const std::string& problem,
                       const std::string& hint = kRewriteHint) {
  throw DataError("safetensors", path + ": " + problem, hint);
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::uint64_t read_offset(const nlohmann::json& value, const std::string& path,
                          const std::string& name) {
  if (!value.is_number_unsigned())
    fail(path, "tensor '" + name + "': data_offsets must be two non-negative integers, got " +
                   value.dump());
  return value.get<std::uint64_t>();
}

SafetensorsTensor parse_tensor(const std::string& name, const nlohmann::json& entry,
                               const std::string& path) {
  if (!entry.is_object())
    fail(path, "tensor '" + name + "': expected an object, got " + entry.dump());
  SafetensorsTensor tensor;
  tensor.name = name;

  const auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string())
    fail(path, "tensor '" + name + "': missing or non-string \"dtype\"");
  const std::string dtype_text = dtype->get<std::string>();
  const auto known = std::find_if(std::begin(kDTypeNames), std::end(kDTypeNames),
                                  [&](const DTypeName& d) { return dtype_text == d.name; });
  if (known == std::end(kDTypeNames))
    fail(path, "tensor '" + name + "': unsupported dtype '" + dtype_text + "'",
         "supported dtypes: " + supported_dtypes() + "; convert the weights to F32, BF16 or F16");
  tensor.dtype = known->dtype;

  const auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array())
    fail(path, "tensor '" + name + "': missing or non-array \"shape\"");
  std::int64_t numel = 1;
  for (const auto& dim : *shape) {
    if (!dim.is_number_unsigned() ||
        dim.get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(path, "tensor '" + name + "': shape entries must be non-negative integers, got " +
                     shape->dump());
    const auto extent = static_cast<std::int64_t>(dim.get<std::uint64_t>());
    if (extent != 0 && numel > std::numeric_limits<std::int64_t>::max() / 8 / extent)
      fail(path, "tensor '" + name + "': shape " + shape->dump() + " is too large");
    tensor.shape.push_back(extent);
    numel *= extent;
  }

  const auto offsets = entry.find("data_offsets");
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2)
    fail(path, "tensor '" + name + "': \"data_offsets\" must be [begin, end]");
  tensor.begin = read_offset((*offsets)[0], path, name);
  tensor.end = read_offset((*offsets)[1], path, name);
  if (tensor.end < tensor.begin)
    fail(path, "tensor '" + name + "': data_offsets [" + std::to_string(tensor.begin) + ", " +
                   std::to_string(tensor.end) + "] end before they begin");

  const std::uint64_t element_size = dtype_size(tensor.dtype);
  const std::uint64_t expected = static_cast<std::uint64_t>(numel) * element_size;
  if (tensor.end - tensor.begin != expected)
    fail(path, "tensor '" + name + "': shape " + shape_text(tensor.shape) + " of " + dtype_text +
                   " needs " + std::to_string(expected) + " bytes but data_offsets span " +
                   std::to_string(tensor.end - tensor.begin));
  if (tensor.begin % element_size != 0)
    fail(path, "tensor '" + name + "': data offset " + std::to_string(tensor.begin) +
                   " is not a multiple of its element size " + std::to_string(element_size) +
                   " (unaligned tensor)");
  return tensor;
}

void parse_metadata(const nlohmann::json& entry, const std::string& path,
                    std::map<std::string, std::string>& metadata) {
  if (!entry.is_object()) fail(path, "\"__metadata__\" must be an object of strings");
  for (const auto& [key, value] : entry.items()) {
    if (!value.is_string())
      fail(path, "\"__metadata__\" entry '" + key + "' must be a string, got " + value.dump());
    metadata[key] = value.get<std::string>();
  }
}

// The tensors must tile [0, data_bytes) exactly, like the reference reader demands.
void check_layout(std::vector<SafetensorsTensor>& tensors, std::uint64_t data_bytes,
                  std::uint64_t file_size, std::uint64_t data_start, const std::string& path) {
  std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t covered = 0;
  const SafetensorsTensor* previous = nullptr;
  for (const auto& tensor : tensors) {
    if (tensor.end > data_bytes)
      fail(path, "truncated or offsets out of range: tensor '" + tensor.name +
                     "' ends at data byte " + std::to_string(tensor.end) +
                     " but the file holds only " + std::to_string(data_bytes) +
                     " data bytes (file is " + std::to_string(file_size) +
                     " bytes, needs at least " + std::to_string(data_start + tensor.end) + ")");
    if (tensor.begin < covered)
      fail(path, "tensors '" + previous->name + "' (bytes " + std::to_string(previous->begin) +
                     ".." + std::to_string(previous->end) + ") and '" + tensor.name + "' (bytes " +
                     std::to_string(tensor.begin) + ".." + std::to_string(tensor.end) +
                     ") overlap");
    if (tensor.begin > covered)
      fail(path, "bytes " + std::to_string(covered) + ".." + std::to_string(tensor.begin) +
                     " of the data section belong to no tensor (a hole before '" + tensor.name +
                     "')");
    covered = tensor.end;
    previous = &tensor;
  }
  if (covered != data_bytes)
    fail(path, "the data section has " + std::to_string(data_bytes) +
                   " bytes but the tensors cover " + std::to_string(covered) +
                   " (trailing bytes after the last tensor)");
}

}  // namespace

std::int64_t SafetensorsTensor::numel() const {
  std::int64_t n = 1;
  for (auto extent : shape) n *= extent;
  return n;
}

const char* safetensors_dtype_name(DType dtype) {
  for (const auto& entry : kDTypeNames)
    if (entry.dtype == dtype) return entry.name;
  throw InternalError("safetensors", std::string("no safetensors name for ") + dtype_name(dtype));
}

SafetensorsHeader parse_safetensors_header(const unsigned char* bytes, std::uint64_t file_size,
                                           const std::string& path) {
  if (file_size < 8)
    fail(path, "truncated: " + std::to_string(file_size) +
                   " bytes, but a safetensors file starts with an 8-byte header length");
  std::uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | bytes[i];
  if (header_bytes > kMaxSafetensorsHeaderBytes)
    fail(path, "header length " + std::to_string(header_bytes) + " exceeds the limit of " +
                   std::to_string(kMaxSafetensorsHeaderBytes) + " bytes (not a safetensors file?)");
  if (header_bytes < 2)
    fail(path, "header length " + std::to_string(header_bytes) + " is too short for a JSON object");
  if (8 + header_bytes > file_size)
    fail(path, "truncated: the header claims " + std::to_string(header_bytes) +
                   " bytes of JSON but only " + std::to_string(file_size - 8) + " bytes follow");

  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes + 8, bytes + 8 + header_bytes);
  } catch (const nlohmann::json::parse_error& e) {
    fail(path, std::string("the header is not valid JSON: ") + e.what());
  }
  if (!header.is_object())
    fail(path, "the header must be a JSON object, got " + std::string(header.type_name()));

  SafetensorsHeader result;
  result.data_start = 8 + header_bytes;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__")
      parse_metadata(entry, path, result.metadata);
    else
      result.tensors.push_back(parse_tensor(name, entry, path));
  }
  check_layout(result.tensors, file_size - result.data_start, file_size, result.data_start, path);
  return result;
}

std::string build_safetensors_header(std::vector<SafetensorsTensor>& tensors,
                                     const std::map<std::string, std::string>& metadata) {
  // Wider elements first (stable otherwise), as the reference writer does, so
  // every tensor starts at a multiple of its element size.
  std::stable_sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) {
    return dtype_size(a.dtype) > dtype_size(b.dtype);
  });
  nlohmann::ordered_json header;
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (auto& tensor : tensors) {
    NSS_ASSERT(
        !tensor.name.empty() && tensor.name != "__metadata__" && !header.contains(tensor.name),
        "safetensors", "tensor names must be unique and non-empty: '" + tensor.name + "'");
    for (auto extent : tensor.shape)
      NSS_ASSERT(extent >= 0, "safetensors", "negative extent in tensor '" + tensor.name + "'");
    tensor.begin = offset;
    tensor.end = offset + static_cast<std::uint64_t>(tensor.numel()) * dtype_size(tensor.dtype);
    offset = tensor.end;
    header[tensor.name] = {{"dtype", safetensors_dtype_name(tensor.dtype)},
                           {"shape", tensor.shape},
                           {"data_offsets", {tensor.begin, tensor.end}}};
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string prefix(8, '\0');
  std::uint64_t length = json.size();
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((length >> (8 * i)) & 0xffu);
  return prefix + json;
}

}  // namespace nss::hf
