// The post-processor of a tokenizer.json, applied by encode() when special
// tokens are wanted: TemplateProcessing's single-sequence template (Llama 3
// puts <|begin_of_text|> first, BERT's [CLS] $A [SEP]), BertProcessing (the
// same [CLS] and [SEP]), ByteLevel (ids unchanged), or a Sequence of them.
// Other types are a DataError.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nss::tokenizer {

class PostProcessor {
 public:
  /// Builds the post-processor `spec` describes (null: none).
  static PostProcessor from_json(const nlohmann::json& spec, const std::string& origin);

  /// `ids` of one sequence wrapped in the templates' special tokens.
  std::vector<int32_t> apply(std::vector<int32_t> ids) const;

 private:
  // One template: each item is either the sequence (is_sequence) or the ids
  // of a special token.
  struct Item {
    bool is_sequence;
    std::vector<int32_t> ids;
  };
  using Template = std::vector<Item>;

  void add(const nlohmann::json& spec, const std::string& origin);

  std::vector<Template> templates_;
};

}  // namespace nss::tokenizer
