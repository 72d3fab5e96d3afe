#include "tokenizer/post_processor.h"

#include "core/error.h"

namespace nss::tokenizer {

PostProcessor PostProcessor::from_json(const nlohmann::json& spec, const std::string& origin) {
  PostProcessor result;
  if (!spec.is_null()) result.add(spec, origin);
  return result;
}

void PostProcessor::add(const nlohmann::json& spec, const std::string& origin) {
  const std::string type = spec.at("type").get<std::string>();
  if (type == "Sequence") {
    for (const auto& inner : spec.at("processors")) add(inner, origin);
  } else if (type == "ByteLevel") {
    // It only trims offsets, which encode() does not return.
  } else if (type == "TemplateProcessing") {
    Template single;
    const auto& special_tokens = spec.at("special_tokens");
    for (const auto& piece : spec.at("single")) {
      if (piece.contains("Sequence")) {
        single.push_back({true, {}});
        continue;
      }
      const std::string name = piece.at("SpecialToken").at("id").get<std::string>();
      if (!special_tokens.contains(name)) {
        throw DataError("tokenizer", origin + ": TemplateProcessing uses special token " + name +
                                         ", which its special_tokens do not define");
      }
      single.push_back({false, special_tokens.at(name).at("ids").get<std::vector<int32_t>>()});
    }
    templates_.push_back(std::move(single));
  } else if (type == "BertProcessing") {
    // [CLS] sequence [SEP]; sep and cls are [token, id] pairs.
    const auto id = [&spec](const char* key) { return spec.at(key).at(1).get<int32_t>(); };
    templates_.push_back({{false, {id("cls")}}, {true, {}}, {false, {id("sep")}}});
  } else {
    throw DataError("tokenizer", origin + ": post-processor type \"" + type + "\" is not supported",
                    "supported: TemplateProcessing, BertProcessing, ByteLevel, Sequence; or "
                    "encode without "
                    "special tokens");
  }
}

std::vector<int32_t> PostProcessor::apply(std::vector<int32_t> ids) const {
  for (const auto& single : templates_) {
    std::vector<int32_t> wrapped;
    wrapped.reserve(ids.size() + 4);
    for (const auto& item : single) {
      const auto& source = item.is_sequence ? ids : item.ids;
      wrapped.insert(wrapped.end(), source.begin(), source.end());
    }
    ids = std::move(wrapped);
  }
  return ids;
}

}  // namespace nss::tokenizer
