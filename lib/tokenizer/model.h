// The model of a tokenizer.json: what turns one pre-tokenized piece into
// ids, and ids back into the vocabulary's strings. BPE (bpe_model.h) and
// WordPiece (wordpiece_model.h) implement it; Tokenizer holds either.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace nss::tokenizer {

class Model {
 public:
  virtual ~Model() = default;

  /// The model tokenizer.json's "model" describes. Another type than BPE or
  /// WordPiece is a DataError naming `origin` and the type.
  static std::unique_ptr<const Model> from_json(const nlohmann::json& spec,
                                                const std::string& origin);

  /// Appends the ids of one pre-tokenized piece to `ids`.
  virtual void encode(std::string_view piece, std::vector<int32_t>& ids) const = 0;

  virtual std::optional<int32_t> token_to_id(std::string_view token) const = 0;
  /// The token of `id`, or nullptr when the vocabulary has none.
  virtual const std::string* id_to_token(int32_t id) const = 0;
  /// Largest id + 1 (0 for an empty vocabulary).
  virtual int32_t id_bound() const = 0;
};

}  // namespace nss::tokenizer
