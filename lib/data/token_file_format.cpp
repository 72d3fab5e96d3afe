#include "data/token_file_format.h"

#include <type_traits>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace nss::data {

nlohmann::json describe_preparation(const TokenFileMetadata& metadata) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  visit_attributes(metadata, [&](const std::string& name, const auto& value) {
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) {
      if (value.empty()) return;
      const bool json_text =
          name == kRecordsSchemaAttribute && nlohmann::ordered_json::accept(value);
      out[name] = json_text ? nlohmann::ordered_json::parse(value) : nlohmann::ordered_json(value);
    } else if (value && name != kMaxTokenIdAttribute && name != kDocumentsAttribute) {
      out[name] = *value;
    }
  });
  return nlohmann::json::parse(out.dump());
}

bool is_token_dtype(DType dtype) {
  return dtype == DType::kUInt16 || dtype == DType::kInt32 || dtype == DType::kUInt32 ||
         dtype == DType::kInt64;
}

const char* token_dtype_names() {
  return "uint16, int32, uint32, int64";
}

DType token_dtype_for_vocab(std::int64_t vocab_size) {
  if (vocab_size <= 0)
    throw InternalError("data",
                        "vocabulary size must be positive, got " + std::to_string(vocab_size));
  if (vocab_size <= (std::int64_t{1} << 16)) return DType::kUInt16;
  if (vocab_size <= (std::int64_t{1} << 32)) return DType::kUInt32;
  return DType::kInt64;
}

}  // namespace nss::data
