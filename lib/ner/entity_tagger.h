// A named-entity tagger loaded from a local model directory — a BERT or
// DistilBERT token-classification model as transformers saves it
// (config.json, model.safetensors, tokenizer.json with BERT's WordPiece
// pipeline) — and run on the CPU, never fetched from anywhere. It tags as
// transformers' token-classification pipeline with aggregation_strategy
// "first" does (a word takes its first token's label; B-/I- labels group
// words into entities), and gives PII handling the spans of the groups that
// are personal data (entity_labels.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ner/encoder.h"
#include "pii/text_entity_model.h"
#include "tokenizer/tokenizer.h"

namespace nss::ner {

/// One entity group found in a text.
struct TaggedEntity {
  std::string group;               // the label without B-/I-: "PER"
  std::size_t begin = 0, end = 0;  // bytes of the text, first word's start to last word's end
  double score = 0;                // mean of the words' label probabilities
};

class EntityTagger final : public pii::TextEntityModel {
 public:
  /// Loads the model in `directory`; `wanted` limits the entities find()
  /// reports. A directory that does not exist or is not one: UsageError
  /// (exit 2). A missing, unreadable or unsupported file (pytorch_model.bin
  /// only, sharded weights, a tokenizer that is not BERT's WordPiece, a
  /// config this cannot run): DataError (exit 4) naming it.
  static std::unique_ptr<EntityTagger> load(const std::string& directory,
                                            std::vector<pii::Entity> wanted);

  /// Every entity group (any label but O) in each of `texts`.
  std::vector<std::vector<TaggedEntity>> tag(const std::vector<std::string_view>& texts) const;

  std::vector<std::vector<pii::Span>> find(const std::vector<std::string_view>& cells) override;
  nlohmann::ordered_json describe() const override;

 private:
  EntityTagger(std::string directory, std::string weights_path, tokenizer::Tokenizer tokenizer,
               Encoder encoder)
      : directory_(std::move(directory)),
        weights_path_(std::move(weights_path)),
        tokenizer_(std::move(tokenizer)),
        encoder_(std::move(encoder)) {}

  struct Usage {
    std::int64_t cells = 0, entities = 0;
    double seconds = 0;
  };

  std::string directory_, weights_path_, weights_sha256_;
  tokenizer::Tokenizer tokenizer_;
  Encoder encoder_;
  bool cjk_alone_ = true;
  std::int32_t cls_ = 0, sep_ = 0;
  std::vector<pii::Entity> wanted_;
  Usage usage_;
};

}  // namespace nss::ner
