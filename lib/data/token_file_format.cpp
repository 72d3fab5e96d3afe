#include "data/token_file_format.h"

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace nss::data {

nlohmann::json describe_preparation(const TokenFileMetadata& metadata) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  const auto add = [&](const char* key, const std::string& value) {
    if (!value.empty()) out[key] = value;
  };
  const DatasetPreparation& p = metadata.preparation;
  add(kTokenizerAttribute, metadata.tokenizer);
  add(kTokenizerSha256Attribute, metadata.tokenizer_sha256);
  add(kFormatAttribute, p.format);
  add(kPromptTemplateAttribute, p.prompt_template);
  add(kGroupByAttribute, p.group_by);
  add(kOrderByAttribute, p.order_by);
  if (!p.records_schema.empty())
    out[kRecordsSchemaAttribute] = nlohmann::ordered_json::accept(p.records_schema)
                                       ? nlohmann::ordered_json::parse(p.records_schema)
                                       : nlohmann::ordered_json(p.records_schema);
  if (metadata.dropped_examples) out[kDroppedExamplesAttribute] = *metadata.dropped_examples;
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
