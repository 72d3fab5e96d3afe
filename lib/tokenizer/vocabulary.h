// A model's vocabulary (tokenizer.json's "model.vocab"): token <-> id, the
// ids possibly with gaps. BPE and WordPiece read and look it up alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace nss::tokenizer {

class Vocabulary {
 public:
  /// Reads {"token": id, ...}; a negative id is a DataError naming `origin`.
  static Vocabulary from_json(const nlohmann::json& vocab, const std::string& origin);

  std::optional<int32_t> find(const std::string& token) const {
    const auto it = ids_.find(token);
    return it == ids_.end() ? std::nullopt : std::optional<int32_t>(it->second);
  }
  std::optional<int32_t> find(std::string_view token) const { return find(std::string(token)); }
  /// The token of `id`, or nullptr when the vocabulary has none.
  const std::string* token(int32_t id) const;
  /// Largest id + 1 (0 for an empty vocabulary).
  int32_t id_bound() const { return static_cast<int32_t>(tokens_.size()); }
  /// Every token and its id, in no order.
  const std::unordered_map<std::string, int32_t>& entries() const { return ids_; }

 private:
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<std::string> tokens_;  // by id; ids without a token are empty
  std::vector<bool> has_token_;
};

}  // namespace nss::tokenizer
